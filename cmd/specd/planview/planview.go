// Package planview is the person's reading of specd's plans: it runs read
// actions through the same in-process tool dispatch the MCP server and
// `specd call` use (mcptool.Registry.Dispatch, with its validation, roles,
// budgets and deadlines) and decodes the envelopes' data into small view
// models — the spec list, a spec's phase → task → subtask tree with
// progress, holders and blockers, the next task, journal pages and history
// with diffs. The CLI (cmd/specd) and the board (cmd/specd/board) render
// these models; neither reads the store itself.
package planview

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
)

// Reader runs tool calls as one caller. Runtime carries the shared
// server's Access hook (roles, rate limits) when there is one: the caller's
// identity travels in the context given to each method.
type Reader struct {
	Registry *mcptool.Registry
	Runtime  mcptool.Runtime
	Session  mcptool.Session
}

// Call dispatches one tool call. The error is nil whenever an envelope was
// produced (a refusal is an envelope with Success false); it is set only
// when the tool is not offered by this registry.
func (r *Reader) Call(ctx context.Context, tool string, args map[string]any) (core.Envelope, error) {
	t, ok := r.Registry.Tool(tool)
	if !ok {
		return core.Envelope{}, fmt.Errorf("the %s tool is not offered by this server (see --toolsets)", tool)
	}
	return r.Registry.Dispatch(ctx, t, args, r.Session, r.Runtime), nil
}

// decode reads env.Data into v through its JSON form (the form clients see).
// read calls tool with args and decodes a successful answer's data into
// a T; a refusal comes back as the envelope with a nil T and no error.
func read[T any](ctx context.Context, r *Reader, tool string, args map[string]any) (core.Envelope, *T, error) {
	env, err := r.Call(ctx, tool, args)
	if err != nil || !env.Success {
		return env, nil, err
	}
	var d T
	if err := decode(env, &d); err != nil {
		return env, nil, err
	}
	return env, &d, nil
}

// paged is args with a page's limit (when > 0) and cursor (when set).
func paged(args map[string]any, limit int, cursor string) map[string]any {
	if limit > 0 {
		args["limit"] = limit
	}
	if cursor != "" {
		args["cursor"] = cursor
	}
	return args
}

func decode(env core.Envelope, v any) error {
	b, err := json.Marshal(env.Data)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Refusal is the person-facing part of a failure envelope.
type Refusal struct {
	Code          string
	Message       string
	Remediation   string
	SuggestedTool string
	SuggestedArgs map[string]any
}

// RefusalOf reads the error, remediation and recovery of a failure envelope.
func RefusalOf(env core.Envelope) Refusal {
	var d struct {
		Code        string `json:"error_code"`
		Remediation string `json:"remediation"`
		Recovery    struct {
			Tool string         `json:"suggested_tool"`
			Args map[string]any `json:"suggested_args"`
		} `json:"recovery"`
	}
	_ = decode(env, &d)
	f := Refusal{Code: d.Code, Remediation: d.Remediation, SuggestedTool: d.Recovery.Tool, SuggestedArgs: d.Recovery.Args}
	if env.Error != nil {
		f.Message = *env.Error
	}
	return f
}

// SuggestedCall is the recovery as a command line that runs as given
// ("" when the envelope suggests none).
func (f Refusal) SuggestedCall() string {
	if f.SuggestedTool == "" {
		return ""
	}
	b, _ := json.Marshal(f.SuggestedArgs)
	return "specd call " + f.SuggestedTool + " " + shellQuote(string(b))
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Page is where a paged list stands.
type Page struct {
	Next    string // cursor of the next page, "" on the last
	HasMore bool
}

func pageOf(env core.Envelope) Page {
	p := env.Meta.Pagination
	if p == nil {
		return Page{}
	}
	out := Page{HasMore: p.HasMore}
	if p.Cursor != nil {
		out.Next = *p.Cursor
	}
	return out
}

// Folders are the lifecycle folders in the order a person reads them.
var Folders = []string{"active", "pending", "completed", "archived"}

// SpecRow is one spec of the list.
type SpecRow struct {
	ID           string  `json:"spec_id"`
	Title        string  `json:"title"`
	Lifecycle    string  `json:"lifecycle"`
	Status       string  `json:"status"`
	Version      int64   `json:"version"`
	LastUpdated  string  `json:"last_updated"`
	Total        int     `json:"total_tasks"`
	Completed    int     `json:"completed_tasks"`
	Progress     float64 `json:"progress_percentage"`
	CurrentPhase string  `json:"current_phase"`
}

// Percent is the progress as a whole percentage, rounded down so that 100
// means done.
func (s SpecRow) Percent() int { return wholePercent(s.Progress) }

func wholePercent(p float64) int {
	if p < 0 || math.IsNaN(p) {
		return 0
	}
	if p > 100 {
		return 100
	}
	return int(math.Floor(p))
}

// Ratio is completed of total as a whole percentage (0 when there is no
// work).
func Ratio(completed, total int) int {
	if total <= 0 {
		return 0
	}
	return completed * 100 / total
}

// SpecList is one page of specs.
type SpecList struct {
	Specs []SpecRow
	Page  Page
}

// ByFolder groups the rows by lifecycle folder, in Folders order.
func (l *SpecList) ByFolder() map[string][]SpecRow {
	out := map[string][]SpecRow{}
	for _, s := range l.Specs {
		out[s.Lifecycle] = append(out[s.Lifecycle], s)
	}
	return out
}

// List reads one page of specs with their progress (spec list). limit 0
// takes the tool's default page; cursor "" starts at the beginning.
func (r *Reader) List(ctx context.Context, limit int, cursor string) (core.Envelope, *SpecList, error) {
	env, d, err := read[struct {
		Specs []SpecRow `json:"specs"`
	}](ctx, r, "spec", paged(map[string]any{"action": "list", "include_progress": true}, limit, cursor))
	if d == nil {
		return env, nil, err
	}
	return env, &SpecList{Specs: d.Specs, Page: pageOf(env)}, nil
}

// Node is one node of a spec's tree.
type Node struct {
	ID        string
	Type      string
	Title     string
	Status    string
	Total     int
	Completed int
	HeldBy    string // started_by of an in-progress node
	StartedAt string
	Blocker   string   // blocker_description of a blocked node (with its type)
	BlockedBy []string // unfinished prerequisites' ids
	Blocks    []string
	Children  []*Node
}

// Percent is the node's completed share of its work.
func (n *Node) Percent() int { return Ratio(n.Completed, n.Total) }

// JournalEntry is one journal entry.
type JournalEntry struct {
	Seq       int64  `json:"seq"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"entry_type"`
	Title     string `json:"title"`
	Content   string `json:"content"`
	Author    string `json:"author"`
	TaskID    string `json:"task_id"`
}

// Spec is one spec as a tree.
type Spec struct {
	ID           string
	Title        string
	Lifecycle    string
	Status       string
	Version      int64
	LastUpdated  string
	Progress     float64
	CurrentPhase string
	Total        int
	Completed    int
	Phases       []*Node
	Nodes        map[string]*Node
	// Fidelity is meta.content_fidelity when the answer was degraded to fit
	// the token budget ("" when complete).
	Fidelity string
}

// Percent is the spec's progress as a whole percentage.
func (s *Spec) Percent() int { return wholePercent(s.Progress) }

// Blocked is every blocked node, and every unfinished node waiting on an
// unfinished prerequisite, in tree order.
func (s *Spec) Blocked() []*Node {
	var out []*Node
	s.Walk(func(n *Node, _ int) {
		if n.Status == "blocked" || (n.Status != "completed" && len(n.BlockedBy) > 0) {
			out = append(out, n)
		}
	})
	return out
}

// InProgress is every in-progress task or subtask, in tree order.
func (s *Spec) InProgress() []*Node {
	var out []*Node
	s.Walk(func(n *Node, _ int) {
		if n.Status == "in_progress" && n.Type != "phase" && len(n.Children) == 0 {
			out = append(out, n)
		}
	})
	return out
}

// Walk visits every node under the phases, depth first, with its depth
// (phases are 0).
func (s *Spec) Walk(fn func(n *Node, depth int)) {
	var walk func(n *Node, d int)
	walk = func(n *Node, d int) {
		fn(n, d)
		for _, c := range n.Children {
			walk(c, d+1)
		}
	}
	for _, p := range s.Phases {
		walk(p, 0)
	}
}

// Edge is one dependency: From must finish before To.
type Edge struct{ From, To string }

// Edges are the spec's blocks edges between nodes of the tree, sorted.
func (s *Spec) Edges() []Edge {
	seen := map[Edge]bool{}
	s.Walk(func(n *Node, _ int) {
		for _, b := range n.Blocks {
			if s.Nodes[b] != nil {
				seen[Edge{n.ID, b}] = true
			}
		}
		for _, b := range n.BlockedBy {
			if s.Nodes[b] != nil {
				seen[Edge{b, n.ID}] = true
			}
		}
	})
	out := make([]Edge, 0, len(seen))
	for e := range seen {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

type wireNode struct {
	Type         string         `json:"type"`
	Title        string         `json:"title"`
	Status       string         `json:"status"`
	Children     []string       `json:"children"`
	Total        int            `json:"total_tasks"`
	Completed    int            `json:"completed_tasks"`
	Metadata     map[string]any `json:"metadata"`
	Dependencies struct {
		Blocks    []string `json:"blocks"`
		BlockedBy []string `json:"blocked_by"`
	} `json:"dependencies"`
}

// Show reads one spec (spec get) as a tree.
func (r *Reader) Show(ctx context.Context, specID string) (core.Envelope, *Spec, error) {
	env, err := r.Call(ctx, "spec", map[string]any{"action": "get", "spec_id": specID})
	if err != nil || !env.Success {
		return env, nil, err
	}
	var d struct {
		Spec struct {
			ID           string              `json:"spec_id"`
			Title        string              `json:"title"`
			Lifecycle    string              `json:"lifecycle"`
			Status       string              `json:"status"`
			Version      int64               `json:"version"`
			LastUpdated  string              `json:"last_updated"`
			Progress     float64             `json:"progress_percentage"`
			CurrentPhase string              `json:"current_phase"`
			Hierarchy    map[string]wireNode `json:"hierarchy"`
		} `json:"spec"`
	}
	if err := decode(env, &d); err != nil {
		return env, nil, err
	}
	w := d.Spec
	s := &Spec{ID: w.ID, Title: w.Title, Lifecycle: w.Lifecycle, Status: w.Status, Version: w.Version,
		LastUpdated: w.LastUpdated, Progress: w.Progress, CurrentPhase: w.CurrentPhase,
		Nodes: map[string]*Node{}, Fidelity: env.Meta.ContentFidelity}
	if s.Fidelity == core.FidelityFull {
		s.Fidelity = ""
	}
	var build func(id string, depth int) *Node
	build = func(id string, depth int) *Node {
		wn, ok := w.Hierarchy[id]
		if !ok || depth > 64 || s.Nodes[id] != nil {
			return nil
		}
		n := &Node{ID: id, Type: wn.Type, Title: wn.Title, Status: wn.Status, Total: wn.Total, Completed: wn.Completed,
			Blocks: wn.Dependencies.Blocks, BlockedBy: unfinished(w.Hierarchy, wn.Dependencies.BlockedBy)}
		s.Nodes[id] = n
		if wn.Status == "in_progress" {
			n.HeldBy, _ = wn.Metadata["started_by"].(string)
			n.StartedAt, _ = wn.Metadata["started_at"].(string)
		}
		if wn.Status == "blocked" {
			desc, _ := wn.Metadata["blocker_description"].(string)
			typ, _ := wn.Metadata["blocker_type"].(string)
			n.Blocker = strings.TrimSpace(desc)
			if typ != "" {
				n.Blocker = strings.TrimSpace(n.Blocker + " (" + typ + ")")
			}
		}
		for _, c := range wn.Children {
			if cn := build(c, depth+1); cn != nil {
				n.Children = append(n.Children, cn)
			}
		}
		return n
	}
	if root, ok := w.Hierarchy["spec-root"]; ok {
		s.Total, s.Completed = root.Total, root.Completed
		for _, c := range root.Children {
			if n := build(c, 0); n != nil {
				s.Phases = append(s.Phases, n)
			}
		}
	}
	return env, s, nil
}

// unfinished keeps the ids of ids whose node is not completed.
func unfinished(h map[string]wireNode, ids []string) []string {
	var out []string
	for _, id := range ids {
		if n, ok := h[id]; ok && n.Status == "completed" {
			continue
		}
		out = append(out, id)
	}
	return out
}

// Next is task next's answer.
type Next struct {
	SpecID       string         `json:"spec_id"`
	Found        bool           `json:"found"`
	SpecComplete bool           `json:"spec_complete"`
	TaskID       string         `json:"task_id"`
	Title        string         `json:"title"`
	Type         string         `json:"type"`
	Status       string         `json:"status"`
	PhaseID      string         `json:"phase_id"`
	Metadata     map[string]any `json:"metadata"`
	Blocked      []struct {
		TaskID    string   `json:"task_id"`
		WaitingOn []string `json:"waiting_on"`
		Reason    string   `json:"reason"`
	} `json:"blocked"`
	InProgress []struct {
		TaskID    string `json:"task_id"`
		Title     string `json:"title"`
		StartedBy string `json:"started_by"`
	} `json:"in_progress"`
	Hint string `json:"hint"`
}

// NextTask reads the next actionable task of a spec (task next, without
// claiming it).
func (r *Reader) NextTask(ctx context.Context, specID string) (core.Envelope, *Next, error) {
	return read[Next](ctx, r, "task", map[string]any{"action": "next", "spec_id": specID})
}

// JournalPage is one page of a spec's journal, newest first.
type JournalPage struct {
	SpecID  string
	Entries []JournalEntry
	Page    Page
}

// Journal reads one page of a spec's journal (journal list).
func (r *Reader) Journal(ctx context.Context, specID string, limit int, cursor string) (core.Envelope, *JournalPage, error) {
	env, d, err := read[struct {
		Entries []JournalEntry `json:"entries"`
	}](ctx, r, "journal", paged(map[string]any{"action": "list", "spec_id": specID}, limit, cursor))
	if d == nil {
		return env, nil, err
	}
	return env, &JournalPage{SpecID: specID, Entries: d.Entries, Page: pageOf(env)}, nil
}

// Version is one entry of a spec's history.
type Version struct {
	Version      int64    `json:"version"`
	Timestamp    string   `json:"timestamp"`
	Action       string   `json:"action"`
	Author       string   `json:"author"`
	ChangedNodes []string `json:"changed_nodes"`
	// Diff is this version's change (spec diff from the version before);
	// History fills it for the newest version only. nil otherwise.
	Diff *Diff
}

// Diff is spec diff's answer: what changed from FromVersion to the
// current spec.
type Diff struct {
	FromVersion int64    `json:"from_version"`
	Added       []string `json:"added"`
	Removed     []string `json:"removed"`
	Modified    []struct {
		ID      string   `json:"id"`
		Changes []Change `json:"changes"`
	} `json:"modified"`
	Header []Change `json:"header"`
}

// Change is one field's change.
type Change struct {
	Field string `json:"field"`
	Old   any    `json:"old"`
	New   any    `json:"new"`
}

// History reads the newest limit versions of a spec (spec history) and
// the newest one's diff (spec diff from the version before it to the
// current spec: exactly that version's change). The older versions carry
// their changed nodes only: the tool diffs a stored version against the
// current spec, not two stored versions, and one diff per version would
// cost a call each on every refresh of a page.
func (r *Reader) History(ctx context.Context, specID string, limit int) (core.Envelope, []Version, error) {
	env, d, err := read[struct {
		Versions []Version `json:"versions"`
	}](ctx, r, "spec", map[string]any{"action": "history", "spec_id": specID, "limit": limit})
	if d == nil {
		return env, nil, err
	}
	if len(d.Versions) > 0 && d.Versions[0].Version > 1 {
		v := &d.Versions[0]
		denv, err := r.Call(ctx, "spec", map[string]any{"action": "diff", "spec_id": specID, "version": v.Version - 1})
		var df Diff
		if err == nil && denv.Success && decode(denv, &df) == nil {
			v.Diff = &df
		}
	}
	return env, d.Versions, nil
}
