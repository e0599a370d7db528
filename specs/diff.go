package specs

import (
	"reflect"
	"sort"
)

// FieldChange is one changed field: Field is "title", "status", "parent",
// "children", "total_tasks", "completed_tasks", "type",
// "dependencies.blocks", "dependencies.blocked_by", "dependencies.depends",
// "metadata.<key>" or "extra.<key>"; Old or New is nil when the field was
// absent on that side.
type FieldChange struct {
	Field string `json:"field"`
	Old   any    `json:"old"`
	New   any    `json:"new"`
}

// NodeDiff lists the changes of one node.
type NodeDiff struct {
	ID      string        `json:"id"`
	Changes []FieldChange `json:"changes"`
}

// SpecDiff is a node-level diff.
type SpecDiff struct {
	Added    []string      `json:"added"`
	Removed  []string      `json:"removed"`
	Modified []NodeDiff    `json:"modified"`
	Header   []FieldChange `json:"header,omitempty"`
}

// Diff compares two node sets (id → node; nil nodes count as absent) and
// returns added, removed and modified ids in natural order, with field-level
// old/new values (JSON-normalised) for modified nodes. It works on whatever
// it is given: whole hierarchies, or the changed nodes of a version.
func Diff(oldNodes, newNodes map[string]*Node) SpecDiff {
	d := SpecDiff{Added: []string{}, Removed: []string{}, Modified: []NodeDiff{}}
	for id, n := range newNodes {
		if n == nil {
			continue
		}
		if o := oldNodes[id]; o == nil {
			d.Added = append(d.Added, id)
		} else if ch := NodeChanges(o, n); len(ch) > 0 {
			d.Modified = append(d.Modified, NodeDiff{ID: id, Changes: ch})
		}
	}
	for id, o := range oldNodes {
		if o != nil && newNodes[id] == nil {
			d.Removed = append(d.Removed, id)
		}
	}
	SortIDs(d.Added)
	SortIDs(d.Removed)
	sort.Slice(d.Modified, func(i, j int) bool { return CompareIDs(d.Modified[i].ID, d.Modified[j].ID) < 0 })
	return d
}

// DiffDocuments is Diff over two documents' hierarchies plus the changes of
// their top-level fields (DiffHeader).
func DiffDocuments(a, b Document) SpecDiff {
	d := Diff(a.Hierarchy, b.Hierarchy)
	d.Header = DiffHeader(
		Header{SpecID: a.SpecID, Title: a.Title, Generated: a.Generated, LastUpdated: a.LastUpdated, Version: a.Version,
			Lifecycle: a.Lifecycle, Metadata: a.Metadata, Status: a.Status, ProgressPercentage: a.ProgressPercentage, CurrentPhase: a.CurrentPhase},
		Header{SpecID: b.SpecID, Title: b.Title, Generated: b.Generated, LastUpdated: b.LastUpdated, Version: b.Version,
			Lifecycle: b.Lifecycle, Metadata: b.Metadata, Status: b.Status, ProgressPercentage: b.ProgressPercentage, CurrentPhase: b.CurrentPhase})
	return d
}

// DiffHeader compares two headers field by field (metadata per key).
func DiffHeader(a, b Header) []FieldChange {
	var out []FieldChange
	cmp := func(field string, x, y any) {
		if !reflect.DeepEqual(normalizeJSON(x), normalizeJSON(y)) {
			out = append(out, FieldChange{field, normalizeJSON(x), normalizeJSON(y)})
		}
	}
	cmp("spec_id", a.SpecID, b.SpecID)
	cmp("title", a.Title, b.Title)
	cmp("generated", a.Generated, b.Generated)
	cmp("last_updated", a.LastUpdated, b.LastUpdated)
	cmp("version", a.Version, b.Version)
	cmp("lifecycle", string(a.Lifecycle), string(b.Lifecycle))
	cmp("status", string(a.Status), string(b.Status))
	cmp("progress_percentage", a.ProgressPercentage, b.ProgressPercentage)
	cmp("current_phase", a.CurrentPhase, b.CurrentPhase)
	out = append(out, mapChanges("metadata.", a.Metadata, b.Metadata)...)
	return out
}

// NodeChanges lists the field-level differences between two versions of a
// node (nil when equal).
func NodeChanges(o, n *Node) []FieldChange {
	var out []FieldChange
	cmp := func(field string, x, y any) {
		nx, ny := normalizeJSON(x), normalizeJSON(y)
		if !reflect.DeepEqual(nx, ny) {
			out = append(out, FieldChange{field, nx, ny})
		}
	}
	cmp("type", string(o.Type), string(n.Type))
	cmp("title", o.Title, n.Title)
	cmp("status", string(o.Status), string(n.Status))
	cmp("parent", o.Parent, n.Parent)
	cmp("children", orEmpty(o.Children.Slice()), orEmpty(n.Children.Slice()))
	cmp("total_tasks", o.TotalTasks, n.TotalTasks)
	cmp("completed_tasks", o.CompletedTasks, n.CompletedTasks)
	cmp("dependencies.blocks", orEmpty(o.Dependencies.Blocks), orEmpty(n.Dependencies.Blocks))
	cmp("dependencies.blocked_by", orEmpty(o.Dependencies.BlockedBy), orEmpty(n.Dependencies.BlockedBy))
	cmp("dependencies.depends", orEmpty(o.Dependencies.Depends), orEmpty(n.Dependencies.Depends))
	out = append(out, mapChanges("metadata.", withoutInternal(o.Metadata), withoutInternal(n.Metadata))...)
	ox, nx := map[string]any{}, map[string]any{}
	for k, v := range o.Extra {
		ox[k] = string(v)
	}
	for k, v := range n.Extra {
		nx[k] = string(v)
	}
	out = append(out, mapChanges("extra.", ox, nx)...)
	return out
}

func mapChanges(prefix string, a, b map[string]any) []FieldChange {
	var out []FieldChange
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		x, okx := a[k]
		y, oky := b[k]
		nx, ny := normalizeJSON(x), normalizeJSON(y)
		if okx != oky || !reflect.DeepEqual(nx, ny) {
			out = append(out, FieldChange{prefix + k, nx, ny})
		}
	}
	return out
}

// withoutInternal hides the store's derived bookkeeping (the rollup summary)
// from diffs: it changes whenever a child does and says nothing new.
func withoutInternal(m map[string]any) map[string]any {
	if _, ok := m[RollupMetaKey]; !ok {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != RollupMetaKey {
			out[k] = v
		}
	}
	return out
}
