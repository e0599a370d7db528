package specs

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
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

// MarshalJSON writes the node in foundry-mcp form; empty lists and metadata
// are written as [] and {}, the root's parent as null, and Extra keys after
// the known ones. The internal rollup summary (metadata._rollup, see
// rollup.go) is left out: only EncodeNode (storage) writes it.
func (n Node) MarshalJSON() ([]byte, error) { return n.marshal(false) }

func (n Node) marshal(internal bool) ([]byte, error) {
	skip := ""
	if !internal {
		skip = RollupMetaKey
	}
	// The fields in foundry-mcp's order, written as encoding/json would
	// write them (see jsonenc.go).
	b := make([]byte, 0, 256)
	b = append(b, `{"type":`...)
	b = core.AppendJSONString(b, string(n.Type))
	b = append(b, `,"title":`...)
	b = core.AppendJSONString(b, n.Title)
	b = append(b, `,"status":`...)
	b = core.AppendJSONString(b, string(n.Status))
	b = append(b, `,"parent":`...)
	if n.Parent != "" {
		b = core.AppendJSONString(b, n.Parent)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"children":`...)
	b = n.Children.appendJSON(b)
	b = append(b, `,"total_tasks":`...)
	b = strconv.AppendInt(b, int64(n.TotalTasks), 10)
	b = append(b, `,"completed_tasks":`...)
	b = strconv.AppendInt(b, int64(n.CompletedTasks), 10)
	b = append(b, `,"metadata":`...)
	b, err := appendJSONObject(b, n.Metadata, skip)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"dependencies":{"blocks":`...)
	b = AppendJSONStrings(b, n.Dependencies.Blocks)
	b = append(b, `,"blocked_by":`...)
	b = AppendJSONStrings(b, n.Dependencies.BlockedBy)
	b = append(b, `,"depends":`...)
	b = AppendJSONStrings(b, n.Dependencies.Depends)
	b = append(b, "}}"...)
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

// fromRaw reads every known node key through nodeFieldReaders (a missing
// key is recorded absent, a value of the wrong JSON type malformed) and keeps
// unknown keys, compacted, in Extra.
func (n *Node) fromRaw(raw map[string]json.RawMessage) {
	for _, f := range nodeFieldReaders {
		v, ok := raw[f.key]
		if !ok {
			n.absent |= f.bit
			continue
		}
		if !f.read(n, v) {
			n.malformed |= f.bit
		}
	}
	n.Extra = extraKeys(raw, knownNodeKeys)
}

// nodeFieldReaders says how each known node key is read: read stores the
// value (coerced where possible, see lenientString, lenientStrings,
// lenientInt, lenientDeps) and reports whether it had the right JSON type.
var nodeFieldReaders = []struct {
	bit  fieldSet
	key  string
	read func(n *Node, v json.RawMessage) (good bool)
}{
	{fType, "type", func(n *Node, v json.RawMessage) bool { s, ok := lenientString(v); n.Type = NodeType(s); return ok }},
	{fTitle, "title", func(n *Node, v json.RawMessage) bool { s, ok := lenientString(v); n.Title = s; return ok }},
	{fStatus, "status", func(n *Node, v json.RawMessage) bool { s, ok := lenientString(v); n.Status = Status(s); return ok }},
	{fParent, "parent", readNodeParent},
	{fChildren, "children", func(n *Node, v json.RawMessage) bool {
		l, ok := lenientStrings(v)
		n.Children = ChildListOf(l)
		return ok
	}},
	{fTotal, "total_tasks", func(n *Node, v json.RawMessage) bool { i, ok := lenientInt(v); n.TotalTasks = i; return ok }},
	{fCompleted, "completed_tasks", func(n *Node, v json.RawMessage) bool { i, ok := lenientInt(v); n.CompletedTasks = i; return ok }},
	{fMetadata, "metadata", readNodeMetadata},
	{fDependencies, "dependencies", func(n *Node, v json.RawMessage) bool { d, ok := lenientDeps(v); n.Dependencies = d; return ok }},
}

// readNodeParent reads parent: null is the root (Parent "", well-formed);
// anything else is read as a string.
func readNodeParent(n *Node, v json.RawMessage) bool {
	if isNull(v) {
		return true
	}
	s, good := lenientString(v)
	n.Parent = s
	return good
}

// readNodeMetadata reads metadata: only a JSON object is well-formed; null
// or any other value leaves Metadata nil.
func readNodeMetadata(n *Node, v json.RawMessage) bool {
	var m map[string]any
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		n.Metadata = nil
		return false
	}
	n.Metadata = m
	return true
}

// extraKeys returns the keys of raw that known does not list, each value
// compacted (nil when there are none).
func extraKeys(raw map[string]json.RawMessage, known map[string]bool) map[string]json.RawMessage {
	var extra map[string]json.RawMessage
	for k, v := range raw {
		if !known[k] {
			if extra == nil {
				extra = map[string]json.RawMessage{}
			}
			extra[k] = compactRaw(v)
		}
	}
	return extra
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
		if !(t >= 0 && t <= 1e9) { // also NaN and ±Inf
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
		if e, ok := err.(*core.Error); ok {
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
	buf.WriteByte('{')
	for _, m := range d.headerMembers() {
		if m.skip {
			continue
		}
		if err := writeMember(&buf, buf.Len() == 1, m.key, m.value); err != nil {
			return nil, err
		}
	}
	buf.WriteString(`,"hierarchy":`)
	if err := writeHierarchy(&buf, d.Hierarchy); err != nil {
		return nil, err
	}
	if err := writeMember(&buf, false, "journal", orEmpty(d.Journal)); err != nil {
		return nil, err
	}
	buf.WriteByte('}')
	return appendExtra(buf.Bytes(), d.Extra, knownDocKeys)
}

// docMember is one top-level member of a document's JSON; skip leaves an
// unset optional one out.
type docMember struct {
	key   string
	value any
	skip  bool
}

// headerMembers are the document's members before hierarchy, in foundry-mcp
// order: metadata is {} when nil, current_phase null when empty, version and
// lifecycle skipped when unset.
func (d Document) headerMembers() []docMember {
	meta := d.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	var cp any
	if d.CurrentPhase != "" {
		cp = d.CurrentPhase
	}
	return []docMember{
		{"spec_id", d.SpecID, false}, {"title", d.Title, false}, {"generated", d.Generated, false},
		{"last_updated", d.LastUpdated, false}, {"version", d.Version, d.Version == 0},
		{"lifecycle", d.Lifecycle, d.Lifecycle == ""}, {"metadata", meta, false}, {"status", d.Status, false},
		{"progress_percentage", d.ProgressPercentage, false}, {"current_phase", cp, false},
	}
}

// writeMember appends "key":<v as JSON> to buf, after a comma unless
// first. Errors: json.Marshal's of v.
func writeMember(buf *bytes.Buffer, first bool, key string, v any) error {
	if !first {
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

// writeHierarchy writes nodes as one JSON object, root first, then in
// natural id order (SortIDs); nil nodes are left out.
func writeHierarchy(buf *bytes.Buffer, nodes map[string]*Node) error {
	buf.WriteByte('{')
	first := true
	for _, id := range sortedIDs(nodes) {
		n := nodes[id]
		if n == nil {
			continue
		}
		if err := writeMember(buf, first, id, n); err != nil {
			return err
		}
		first = false
	}
	buf.WriteByte('}')
	return nil
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
	for _, f := range docFieldReaders {
		v, ok := raw[f.key]
		if !ok {
			d.absent |= f.bit
			continue
		}
		if !f.read(d, v) {
			d.malformed |= f.bit
		}
	}
	d.Extra = extraKeys(raw, knownDocKeys)
	return nil
}

// docFieldReaders says how each known document key is read: read stores the
// value (coerced where possible) and reports whether it had the right JSON
// type. A missing key is recorded absent, a false report malformed.
var docFieldReaders = []struct {
	bit  fieldSet
	key  string
	read func(d *Document, v json.RawMessage) (good bool)
}{
	{dSpecID, "spec_id", docString(func(d *Document, s string) { d.SpecID = s })},
	{dTitle, "title", docString(func(d *Document, s string) { d.Title = s })},
	{dGenerated, "generated", docString(func(d *Document, s string) { d.Generated = s })},
	{dLastUpdated, "last_updated", docString(func(d *Document, s string) { d.LastUpdated = s })},
	{dLifecycle, "lifecycle", docString(func(d *Document, s string) { d.Lifecycle = Lifecycle(s) })},
	{dStatus, "status", docString(func(d *Document, s string) { d.Status = Status(s) })},
	{dCurrentPhase, "current_phase", docString(func(d *Document, s string) { d.CurrentPhase = s })},
	{dVersion, "version", func(d *Document, v json.RawMessage) bool { i, ok := lenientInt(v); d.Version = int64(i); return ok }},
	{dProgress, "progress_percentage", readDocProgress},
	{dMetadata, "metadata", readDocMetadata},
	{dHierarchy, "hierarchy", readDocHierarchy},
	{dJournal, "journal", readDocJournal},
}

// docString reads a string key: null is "" and well-formed; other values
// are read by lenientString and handed to set.
func docString(set func(d *Document, s string)) func(*Document, json.RawMessage) bool {
	return func(d *Document, v json.RawMessage) bool {
		if isNull(v) {
			return true
		}
		s, good := lenientString(v)
		set(d, s)
		return good
	}
}

// readDocProgress reads progress_percentage: a JSON number from 0 to 100,
// truncated to an integer; anything else leaves 0 and is malformed.
func readDocProgress(d *Document, v json.RawMessage) bool {
	var f float64
	if json.Unmarshal(v, &f) == nil && !math.IsNaN(f) && f >= 0 && f <= 100 {
		d.ProgressPercentage = int(f)
		return true
	}
	return false
}

// readDocMetadata reads metadata: only a JSON object is well-formed.
func readDocMetadata(d *Document, v json.RawMessage) bool {
	var m map[string]any
	good := json.Unmarshal(v, &m) == nil && m != nil
	d.Metadata = m
	return good
}

// readDocHierarchy reads hierarchy, which must be a JSON object of nodes
// (otherwise Hierarchy stays nil and it is malformed). Each node is read by
// fromRaw under its key as ID; a node value that is not an object becomes an
// empty node with every field absent and malformed, so Validate reports it.
func readDocHierarchy(d *Document, v json.RawMessage) bool {
	var nodes map[string]json.RawMessage
	if json.Unmarshal(v, &nodes) != nil || nodes == nil {
		return false
	}
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
	return true
}

// readDocJournal reads journal, a JSON list of entries: entries that are
// not objects are dropped, and a journal that is not a list or drops an
// entry is malformed.
func readDocJournal(d *Document, v json.RawMessage) bool {
	var items []json.RawMessage
	good := json.Unmarshal(v, &items) == nil
	for _, it := range items {
		var e JournalEntry
		if json.Unmarshal(it, &e) == nil {
			d.Journal = append(d.Journal, e)
		} else {
			good = false
		}
	}
	return good
}

// ParseDocument decodes a spec document leniently (see
// Document.UnmarshalJSON). It returns INVALID_FORMAT when data is not a JSON
// object; anything else (missing fields, wrong types, broken hierarchy) is
// left for Validate and Fix.
func ParseDocument(data []byte) (*Document, error) {
	d := &Document{}
	if err := json.Unmarshal(data, d); err != nil {
		if e, ok := err.(*core.Error); ok {
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
