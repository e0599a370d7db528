package specs

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
	"time"
)

// RootID is the id of every spec's root node.
const RootID = "spec-root"

// NodeType is the type of a hierarchy node.
type NodeType string

// Node types.
const (
	TypeSpec     NodeType = "spec"
	TypePhase    NodeType = "phase"
	TypeGroup    NodeType = "group"
	TypeTask     NodeType = "task"
	TypeSubtask  NodeType = "subtask"
	TypeVerify   NodeType = "verify"
	TypeResearch NodeType = "research"
)

// NodeTypes lists every node type, for schemas.
func NodeTypes() []NodeType {
	return []NodeType{TypeSpec, TypePhase, TypeGroup, TypeTask, TypeSubtask, TypeVerify, TypeResearch}
}

// Valid reports whether t is a known node type.
func (t NodeType) Valid() bool {
	switch t {
	case TypeSpec, TypePhase, TypeGroup, TypeTask, TypeSubtask, TypeVerify, TypeResearch:
		return true
	}
	return false
}

// Counted reports whether a leaf of this type counts as one unit of work in
// rollups (task, subtask, verify).
func (t NodeType) Counted() bool {
	return t == TypeTask || t == TypeSubtask || t == TypeVerify
}

// Status is a node status.
type Status string

// Node statuses.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
	StatusBlocked    Status = "blocked"
	StatusFailed     Status = "failed"
	StatusArchived   Status = "archived"
)

// Statuses lists every status, for schemas.
func Statuses() []Status {
	return []Status{StatusPending, StatusInProgress, StatusCompleted, StatusBlocked, StatusFailed, StatusArchived}
}

// Valid reports whether st is a known status.
func (st Status) Valid() bool {
	switch st {
	case StatusPending, StatusInProgress, StatusCompleted, StatusBlocked, StatusFailed, StatusArchived:
		return true
	}
	return false
}

// Lifecycle is a spec's lifecycle folder/state.
type Lifecycle string

// Lifecycle states.
const (
	LifecyclePending   Lifecycle = "pending"
	LifecycleActive    Lifecycle = "active"
	LifecycleCompleted Lifecycle = "completed"
	LifecycleArchived  Lifecycle = "archived"
)

// Lifecycles lists the lifecycle folders in their canonical order.
func Lifecycles() []Lifecycle {
	return []Lifecycle{LifecyclePending, LifecycleActive, LifecycleCompleted, LifecycleArchived}
}

// Valid reports whether l is a known lifecycle state.
func (l Lifecycle) Valid() bool {
	switch l {
	case LifecyclePending, LifecycleActive, LifecycleCompleted, LifecycleArchived:
		return true
	}
	return false
}

// Enumerations of metadata values, exported for schemas.
var (
	TaskCategories      = []string{"investigation", "implementation", "refactoring", "decision", "research"}
	Complexities        = []string{"low", "medium", "high"}
	VerificationTypes   = []string{"run-tests", "fidelity", "manual"}
	VerificationResults = []string{"PASSED", "FAILED", "PARTIAL"}
	BlockerTypes        = []string{"dependency", "technical", "resource", "decision"}
	BlockingModes       = []string{"none", "soft", "hard"}
	RequirementTypes    = []string{"acceptance", "technical", "constraint"}
	JournalEntryTypes   = []string{"status_change", "deviation", "blocker", "decision", "note"}
	RiskLevels          = []string{"low", "medium", "high"}
	DependencyTypes     = []string{"blocks", "blocked_by", "depends"}
)

// Synonyms of the enumerations' values: the words agents use for them,
// mapped to the declared value, one table beside each enumeration (the
// three scales low/medium/high share LevelSynonyms). Keys are lower case
// with '_' for '-' and ' '. A refused value that is a synonym is offered its
// value first (recovery.fuzzy_matches); the value is never taken silently.
var (
	TaskCategorySynonyms = map[string]string{
		"feature": "implementation", "coding": "implementation", "code": "implementation", "build": "implementation", "bugfix": "implementation", "fix": "implementation",
		"refactor": "refactoring", "cleanup": "refactoring", "restructure": "refactoring",
		"investigate": "investigation", "spike": "investigation", "explore": "investigation", "analysis": "investigation",
		"design": "decision", "choice": "decision", "adr": "decision",
		"study": "research", "reading": "research",
	}
	LevelSynonyms = map[string]string{
		"trivial": "low", "easy": "low", "simple": "low", "minor": "low", "small": "low", "unlikely": "low", "rare": "low", "minimal": "low",
		"moderate": "medium", "normal": "medium", "average": "medium", "med": "medium", "mid": "medium", "possible": "medium",
		"hard": "high", "difficult": "high", "complex": "high", "severe": "high", "critical": "high", "major": "high", "large": "high", "likely": "high", "certain": "high",
	}
	VerificationTypeSynonyms = map[string]string{
		"tests": "run-tests", "test": "run-tests", "run_tests": "run-tests", "automated": "run-tests", "unit_tests": "run-tests",
		"review": "fidelity", "spec_review": "fidelity", "conformance": "fidelity",
		"human": "manual", "by_hand": "manual", "manual_check": "manual",
	}
	VerificationResultSynonyms = map[string]string{
		"pass": "PASSED", "ok": "PASSED", "success": "PASSED", "succeeded": "PASSED", "green": "PASSED",
		"fail": "FAILED", "failure": "FAILED", "error": "FAILED", "red": "FAILED",
		"partially": "PARTIAL", "mixed": "PARTIAL", "some": "PARTIAL",
	}
	BlockerTypeSynonyms = map[string]string{
		"dep": "dependency", "depends": "dependency", "blocked_by": "dependency", "upstream": "dependency",
		"tech": "technical", "bug": "technical", "error": "technical",
		"people": "resource", "time": "resource", "capacity": "resource", "access": "resource",
		"question": "decision", "approval": "decision", "design": "decision",
	}
	BlockingModeSynonyms = map[string]string{
		"off": "none", "never": "none", "no": "none",
		"warn": "soft", "advisory": "soft",
		"strict": "hard", "block": "hard", "blocking": "hard", "required": "hard",
	}
	RequirementTypeSynonyms = map[string]string{
		"acceptance_criteria": "acceptance", "ac": "acceptance", "criterion": "acceptance", "criteria": "acceptance",
		"tech": "technical", "implementation": "technical",
		"limit": "constraint", "restriction": "constraint",
	}
	JournalEntryTypeSynonyms = map[string]string{
		"status": "status_change", "state_change": "status_change", "transition": "status_change",
		"change": "deviation", "departure": "deviation", "divergence": "deviation",
		"issue": "blocker", "problem": "blocker", "blocked": "blocker", "impediment": "blocker",
		"choice": "decision", "decided": "decision", "adr": "decision",
		"comment": "note", "info": "note", "log": "note", "memo": "note",
	}
	DependencyTypeSynonyms = map[string]string{
		"block": "blocks", "blocking": "blocks", "before": "blocks",
		"requires": "blocked_by", "needs": "blocked_by", "after": "blocked_by", "waits_for": "blocked_by",
		"depends_on": "depends", "related": "depends", "informational": "depends",
	}
	// LifecycleSynonyms are the words for the lifecycle folders (Lifecycles).
	LifecycleSynonyms = map[string]string{
		"new": "pending", "draft": "pending", "planned": "pending", "backlog": "pending", "todo": "pending",
		"in_progress": "active", "started": "active", "current": "active", "open": "active", "wip": "active",
		"done": "completed", "finished": "completed", "complete": "completed", "closed": "completed",
		"archive": "archived", "abandoned": "archived", "dropped": "archived", "shelved": "archived", "cancelled": "archived", "canceled": "archived",
	}
	// StatusSynonyms are the words for the task statuses a caller sets.
	StatusSynonyms = map[string]string{
		"done": "completed", "finished": "completed", "complete": "completed", "closed": "completed", "resolved": "completed", "success": "completed",
		"todo": "pending", "to_do": "pending", "open": "pending", "new": "pending", "not_started": "pending", "ready": "pending", "queued": "pending",
		"wip": "in_progress", "started": "in_progress", "doing": "in_progress", "active": "in_progress", "working": "in_progress", "ongoing": "in_progress", "inprogress": "in_progress", "progress": "in_progress",
		"stuck": "blocked", "waiting": "blocked", "on_hold": "blocked", "held": "blocked",
		"error": "failed", "errored": "failed", "broken": "failed", "failure": "failed",
	}
)

// FormatTime renders t as UTC RFC 3339 with a Z suffix (second precision).
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ParseTime parses an RFC 3339 timestamp (fractional seconds allowed) and a
// few lenient legacy layouts (no zone = UTC, space instead of T).
func ParseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// Dependencies are a node's edges. BlockedBy are hard prerequisites, Blocks is
// the reverse edge (always kept in sync by mutations), Depends is
// informational and never blocks.
type Dependencies struct {
	Blocks    []string `json:"blocks"`
	BlockedBy []string `json:"blocked_by"`
	Depends   []string `json:"depends"`
}

func (d Dependencies) clone() Dependencies {
	return Dependencies{Blocks: cloneStrings(d.Blocks), BlockedBy: cloneStrings(d.BlockedBy), Depends: cloneStrings(d.Depends)}
}

// Node is one hierarchy node. ID is the node's key in the hierarchy map and is
// not part of the node's own JSON object. Metadata holds JSON-compatible
// values only (string, float64, bool, nil, []any, map[string]any); the typed
// accessors read and write the known fields, and unknown keys round-trip.
// Extra keeps unknown node-level JSON keys so that foreign documents
// round-trip.
//
// Nodes obtained from [Spec.Node] or a [NodeSource] are shared and must not be
// mutated; use [Spec.Edit] to get a private copy.
type Node struct {
	ID             string
	Type           NodeType
	Title          string
	Status         Status
	Parent         string // "" for the root (JSON null)
	Children       ChildList
	TotalTasks     int
	CompletedTasks int
	Metadata       map[string]any
	Dependencies   Dependencies
	Extra          map[string]json.RawMessage

	// absent and malformed record, for a node parsed from JSON, which fields
	// were missing or had the wrong JSON type (the parsed value is then the
	// zero value or a best-effort coercion). Validation reports them.
	absent    fieldSet
	malformed fieldSet

	// nums memoises the numbers of the ids in Children for NewNodeID; it
	// answers only while it describes this very Children list (see
	// childNumbers), so an edit of Children never needs to clear it.
	nums *childNumbers
}

// Clone returns a deep copy of n (nil for nil), except that the copy
// shares two values that never change in place: its Children, a ChildList
// (and so the memo of its numbers), and its rollup summary
// (metadata[RollupMetaKey]), which the rollups only ever replace or remove
// whole (setRollupMeta), so an edit of a parent (every task add edits its
// phase and the root) need not copy it.
func (n *Node) Clone() *Node {
	if n == nil {
		return nil
	}
	c := *n
	// c.Children is n's: a ChildList never changes, and so neither does
	// the memo of its numbers.
	c.Metadata = cloneNodeMeta(n.Metadata)
	c.Dependencies = n.Dependencies.clone()
	if n.Extra != nil {
		c.Extra = make(map[string]json.RawMessage, len(n.Extra))
		for k, v := range n.Extra {
			c.Extra[k] = append(json.RawMessage(nil), v...)
		}
	}
	return &c
}

// IsLeaf reports whether n has no children.
func (n *Node) IsLeaf() bool { return n.Children.Len() == 0 }

// IsWorkLeaf reports whether n is a leaf task, subtask or verify node: the
// nodes that count in rollups and that transitions apply to.
func (n *Node) IsWorkLeaf() bool { return n.IsLeaf() && n.Type.Counted() }

// Meta returns the raw metadata value for key.
func (n *Node) Meta(key string) (any, bool) {
	v, ok := n.Metadata[key]
	return v, ok
}

// MetaString returns metadata[key] when it is a string, else "".
func (n *Node) MetaString(key string) string {
	s, _ := n.Metadata[key].(string)
	return s
}

// MetaFloat returns metadata[key] as a number (numeric strings accepted).
func (n *Node) MetaFloat(key string) (float64, bool) { return toFloat(n.Metadata[key]) }

// MetaInt returns metadata[key] as an integer (0, false when absent or not numeric).
func (n *Node) MetaInt(key string) (int, bool) {
	f, ok := toFloat(n.Metadata[key])
	if !ok {
		return 0, false
	}
	return int(f), true
}

// MetaBool returns metadata[key] when it is a bool.
func (n *Node) MetaBool(key string) bool {
	b, _ := n.Metadata[key].(bool)
	return b
}

// MetaStrings returns metadata[key] as a list of strings (non-string items
// are skipped; a single string is a one-item list).
func (n *Node) MetaStrings(key string) []string { return toStrings(n.Metadata[key]) }

// MetaStrings is the spec's metadata[key] as a list of strings (a string is
// a list of one; non-strings are skipped), as Node.MetaStrings.
func (h Header) MetaStrings(key string) []string { return toStrings(h.Metadata[key]) }

// SetMeta sets metadata[key] to a JSON-normalised copy of value; a nil value
// deletes the key.
func (n *Node) SetMeta(key string, value any) {
	if value == nil {
		delete(n.Metadata, key)
		return
	}
	if n.Metadata == nil {
		n.Metadata = map[string]any{}
	}
	n.Metadata[key] = normalizeJSON(value)
}

// DeleteMeta removes metadata keys.
func (n *Node) DeleteMeta(keys ...string) {
	for _, k := range keys {
		delete(n.Metadata, k)
	}
}

// Typed accessors for well-known metadata fields.

// Description returns metadata.description.
func (n *Node) Description() string { return n.MetaString("description") }

// FilePath returns metadata.file_path.
func (n *Node) FilePath() string { return n.MetaString("file_path") }

// TaskCategory returns metadata.task_category.
func (n *Node) TaskCategory() string { return n.MetaString("task_category") }

// VerificationType returns metadata.verification_type.
func (n *Node) VerificationType() string { return n.MetaString("verification_type") }

// BlockingMode returns metadata.blocking_mode for research nodes, defaulting to "soft".
func (n *Node) BlockingMode() string {
	if m := n.MetaString("blocking_mode"); m != "" {
		return m
	}
	return "soft"
}

// StartedBy returns metadata.started_by (the session that started the task).
func (n *Node) StartedBy() string { return n.MetaString("started_by") }

// NeedsJournaling returns metadata.needs_journaling.
func (n *Node) NeedsJournaling() bool { return n.MetaBool("needs_journaling") }

// Requirement is one entry of a task's metadata.requirements.
type Requirement struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Text string `json:"text"`
}

// Requirements returns metadata.requirements (malformed items are skipped).
func (n *Node) Requirements() []Requirement {
	var out []Requirement
	list, _ := n.Metadata["requirements"].([]any)
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		r := Requirement{}
		r.ID, _ = m["id"].(string)
		r.Type, _ = m["type"].(string)
		r.Text, _ = m["text"].(string)
		out = append(out, r)
	}
	return out
}

// Risk is one entry of the spec's metadata.risks.
type Risk struct {
	Description string `json:"description"`
	Likelihood  string `json:"likelihood"`
	Impact      string `json:"impact"`
	Mitigation  string `json:"mitigation"`
}

// Revision is one entry of the spec's metadata.revision_history.
type Revision struct {
	Version   string `json:"version"`
	Date      string `json:"date"`
	Changelog string `json:"changelog"`
	Author    string `json:"author"`
}

// ---- JSON-value helpers ----

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append(make([]string, 0, len(s)), s...)
}

// cloneMap deep-copies a JSON-like map.
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

// cloneNodeMeta is cloneMap of a node's metadata, the rollup summary
// shared (see Node.Clone).
func cloneNodeMeta(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != RollupMetaKey {
			v = cloneValue(v)
		}
		out[k] = v
	}
	return out
}

func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return cloneMap(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = cloneValue(x)
		}
		return out
	case []string:
		return cloneStrings(t)
	case json.RawMessage:
		return append(json.RawMessage(nil), t...)
	default:
		return v
	}
}

// normalizeJSON converts a Go value into the JSON-native representation
// (what json.Unmarshal into any produces), so that values set in code and
// values read from JSON compare equal.
func normalizeJSON(v any) any {
	switch t := v.(type) {
	case nil, string, bool, float64:
		return t
	case []string:
		return normalizeList(t)
	case []any:
		return normalizeList(t)
	case map[string]any:
		return normalizeMap(t)
	case map[string]string:
		return normalizeMap(t)
	}
	if f, ok := goNumber(v); ok {
		return f
	}
	return jsonRoundTrip(v)
}

// normalizeList is normalizeJSON of a list: a new []any of its normalized
// items.
func normalizeList[T any](list []T) []any {
	out := make([]any, len(list))
	for i, x := range list {
		out[i] = normalizeJSON(x)
	}
	return out
}

// normalizeMap is normalizeJSON of a string-keyed map: a new map of its
// normalized values.
func normalizeMap[T any](m map[string]T) map[string]any {
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = normalizeJSON(x)
	}
	return out
}

// goNumber converts the Go number types code passes (int, int64, int32,
// uint64, float32) to float64; ok is false for anything else.
func goNumber(v any) (float64, bool) {
	switch t := v.(type) {
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case int32:
		return float64(t), true
	case uint64:
		return float64(t), true
	case float32:
		return float64(t), true
	}
	return 0, false
}

// jsonRoundTrip is v marshalled to JSON and unmarshalled into any; nil when
// either step fails.
func jsonRoundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// toFloat reads v as a number: a finite float64, an int or int64, a
// json.Number, or a string that parses as a finite number.
func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return finiteNumber(t)
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return 0, false
		}
		return finiteNumber(f)
	}
	return 0, false
}

// finiteNumber returns f, and false (with 0) when f is NaN or infinite.
func finiteNumber(f float64) (float64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func toStrings(v any) []string {
	switch t := v.(type) {
	case []string:
		return cloneStrings(t)
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		if t == "" {
			return nil
		}
		return []string{t}
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func removeString(list []string, s string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return []string{}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func insertAt(list []string, i int, s string) []string {
	out := make([]string, 0, len(list)+1)
	out = append(out, list[:i]...)
	out = append(out, s)
	return append(out, list[i:]...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// jsonEqual compares two JSON-like values after normalisation.
func jsonEqual(a, b any) bool {
	return reflect.DeepEqual(normalizeJSON(a), normalizeJSON(b))
}
