package specs

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/specd/specd/core/errcode"
)

// fieldSet is a bit set of node or document fields.
type fieldSet uint32

const (
	fType fieldSet = 1 << iota
	fTitle
	fStatus
	fParent
	fChildren
	fTotal
	fCompleted
	fMetadata
	fDependencies
)

// Document-level bits.
const (
	dSpecID fieldSet = 1 << iota
	dTitle
	dGenerated
	dLastUpdated
	dMetadata
	dHierarchy
	dJournal
	dStatus
	dProgress
	dCurrentPhase
	dVersion
	dLifecycle
)

var nodeFieldNames = []struct {
	bit  fieldSet
	name string
}{
	{fType, "type"}, {fTitle, "title"}, {fStatus, "status"}, {fParent, "parent"},
	{fChildren, "children"}, {fTotal, "total_tasks"}, {fCompleted, "completed_tasks"},
	{fMetadata, "metadata"}, {fDependencies, "dependencies"},
}

func (f fieldSet) names() []string {
	var out []string
	for _, nf := range nodeFieldNames {
		if f&nf.bit != 0 {
			out = append(out, nf.name)
		}
	}
	return out
}

// nodeJSON is the serialised shape of a node, in foundry-mcp's field order.
type nodeJSON struct {
	Type           NodeType       `json:"type"`
	Title          string         `json:"title"`
	Status         Status         `json:"status"`
	Parent         *string        `json:"parent"`
	Children       []string       `json:"children"`
	TotalTasks     int            `json:"total_tasks"`
	CompletedTasks int            `json:"completed_tasks"`
	Metadata       map[string]any `json:"metadata"`
	Dependencies   Dependencies   `json:"dependencies"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MarshalJSON writes the node in foundry-mcp form; empty lists and metadata
// are written as [] and {}, the root's parent as null, and Extra keys after
// the known ones. The internal rollup summary (metadata._rollup, see
// rollup.go) is left out: only EncodeNode (storage) writes it.
func (n Node) MarshalJSON() ([]byte, error) { return n.marshal(false) }

func (n Node) marshal(internal bool) ([]byte, error) {
	meta := n.Metadata
	if _, has := meta[RollupMetaKey]; has && !internal {
		meta = make(map[string]any, len(n.Metadata))
		for k, v := range n.Metadata {
			if k != RollupMetaKey {
				meta[k] = v
			}
		}
	}
	j := nodeJSON{
		Type: n.Type, Title: n.Title, Status: n.Status,
		Children: nonNil(n.Children), TotalTasks: n.TotalTasks, CompletedTasks: n.CompletedTasks,
		Metadata: meta,
		Dependencies: Dependencies{
			Blocks: nonNil(n.Dependencies.Blocks), BlockedBy: nonNil(n.Dependencies.BlockedBy), Depends: nonNil(n.Dependencies.Depends),
		},
	}
	if n.Parent != "" {
		p := n.Parent
		j.Parent = &p
	}
	if j.Metadata == nil {
		j.Metadata = map[string]any{}
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return appendExtra(b, n.Extra, knownNodeKeys)
}

var knownNodeKeys = map[string]bool{"type": true, "title": true, "status": true, "parent": true, "children": true,
	"total_tasks": true, "completed_tasks": true, "metadata": true, "dependencies": true}

// appendExtra splices extra keys (sorted, skipping known ones) into a JSON object.
func appendExtra(obj []byte, extra map[string]json.RawMessage, known map[string]bool) ([]byte, error) {
	if len(extra) == 0 {
		return obj, nil
	}
	var buf bytes.Buffer
	buf.Write(obj[:len(obj)-1])
	for _, k := range sortedKeys(extra) {
		if known[k] || !json.Valid(extra[k]) {
			continue
		}
		kb, _ := json.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a node leniently: missing fields stay zero and are
// recorded as absent; values of the wrong JSON type are coerced where
// possible (numbers in strings, a bare string for a list, a legacy list of
// dependencies meaning blocked_by) and recorded as malformed. It fails, with
// INVALID_FORMAT, only when data is not a JSON object; unknown keys go to
// Extra. The node's ID is
// not part of its JSON.
func (n *Node) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return newErr(errcode.InvalidFormat, "node", "a node must be a JSON object")
	}
	id := n.ID
	*n = Node{ID: id}
	n.fromRaw(raw)
	return nil
}

// compactRaw returns v without insignificant whitespace.
func compactRaw(v json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return append(json.RawMessage(nil), v...)
	}
	return buf.Bytes()
}

func (n *Node) fromRaw(raw map[string]json.RawMessage) {
	get := func(bit fieldSet, key string) (json.RawMessage, bool) {
		v, ok := raw[key]
		if !ok {
			n.absent |= bit
			return nil, false
		}
		return v, true
	}
	if v, ok := get(fType, "type"); ok {
		s, good := lenientString(v)
		n.Type = NodeType(s)
		if !good {
			n.malformed |= fType
		}
	}
	if v, ok := get(fTitle, "title"); ok {
		s, good := lenientString(v)
		n.Title = s
		if !good {
			n.malformed |= fTitle
		}
	}
	if v, ok := get(fStatus, "status"); ok {
		s, good := lenientString(v)
		n.Status = Status(s)
		if !good {
			n.malformed |= fStatus
		}
	}
	if v, ok := get(fParent, "parent"); ok {
		if !isNull(v) {
			s, good := lenientString(v)
			n.Parent = s
			if !good {
				n.malformed |= fParent
			}
		}
	}
	if v, ok := get(fChildren, "children"); ok {
		list, good := lenientStrings(v)
		n.Children = list
		if !good {
			n.malformed |= fChildren
		}
	}
	if v, ok := get(fTotal, "total_tasks"); ok {
		i, good := lenientInt(v)
		n.TotalTasks = i
		if !good {
			n.malformed |= fTotal
		}
	}
	if v, ok := get(fCompleted, "completed_tasks"); ok {
		i, good := lenientInt(v)
		n.CompletedTasks = i
		if !good {
			n.malformed |= fCompleted
		}
	}
	if v, ok := get(fMetadata, "metadata"); ok {
		var m map[string]any
		if err := json.Unmarshal(v, &m); err != nil || (m == nil && !isNull(v)) {
			n.malformed |= fMetadata
			m = nil
		}
		if isNull(v) {
			n.malformed |= fMetadata
		}
		n.Metadata = m
	}
	if v, ok := get(fDependencies, "dependencies"); ok {
		d, good := lenientDeps(v)
		n.Dependencies = d
		if !good {
			n.malformed |= fDependencies
		}
	}
	for k, v := range raw {
		if !knownNodeKeys[k] {
			if n.Extra == nil {
				n.Extra = map[string]json.RawMessage{}
			}
			n.Extra[k] = compactRaw(v)
		}
	}
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// lenientString returns a string value; numbers and bools are rendered as
// text and null is "" (both reported as not good).
func lenientString(v json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s, true
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return "", false
	}
	switch t := x.(type) {
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), false
	case bool:
		return strconv.FormatBool(t), false
	}
	return "", false
}

func lenientStrings(v json.RawMessage) ([]string, bool) {
	var list []any
	if err := json.Unmarshal(v, &list); err != nil {
		if s, ok := lenientString(v); ok && s != "" {
			return []string{s}, false
		}
		return nil, false
	}
	good := !isNull(v)
	out := make([]string, 0, len(list))
	for _, x := range list {
		switch t := x.(type) {
		case string:
			out = append(out, t)
		case float64:
			out = append(out, strconv.FormatFloat(t, 'f', -1, 64))
			good = false
		default:
			good = false
		}
	}
	return out, good
}

func lenientInt(v json.RawMessage) (int, bool) {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return 0, false
	}
	switch t := x.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 || t > 1e9 {
			return 0, false
		}
		return int(t), t == math.Trunc(t)
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || i < 0 {
			return 0, false
		}
		return i, false
	}
	return 0, false
}

func lenientDeps(v json.RawMessage) (Dependencies, bool) {
	var d Dependencies
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil || raw == nil {
		// Legacy: a bare list of prerequisite ids.
		if list, ok := lenientStrings(v); len(list) > 0 {
			_ = ok
			d.BlockedBy = list
		}
		return d, false
	}
	good := true
	for _, f := range []struct {
		key string
		dst *[]string
	}{{"blocks", &d.Blocks}, {"blocked_by", &d.BlockedBy}, {"depends", &d.Depends}} {
		x, ok := raw[f.key]
		if !ok {
			good = false
			continue
		}
		list, ok := lenientStrings(x)
		if !ok {
			good = false
		}
		*f.dst = list
	}
	return d, good
}

// EncodeNode returns the JSON the store keeps under a node's key, with the
// internal rollup summary (which MarshalJSON leaves out). It fails
// only when metadata holds a value encoding/json cannot encode (never for
// values set through SetMeta or read from JSON).
func EncodeNode(n *Node) ([]byte, error) { return n.marshal(true) }

// DecodeNode decodes a node stored under id (lenient, see Node.UnmarshalJSON).
// It returns INVALID_FORMAT when data is not a JSON object.
func DecodeNode(id string, data []byte) (*Node, error) {
	n := &Node{ID: id}
	if err := json.Unmarshal(data, n); err != nil {
		if e, ok := err.(*Error); ok {
			return nil, e
		}
		return nil, newErr(errcode.InvalidFormat, "node", "node %s is not valid JSON", id)
	}
	return n, nil
}

// JournalEntry is one journal record. Seq is assigned by the store (0 until
// then, and omitted from JSON when 0 so foundry journals round-trip).
type JournalEntry struct {
	Seq       uint64         `json:"seq,omitempty"`
	Timestamp string         `json:"timestamp"`
	EntryType string         `json:"entry_type"`
	Title     string         `json:"title"`
	Content   string         `json:"content"`
	Author    string         `json:"author"`
	TaskID    string         `json:"task_id,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// UnmarshalJSON reads a journal entry leniently (wrong types become zero
// values); it fails, with INVALID_FORMAT, only when data is not an object.
func (e *JournalEntry) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return newErr(errcode.InvalidFormat, "journal", "a journal entry must be a JSON object")
	}
	*e = JournalEntry{}
	str := func(k string) string {
		if v, ok := raw[k]; ok {
			s, _ := lenientString(v)
			return s
		}
		return ""
	}
	if v, ok := raw["seq"]; ok {
		i, _ := lenientInt(v)
		e.Seq = uint64(i)
	}
	e.Timestamp, e.EntryType, e.Title = str("timestamp"), str("entry_type"), str("title")
	e.Content, e.Author, e.TaskID = str("content"), str("author"), str("task_id")
	if v, ok := raw["metadata"]; ok {
		var m map[string]any
		if json.Unmarshal(v, &m) == nil {
			e.Metadata = m
		}
	}
	return nil
}

// Header is a spec's top-level data without nodes and journal: what the store
// keeps under the spec's header key. The computed fields (Status,
// ProgressPercentage, CurrentPhase, TotalTasks, CompletedTasks) are
// maintained by the rollup functions. Extra keeps unknown top-level document
// keys.
type Header struct {
	SpecID             string                     `json:"spec_id"`
	Title              string                     `json:"title"`
	Generated          string                     `json:"generated"`
	LastUpdated        string                     `json:"last_updated"`
	Version            int64                      `json:"version"`
	Lifecycle          Lifecycle                  `json:"lifecycle,omitempty"`
	Metadata           map[string]any             `json:"metadata"`
	Status             Status                     `json:"status"`
	ProgressPercentage int                        `json:"progress_percentage"`
	CurrentPhase       string                     `json:"current_phase,omitempty"`
	TotalTasks         int                        `json:"total_tasks"`
	CompletedTasks     int                        `json:"completed_tasks"`
	Extra              map[string]json.RawMessage `json:"extra,omitempty"`
}

// Clone returns a deep copy of h.
func (h Header) Clone() Header {
	c := h
	c.Metadata = cloneMap(h.Metadata)
	if h.Extra != nil {
		c.Extra = make(map[string]json.RawMessage, len(h.Extra))
		for k, v := range h.Extra {
			c.Extra[k] = append(json.RawMessage(nil), v...)
		}
	}
	return c
}

// Document is the full JSON form of a spec (spec get, import, export),
// compatible with foundry-mcp spec files. Hierarchy maps node id → node; a
// node's ID field equals its key. Extra keeps unknown top-level keys.
type Document struct {
	SpecID             string
	Title              string
	Generated          string
	LastUpdated        string
	Version            int64
	Lifecycle          Lifecycle
	Metadata           map[string]any
	Status             Status
	ProgressPercentage int
	CurrentPhase       string
	Hierarchy          map[string]*Node
	Journal            []JournalEntry
	Extra              map[string]json.RawMessage

	absent    fieldSet
	malformed fieldSet
}

var knownDocKeys = map[string]bool{"spec_id": true, "title": true, "generated": true, "last_updated": true,
	"version": true, "lifecycle": true, "metadata": true, "status": true, "progress_percentage": true,
	"current_phase": true, "hierarchy": true, "journal": true}

// MarshalJSON writes the document with keys in foundry-mcp order; hierarchy
// nodes are written root first, then in natural id order; version and
// lifecycle are omitted when unset; current_phase is null when empty.
func (d Document) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	w := func(key string, v any) error {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(key)
		buf.Write(kb)
		buf.WriteByte(':')
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(b)
		return nil
	}
	buf.WriteByte('{')
	meta := d.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	var cp any
	if d.CurrentPhase != "" {
		cp = d.CurrentPhase
	}
	fields := []struct {
		k    string
		v    any
		skip bool
	}{
		{"spec_id", d.SpecID, false}, {"title", d.Title, false}, {"generated", d.Generated, false},
		{"last_updated", d.LastUpdated, false}, {"version", d.Version, d.Version == 0},
		{"lifecycle", d.Lifecycle, d.Lifecycle == ""}, {"metadata", meta, false}, {"status", d.Status, false},
		{"progress_percentage", d.ProgressPercentage, false}, {"current_phase", cp, false},
	}
	for _, f := range fields {
		if f.skip {
			continue
		}
		if err := w(f.k, f.v); err != nil {
			return nil, err
		}
	}
	buf.WriteString(`,"hierarchy":{`)
	ids := make([]string, 0, len(d.Hierarchy))
	for id := range d.Hierarchy {
		ids = append(ids, id)
	}
	SortIDs(ids)
	first := true
	for _, id := range ids {
		n := d.Hierarchy[id]
		if n == nil {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(id)
		buf.Write(kb)
		buf.WriteByte(':')
		b, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	buf.WriteByte('}')
	j := d.Journal
	if j == nil {
		j = []JournalEntry{}
	}
	if err := w("journal", j); err != nil {
		return nil, err
	}
	buf.WriteByte('}')
	return appendExtra(buf.Bytes(), d.Extra, knownDocKeys)
}

// UnmarshalJSON reads a document leniently, like Node.UnmarshalJSON: it
// fails (INVALID_FORMAT) only when data is not a JSON object; missing or mistyped fields are
// recorded for Validate. Node values that are not objects become empty nodes
// with every field marked malformed.
func (d *Document) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return newErr(errcode.InvalidFormat, "spec", "a spec document must be a JSON object")
	}
	*d = Document{}
	strField := func(bit fieldSet, key string) string {
		v, ok := raw[key]
		if !ok {
			d.absent |= bit
			return ""
		}
		if isNull(v) {
			return ""
		}
		s, good := lenientString(v)
		if !good {
			d.malformed |= bit
		}
		return s
	}
	d.SpecID = strField(dSpecID, "spec_id")
	d.Title = strField(dTitle, "title")
	d.Generated = strField(dGenerated, "generated")
	d.LastUpdated = strField(dLastUpdated, "last_updated")
	d.Lifecycle = Lifecycle(strField(dLifecycle, "lifecycle"))
	d.Status = Status(strField(dStatus, "status"))
	d.CurrentPhase = strField(dCurrentPhase, "current_phase")
	if v, ok := raw["version"]; ok {
		i, good := lenientInt(v)
		d.Version = int64(i)
		if !good {
			d.malformed |= dVersion
		}
	} else {
		d.absent |= dVersion
	}
	if v, ok := raw["progress_percentage"]; ok {
		var f float64
		if json.Unmarshal(v, &f) == nil && !math.IsNaN(f) && f >= 0 && f <= 100 {
			d.ProgressPercentage = int(f)
		} else {
			d.malformed |= dProgress
		}
	} else {
		d.absent |= dProgress
	}
	if v, ok := raw["metadata"]; ok {
		var m map[string]any
		if json.Unmarshal(v, &m) != nil || m == nil {
			d.malformed |= dMetadata
		}
		d.Metadata = m
	} else {
		d.absent |= dMetadata
	}
	if v, ok := raw["hierarchy"]; ok {
		var nodes map[string]json.RawMessage
		if json.Unmarshal(v, &nodes) != nil || nodes == nil {
			d.malformed |= dHierarchy
		} else {
			d.Hierarchy = make(map[string]*Node, len(nodes))
			for id, nv := range nodes {
				n := &Node{ID: id}
				var nraw map[string]json.RawMessage
				if json.Unmarshal(nv, &nraw) != nil || nraw == nil {
					n.absent = fType | fTitle | fStatus | fParent | fChildren | fTotal | fCompleted | fMetadata | fDependencies
					n.malformed = n.absent
				} else {
					n.fromRaw(nraw)
				}
				d.Hierarchy[id] = n
			}
		}
	} else {
		d.absent |= dHierarchy
	}
	if v, ok := raw["journal"]; ok {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			d.malformed |= dJournal
		}
		for _, it := range items {
			var e JournalEntry
			if json.Unmarshal(it, &e) == nil {
				d.Journal = append(d.Journal, e)
			} else {
				d.malformed |= dJournal
			}
		}
	} else {
		d.absent |= dJournal
	}
	for k, v := range raw {
		if !knownDocKeys[k] {
			if d.Extra == nil {
				d.Extra = map[string]json.RawMessage{}
			}
			d.Extra[k] = compactRaw(v)
		}
	}
	return nil
}

// ParseDocument decodes a spec document leniently (see
// Document.UnmarshalJSON). It returns INVALID_FORMAT when data is not a JSON
// object; anything else (missing fields, wrong types, broken hierarchy) is
// left for Validate and Fix.
func ParseDocument(data []byte) (*Document, error) {
	d := &Document{}
	if err := json.Unmarshal(data, d); err != nil {
		if e, ok := err.(*Error); ok {
			return nil, e
		}
		return nil, newErr(errcode.InvalidFormat, "spec", "the spec is not valid JSON: %s", truncateForDetails(err.Error()))
	}
	return d, nil
}

// Clone returns a deep copy of the document.
func (d *Document) Clone() *Document {
	c := *d
	c.Metadata = cloneMap(d.Metadata)
	if d.Hierarchy != nil {
		c.Hierarchy = make(map[string]*Node, len(d.Hierarchy))
		for id, n := range d.Hierarchy {
			c.Hierarchy[id] = n.Clone()
		}
	}
	if d.Journal != nil {
		c.Journal = make([]JournalEntry, len(d.Journal))
		for i, e := range d.Journal {
			e.Metadata = cloneMap(e.Metadata)
			c.Journal[i] = e
		}
	}
	if d.Extra != nil {
		c.Extra = make(map[string]json.RawMessage, len(d.Extra))
		for k, v := range d.Extra {
			c.Extra[k] = append(json.RawMessage(nil), v...)
		}
	}
	return &c
}
