package specs

import (
	"fmt"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// TaskInput describes a node added by AddTask or AddPhaseBulk. Empty fields
// are not written. Metadata holds extra free-form keys (the typed fields
// win over it).
type TaskInput struct {
	Type               NodeType // task (default), subtask, verify, research
	Title              string
	Description        string
	TaskCategory       string // investigation|implementation|refactoring|decision|research
	FilePath           string // repo-relative
	AcceptanceCriteria []string
	Complexity         string // low|medium|high
	EstimatedHours     *float64
	VerificationType   string // verify nodes: run-tests|fidelity|manual (default manual, run-tests when Command is set)
	Command            string // verify nodes
	Expected           string // verify nodes
	BlockingMode       string // research nodes: none|soft|hard (default soft)
	ResearchType       string // research nodes
	Query              string // research nodes
	Metadata           map[string]any
	// Details is foundry's older spelling of the description: without a
	// Description, its lines joined by newlines become the description.
	Details []string
	// Position is the 0-based position among the parent's children (0 is
	// first, as in foundry-mcp); nil inserts before the parent's trailing
	// verify nodes (verify nodes go last). Ignored by AddPhaseBulk.
	Position *int
}

// fieldViolation is one invalid field of an input.
type fieldViolation struct {
	Code     string `json:"code"`
	Field    string `json:"field"`
	Message  string `json:"message"`
	Received any    `json:"received,omitempty"`
}

func (v fieldViolation) err() *core.Error {
	e := newErr(v.Code, v.Field, "%s", v.Message)
	if v.Received != nil {
		e.WithDetail("received", v.Received)
	}
	return e
}

func violationsErr(vs []fieldViolation) *core.Error {
	if len(vs) == 1 {
		return vs[0].err()
	}
	list := make([]any, len(vs))
	for i, v := range vs {
		list[i] = map[string]any{"code": v.Code, "field": v.Field, "message": v.Message, "received": v.Received}
	}
	e := newErr(errcode.Validation, vs[0].Field, "%d invalid fields, first: %s", len(vs), vs[0].Message)
	return e.WithDetail("violations", list)
}

func checkEnum(vs *[]fieldViolation, field, value string, allowed []string) {
	if value != "" && !containsString(allowed, value) {
		*vs = append(*vs, fieldViolation{errcode.InvalidFormat, field,
			fmt.Sprintf("%s must be one of %s", field, strings.Join(allowed, ", ")), truncateForDetails(value)})
	}
}

func checkHours(vs *[]fieldViolation, field string, h *float64) {
	if h != nil && (*h < 0 || *h > 100000 || *h != *h) {
		*vs = append(*vs, fieldViolation{errcode.InvalidFormat, field, field + " must be a number between 0 and 100000", *h})
	}
}

// validRelativePath reports whether p is a clean repo-relative path.
func validRelativePath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "\\") || strings.Contains(p, "\x00") {
		return false
	}
	if len(p) >= 2 && p[1] == ':' {
		return false
	}
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return false
		}
	}
	return true
}

// validateTaskInput checks a TaskInput; prefix is prepended to field names.
func validateTaskInput(in TaskInput, prefix string) []fieldViolation {
	var vs []fieldViolation
	t := in.Type
	if t == "" {
		t = TypeTask
	}
	switch t {
	case TypeTask, TypeSubtask, TypeVerify, TypeResearch:
	default:
		vs = append(vs, fieldViolation{errcode.InvalidFormat, prefix + "task_type", "task_type must be one of task, subtask, verify, research", truncateForDetails(string(in.Type))})
	}
	if strings.TrimSpace(in.Title) == "" {
		vs = append(vs, fieldViolation{errcode.MissingRequired, prefix + "title", "title is required and must not be blank", nil})
	} else if len([]rune(in.Title)) > 500 {
		vs = append(vs, fieldViolation{errcode.InvalidFormat, prefix + "title", "title must be at most 500 characters", truncateForDetails(in.Title)})
	}
	checkEnum(&vs, prefix+"task_category", in.TaskCategory, TaskCategories)
	checkEnum(&vs, prefix+"complexity", in.Complexity, Complexities)
	checkEnum(&vs, prefix+"verification_type", in.VerificationType, VerificationTypes)
	checkEnum(&vs, prefix+"blocking_mode", in.BlockingMode, BlockingModes)
	checkHours(&vs, prefix+"estimated_hours", in.EstimatedHours)
	if in.FilePath != "" && !validRelativePath(in.FilePath) {
		vs = append(vs, fieldViolation{errcode.InvalidFormat, prefix + "file_path", "file_path must be a repo-relative path without '..'", truncateForDetails(in.FilePath)})
	}
	for i, c := range in.AcceptanceCriteria {
		if strings.TrimSpace(c) == "" {
			vs = append(vs, fieldViolation{errcode.InvalidFormat, fmt.Sprintf("%sacceptance_criteria[%d]", prefix, i), "acceptance criteria must not be blank", ""})
		}
	}
	if t != TypeVerify && (in.VerificationType != "" || in.Command != "" || in.Expected != "") {
		vs = append(vs, fieldViolation{errcode.InvalidFormat, prefix + "verification_type", "verification fields apply to verify nodes only", string(t)})
	}
	if t != TypeResearch && (in.BlockingMode != "" || in.ResearchType != "" || in.Query != "") {
		vs = append(vs, fieldViolation{errcode.InvalidFormat, prefix + "blocking_mode", "research fields apply to research nodes only", string(t)})
	}
	return vs
}

// buildNode makes the pending node described by in (without id/parent).
func buildNode(in TaskInput) *Node {
	t := in.Type
	if t == "" {
		t = TypeTask
	}
	n := &Node{Type: t, Title: strings.TrimSpace(in.Title), Status: StatusPending, Children: []string{},
		Metadata: map[string]any{}, Dependencies: Dependencies{Blocks: []string{}, BlockedBy: []string{}, Depends: []string{}}}
	for k, v := range in.Metadata {
		n.SetMeta(k, v)
	}
	set := func(k, v string) {
		if v != "" {
			n.SetMeta(k, v)
		}
	}
	set("description", in.Description)
	if in.Description == "" {
		set("description", strings.TrimSpace(strings.Join(in.Details, "\n")))
	}
	set("task_category", in.TaskCategory)
	set("file_path", in.FilePath)
	set("complexity", in.Complexity)
	if len(in.AcceptanceCriteria) > 0 {
		n.SetMeta("acceptance_criteria", in.AcceptanceCriteria)
	}
	if in.EstimatedHours != nil {
		n.SetMeta("estimated_hours", *in.EstimatedHours)
	}
	switch t {
	case TypeVerify:
		vt := in.VerificationType
		if vt == "" {
			vt = "manual"
			if in.Command != "" {
				vt = "run-tests"
			}
		}
		n.SetMeta("verification_type", vt)
		set("command", in.Command)
		set("expected", in.Expected)
	case TypeResearch:
		mode := in.BlockingMode
		if mode == "" {
			mode = "soft"
		}
		n.SetMeta("blocking_mode", mode)
		set("research_type", in.ResearchType)
		set("query", in.Query)
	}
	return n
}

// allowedUnder reports whether a node of type child may sit under parent.
func allowedUnder(parent *Node, child NodeType) bool {
	switch parent.Type {
	case TypePhase, TypeGroup:
		return child == TypeTask || child == TypeVerify || child == TypeResearch || child == TypeGroup
	case TypeTask, TypeSubtask:
		return child == TypeTask || child == TypeSubtask || child == TypeVerify || child == TypeResearch
	case TypeSpec:
		return child == TypePhase
	}
	return false
}

// NodeNotFound is the error for id, given in field, naming no node of s:
// PHASE_NOT_FOUND for a phase-like id (phase-…, the phases as candidates),
// else TASK_NOT_FOUND (every node but the root as candidates). Every
// not-found node in any answer is this one error.
func NodeNotFound(s *Spec, field, id string) *core.Error {
	if strings.HasPrefix(id, "phase-") {
		return PhaseNotFound(s, field, id)
	}
	return taskNotFound(s, field, id)
}

// defaultIndex is where a new child of type t goes by default: before the
// trailing run of verify nodes (verify nodes go last).
func defaultIndex(s *Spec, children []string, t NodeType) int {
	i := len(children)
	if t == TypeVerify {
		return i
	}
	for i > 0 {
		c := s.Node(children[i-1])
		if c == nil || c.Type != TypeVerify {
			break
		}
		i--
	}
	return i
}

// positionIndex checks a 0-based position (nil = def) as an insertion
// index into a list of length n: 0 is first, n is last.
func positionIndex(position *int, n, def int, field string) (int, *core.Error) {
	if position == nil {
		return def, nil
	}
	if p := *position; p < 0 || p > n {
		return 0, newErr(errcode.InvalidPosition, field, "position must be between 0 and %d (0 is first)", n).
			WithDetail("received", p).WithDetail("min", 0).WithDetail("max", n)
	}
	return *position, nil
}

// AddTask adds a pending node under parentID and returns its id (see
// NewNodeID). Allowed placements: task, verify and research under a phase,
// group or task; subtask under a task or subtask.
//
// Errors: MISSING_REQUIRED (parent, title), INVALID_FORMAT (task_type,
// enums, estimated_hours, file_path), PHASE_NOT_FOUND / TASK_NOT_FOUND
// (parent), INVALID_PARENT (the type may not sit there), INVALID_POSITION.
func AddTask(s *Spec, parentID string, in TaskInput) (id string, err error) {
	defer s.mutate(&err)()
	if parentID == "" {
		return "", newErr(errcode.MissingRequired, "parent", "parent is required (a phase or task id)")
	}
	in = in.canonical()
	if vs := validateTaskInput(in, ""); len(vs) > 0 {
		return "", violationsErr(vs)
	}
	parent := s.Node(parentID)
	if parent == nil {
		return "", NodeNotFound(s, "parent", parentID)
	}
	return addChild(s, parent, buildNode(in), in.Position)
}

func addChild(s *Spec, parent *Node, n *Node, position *int) (string, error) {
	if !allowedUnder(parent, n.Type) {
		hint := ""
		if parent.Type == TypeSpec {
			hint = "; add a phase with phase-add"
		}
		return "", newErr(errcode.InvalidParent, "parent", "a %s cannot be added under %s (%s)%s", n.Type, parent.ID, parent.Type, hint).
			WithDetail("received", parent.ID)
	}
	idx, perr := positionIndex(position, len(parent.Children), defaultIndex(s, parent.Children, n.Type), "position")
	if perr != nil {
		return "", perr
	}
	n.ID = NewNodeID(s, parent.ID, n.Type)
	n.Parent = parent.ID
	s.Put(n)
	p := s.Edit(parent.ID)
	p.Children = insertAt(p.Children, idx, n.ID)
	RecomputeAncestors(s, n.ID)
	s.touch()
	return n.ID, nil
}

// subtree returns id and all its descendants, pre-order (Walk).
func subtree(s *Spec, id string) []string {
	var out []string
	for n := range Walk(s.Node, id) {
		out = append(out, n.ID)
	}
	return out
}

// removeNodes deletes the given nodes (a set of whole subtrees), removing
// every blocks/blocked_by edge between them and the rest. depends edges of
// other nodes that point into the set are left dangling (there is no reverse
// index for them; Validate reports and Fix removes them).
func removeNodes(s *Spec, ids []string) {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	for _, id := range ids {
		n := s.Node(id)
		for _, b := range n.Dependencies.Blocks {
			if !set[b] {
				unlinkBlocked(s, b, id)
			}
		}
		for _, a := range n.Dependencies.BlockedBy {
			if !set[a] {
				unlinkBlocked(s, id, a)
			}
		}
	}
	for _, id := range ids {
		s.Delete(id)
	}
}

// RemoveTask removes a node that is not a phase or the root, with its
// subtree when cascade is true, and returns the removed ids (pre-order).
//
// Errors: TASK_NOT_FOUND, VALIDATION_ERROR (the root or a phase: use
// RemovePhase; children without cascade, field cascade).
func RemoveTask(s *Spec, id string, cascade bool) (removed []string, err error) {
	defer s.mutate(&err)()
	n := s.Node(id)
	if n == nil {
		return nil, taskNotFound(s, "task_id", id)
	}
	if id == RootID || n.Type == TypePhase {
		return nil, newErr(errcode.Validation, "task_id", "%s is a %s: remove phases with phase-remove", id, n.Type)
	}
	if !n.IsLeaf() && !cascade {
		return nil, newErr(errcode.Validation, "cascade", "%s has %d children: pass cascade to remove them too", id, len(n.Children)).
			WithDetail("children", cloneStrings(n.Children))
	}
	removed = subtree(s, id)
	parentID := n.Parent
	removeNodes(s, removed)
	if p := s.Node(parentID); p != nil {
		e := s.Edit(parentID)
		e.Children = removeString(e.Children, id)
	}
	RecomputeAncestors(s, parentID)
	s.touch()
	return removed, nil
}

// MoveTask moves a node (not a phase or the root) under newParent (empty:
// its current parent) at a 0-based position among the new siblings (nil:
// the default place, before trailing verify nodes). Ids are kept. Because a
// parent's blocked_by applies to its descendants, a move that would create a
// dependency cycle is refused.
//
// Errors: TASK_NOT_FOUND (task_id), PHASE_NOT_FOUND / TASK_NOT_FOUND
// (parent), VALIDATION_ERROR (root or phase: use MovePhase), INVALID_PARENT
// (into its own subtree, or a type that may not sit there),
// INVALID_POSITION, CIRCULAR_DEPENDENCY (details.cycle).
func MoveTask(s *Spec, id, newParent string, position *int) (err error) {
	defer s.mutate(&err)()
	n := s.Node(id)
	if n == nil {
		return taskNotFound(s, "task_id", id)
	}
	if id == RootID || n.Type == TypePhase {
		return newErr(errcode.Validation, "task_id", "%s is a %s: move phases with phase-move", id, n.Type)
	}
	oldParent := n.Parent
	if newParent == "" {
		newParent = oldParent
	}
	np := s.Node(newParent)
	if np == nil {
		return NodeNotFound(s, "parent", newParent)
	}
	for x, guard := newParent, 0; x != "" && guard < 10000; guard++ {
		if x == id {
			return newErr(errcode.InvalidParent, "parent", "cannot move %s into its own subtree (%s)", id, newParent).WithDetail("received", newParent)
		}
		xn := s.Node(x)
		if xn == nil {
			break
		}
		x = xn.Parent
	}
	if !allowedUnder(np, n.Type) {
		return newErr(errcode.InvalidParent, "parent", "a %s cannot sit under %s (%s)", n.Type, newParent, np.Type).WithDetail("received", newParent)
	}
	siblings := removeString(cloneStrings(np.Children), id)
	idx, perr := positionIndex(position, len(siblings), defaultIndex(s, siblings, n.Type), "position")
	if perr != nil {
		return perr
	}
	if op := s.Node(oldParent); op != nil {
		e := s.Edit(oldParent)
		e.Children = removeString(e.Children, id)
	}
	e := s.Edit(newParent)
	e.Children = insertAt(removeString(e.Children, id), idx, id)
	if oldParent != newParent {
		s.Edit(id).Parent = newParent
		if path := waitPath(s, vertex{newParent, true}, vertex{id, true}); path != nil {
			return newErr(errcode.CircularDependency, "parent", "moving %s under %s would create a dependency cycle", id, newParent).
				WithDetail("cycle", cycleIDs(id, newParent, path)[1:])
		}
		if path := waitPath(s, vertex{id, false}, vertex{newParent, false}); path != nil {
			return newErr(errcode.CircularDependency, "parent", "moving %s under %s would create a dependency cycle", id, newParent).
				WithDetail("cycle", cycleIDs(newParent, id, path)[1:])
		}
		RecomputeAncestors(s, oldParent)
	}
	RecomputeAncestors(s, id)
	s.touch()
	return nil
}

// PhaseInput describes a phase for AddPhase and AddPhaseBulk.
type PhaseInput struct {
	Title       string
	Description string
	Purpose     string
	Metadata    map[string]any // extra phase metadata
	// MetadataDefaults are metadata keys given to every task of AddPhaseBulk
	// that does not set them (foundry's "category" counts as task_category).
	MetadataDefaults map[string]any
	// EstimatedHours, when set, is the phase's metadata.estimated_hours.
	EstimatedHours *float64
	// VerifyScaffold asks AddPhaseBulk for the verify scaffold (AddPhase
	// always adds it); it is not added when the tasks contain verify nodes.
	VerifyScaffold bool
	// Position is the 0-based position among the root's children (0 is
	// first); nil appends.
	Position *int
	// LinkPrevious (nil: true) makes the new phase blocked by the phase
	// before it; when that phase blocked the phase after, the chain is
	// re-linked through the new phase (A→C becomes A→new→C).
	LinkPrevious *bool
	// TestCommand is the command of the scaffold's "Run tests" node (config
	// verify.test_command); empty makes that node manual.
	TestCommand string
}

// Link is one blocked_by edge: Blocked is blocked by Blocker.
type Link struct {
	Blocker string `json:"blocker"`
	Blocked string `json:"blocked"`
}

// PhaseResult is what AddPhase and AddPhaseBulk created.
type PhaseResult struct {
	PhaseID   string   `json:"phase_id"`
	TaskIDs   []string `json:"task_ids,omitempty"`
	VerifyIDs []string `json:"verify_ids,omitempty"`
	LinkedTo  string   `json:"linked_to,omitempty"` // the previous phase it is blocked by
	Relinked  []Link   `json:"relinked,omitempty"`
}

// AddPhase appends (or inserts at Position) a pending phase with the verify
// scaffold: verify-N-1 "Run tests" (run-tests with TestCommand, manual when
// empty) which blocks verify-N-2 "Review against the spec" (manual).
//
// Errors: MISSING_REQUIRED (title), VALIDATION_ERROR (no root),
// INVALID_POSITION.
func AddPhase(s *Spec, in PhaseInput) (res PhaseResult, err error) {
	defer s.mutate(&err)()
	res, err = addPhase(s, in)
	if err != nil {
		return PhaseResult{}, err
	}
	res.VerifyIDs = addVerifyScaffold(s, res.PhaseID, in.TestCommand)
	s.touch()
	return res, nil
}

func addPhase(s *Spec, in PhaseInput) (PhaseResult, error) {
	var res PhaseResult
	if strings.TrimSpace(in.Title) == "" {
		return res, newErr(errcode.MissingRequired, "title", "a phase needs a title")
	}
	var vs []fieldViolation
	if checkHours(&vs, "estimated_hours", in.EstimatedHours); len(vs) > 0 {
		return res, violationsErr(vs)
	}
	root := s.Root()
	if root == nil {
		return res, newErr(errcode.Validation, "spec_id", "spec %s has no root node; run spec fix", s.Header.SpecID)
	}
	idx, perr := positionIndex(in.Position, len(root.Children), len(root.Children), "position")
	if perr != nil {
		return res, perr
	}
	id := NewPhaseID(s)
	n := &Node{ID: id, Type: TypePhase, Title: strings.TrimSpace(in.Title), Status: StatusPending, Parent: RootID,
		Children: []string{}, Metadata: map[string]any{},
		Dependencies: Dependencies{Blocks: []string{}, BlockedBy: []string{}, Depends: []string{}}}
	for k, v := range in.Metadata {
		n.SetMeta(k, v)
	}
	if in.Purpose != "" {
		n.SetMeta("purpose", in.Purpose)
	}
	if in.Description != "" {
		n.SetMeta("description", in.Description)
	}
	if in.EstimatedHours != nil {
		n.SetMeta("estimated_hours", *in.EstimatedHours)
	}
	s.Put(n)
	r := s.Edit(RootID)
	r.Children = insertAt(r.Children, idx, id)
	res.PhaseID = id
	if in.LinkPrevious == nil || *in.LinkPrevious {
		prev, next := "", ""
		for i := idx - 1; i >= 0; i-- {
			if c := s.Node(r.Children[i]); c != nil && c.Type == TypePhase {
				prev = c.ID
				break
			}
		}
		for i := idx + 1; i < len(r.Children); i++ {
			if c := s.Node(r.Children[i]); c != nil && c.Type == TypePhase {
				next = c.ID
				break
			}
		}
		if prev != "" {
			linkBlocked(s, id, prev)
			res.LinkedTo = prev
			if nn := s.Node(next); nn != nil && containsString(nn.Dependencies.BlockedBy, prev) {
				unlinkBlocked(s, next, prev)
				linkBlocked(s, next, id)
				res.Relinked = append(res.Relinked, Link{Blocker: id, Blocked: next})
			}
		}
	}
	RecomputeAncestors(s, id)
	return res, nil
}

// Scaffold titles.
const (
	ScaffoldRunTestsTitle = "Run tests"
	ScaffoldReviewTitle   = "Review against the spec"
)

func addVerifyScaffold(s *Spec, phaseID, testCommand string) []string {
	phase := s.Node(phaseID)
	run := buildNode(TaskInput{Type: TypeVerify, Title: ScaffoldRunTestsTitle, Command: testCommand, Expected: "All tests pass"})
	runID, _ := addChild(s, phase, run, nil)
	review := buildNode(TaskInput{Type: TypeVerify, Title: ScaffoldReviewTitle, VerificationType: "manual",
		Expected: "The implementation matches the spec"})
	reviewID, _ := addChild(s, s.Node(phaseID), review, nil)
	linkBlocked(s, reviewID, runID)
	return []string{runID, reviewID}
}

// AddPhaseBulk adds a phase and its tasks in one atomic call. Tasks are added
// in order under the phase; a subtask attaches to the closest preceding task.
// MetadataDefaults fill metadata keys the tasks leave unset; they are
// checked like task metadata (metadata_defaults.key). As in foundry-mcp, no
// verify scaffold is added unless in.VerifyScaffold (and then not when the
// tasks contain verify nodes). Every task is validated before anything is
// written, and all violations are reported together (details.violations,
// fields named tasks[i].field).
//
// Errors: MISSING_REQUIRED (phase title; a task title when it is the only
// violation), INVALID_FORMAT (one invalid field), VALIDATION_ERROR (no tasks
// is fine; several violations; a subtask with no preceding task; no root),
// INVALID_POSITION.
func AddPhaseBulk(s *Spec, in PhaseInput, tasks []TaskInput) (res PhaseResult, err error) {
	defer s.mutate(&err)()
	var vs []fieldViolation
	if strings.TrimSpace(in.Title) == "" {
		vs = append(vs, fieldViolation{errcode.MissingRequired, "phase.title", "a phase needs a title", nil})
	}
	tasks = canonicalTasks(tasks)
	in.Metadata = canonicalMetadata(in.Metadata)
	checkHours(&vs, "phase.estimated_hours", in.EstimatedHours)
	defaults := canonicalMetadata(foundryDefaults(in.MetadataDefaults))
	for _, v := range checkMetadataUpdate(defaults) {
		v.Field = "metadata_defaults." + v.Field
		vs = append(vs, v)
	}
	hasVerify, seenTask := false, false
	for i, t := range tasks {
		prefix := fmt.Sprintf("tasks[%d].", i)
		vs = append(vs, validateTaskInput(t, prefix)...)
		switch t.Type {
		case TypeVerify:
			hasVerify = true
		case TypeSubtask:
			if !seenTask {
				vs = append(vs, fieldViolation{errcode.Validation, prefix + "type", "a subtask must follow a task it belongs to", "subtask"})
			}
		case TypeTask, "":
			seenTask = true
		}
	}
	if len(vs) > 0 {
		return PhaseResult{}, violationsErr(vs)
	}
	res, err = addPhase(s, in)
	if err != nil {
		return PhaseResult{}, err
	}
	lastTask := ""
	for _, t := range tasks {
		n := buildNode(t)
		for k, v := range defaults {
			if _, ok := n.Metadata[k]; !ok && v != nil {
				n.SetMeta(k, v)
			}
		}
		parent := res.PhaseID
		if n.Type == TypeSubtask {
			parent = lastTask
		}
		id, err := addChild(s, s.Node(parent), n, nil)
		if err != nil {
			return PhaseResult{}, err
		}
		if n.Type == TypeTask {
			lastTask = id
		}
		if n.Type == TypeVerify {
			res.VerifyIDs = append(res.VerifyIDs, id)
		} else {
			res.TaskIDs = append(res.TaskIDs, id)
		}
	}
	if in.VerifyScaffold && !hasVerify {
		res.VerifyIDs = append(res.VerifyIDs, addVerifyScaffold(s, res.PhaseID, in.TestCommand)...)
	}
	s.touch()
	return res, nil
}

// foundryDefaults is m read as foundry-mcp does: its "category" key as
// task_category (an explicit task_category wins), one acceptance criterion
// given as text as a list of one.
func foundryDefaults(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "category" {
			out[k] = v
		}
	}
	if c, ok := m["category"]; ok {
		if _, set := out["task_category"]; !set {
			out["task_category"] = c
		}
	}
	if a, ok := out["acceptance_criteria"].(string); ok {
		out["acceptance_criteria"] = []any{a}
	}
	return out
}

// RemovePhaseResult reports what RemovePhase removed and re-linked.
type RemovePhaseResult struct {
	PhaseID      string   `json:"phase_id"`
	Removed      []string `json:"removed"`
	TasksRemoved int      `json:"tasks_removed"`
	Relinked     []Link   `json:"relinked,omitempty"`
}

// RemovePhase removes a phase and its whole subtree. When the phase's subtree
// holds work that is not pending (in progress, completed, blocked, failed),
// force is required. Dependencies through the phase are re-linked: for every
// A that blocks the phase and C that the phase blocks, C becomes blocked by A.
//
// Errors: PHASE_NOT_FOUND, CONFLICT (non-pending work without force;
// details.non_pending lists up to 20 ids, field force).
func RemovePhase(s *Spec, phaseID string, force bool) (res RemovePhaseResult, err error) {
	defer s.mutate(&err)()
	p := s.Node(phaseID)
	if p == nil || p.Type != TypePhase {
		return res, PhaseNotFound(s, "phase_id", phaseID)
	}
	ids := subtree(s, phaseID)
	var active []string
	for _, id := range ids[1:] {
		if n := s.Node(id); n.Status != StatusPending && n.IsLeaf() {
			active = append(active, id)
		}
	}
	if len(active) > 0 && !force {
		list := active
		if len(list) > 20 {
			list = list[:20]
		}
		return res, newErr(errcode.Conflict, "force", "phase %s has %d tasks that are not pending; pass force to remove it anyway", phaseID, len(active)).
			WithDetail("non_pending", list).WithDetail("non_pending_count", len(active))
	}
	before := cloneStrings(p.Dependencies.BlockedBy)
	after := cloneStrings(p.Dependencies.Blocks)
	res.PhaseID = phaseID
	res.Removed = ids
	res.TasksRemoved = p.TotalTasks
	removeNodes(s, ids)
	r := s.Edit(RootID)
	r.Children = removeString(r.Children, phaseID)
	for _, a := range before {
		for _, c := range after {
			an, cn := s.Node(a), s.Node(c)
			if an == nil || cn == nil || a == c || containsString(cn.Dependencies.BlockedBy, a) {
				continue
			}
			if wouldCycle(s, c, a) != nil {
				continue
			}
			linkBlocked(s, c, a)
			res.Relinked = append(res.Relinked, Link{Blocker: a, Blocked: c})
		}
	}
	RecomputeAncestors(s, RootID)
	s.touch()
	return res, nil
}

// MovePhase moves a phase to a 0-based position among the root's children
// (0 is first, as in foundry-mcp).
// Dependencies are not changed.
//
// Errors: PHASE_NOT_FOUND, INVALID_POSITION.
func MovePhase(s *Spec, phaseID string, position int) (err error) {
	defer s.mutate(&err)()
	p := s.Node(phaseID)
	if p == nil || p.Type != TypePhase || p.Parent != RootID {
		return PhaseNotFound(s, "phase_id", phaseID)
	}
	root := s.Root()
	rest := removeString(cloneStrings(root.Children), phaseID)
	idx, perr := positionIndex(&position, len(rest), len(rest), "position")
	if perr != nil {
		return perr
	}
	r := s.Edit(RootID)
	r.Children = insertAt(rest, idx, phaseID)
	RecomputeAncestors(s, RootID) // the root's rollup summary indexes its children
	s.touch()
	return nil
}

// reservedNodeKeys are metadata keys owned by transitions and rollups.
var reservedNodeKeys = map[string]string{
	"status": "use task update-status", "started_at": "set by task start", "started_by": "set by task start",
	"completed_at": "set by task complete", "total_tasks": "computed", "completed_tasks": "computed",
	"blocked_at": "set by task block", "failed_at": "set by complete-batch", "retry_count": "set by complete-batch",
	"requirements": "use task add-requirement", "resolved_blockers": "set by task unblock",
	RollupMetaKey: "computed",
}

// checkMetadataUpdate validates updates to a node's metadata.
func checkMetadataUpdate(updates map[string]any) []fieldViolation {
	var vs []fieldViolation
	for _, k := range sortedKeys(updates) {
		v := updates[k]
		if why, ok := reservedNodeKeys[k]; ok {
			vs = append(vs, fieldViolation{errcode.Validation, k, fmt.Sprintf("%s cannot be set directly (%s)", k, why), nil})
			continue
		}
		if v == nil {
			continue
		}
		str, isStr := v.(string)
		switch k {
		case "title":
			if !isStr || strings.TrimSpace(str) == "" {
				vs = append(vs, fieldViolation{errcode.InvalidFormat, k, "title must be a non-blank string", fmt.Sprint(v)})
			}
		case "task_category", "complexity", "verification_type", "blocking_mode":
			allowed := map[string][]string{"task_category": TaskCategories, "complexity": Complexities,
				"verification_type": VerificationTypes, "blocking_mode": BlockingModes}[k]
			if !isStr || !containsString(allowed, str) {
				vs = append(vs, fieldViolation{errcode.InvalidFormat, k, k + " must be one of " + strings.Join(allowed, ", "), truncateForDetails(fmt.Sprint(v))})
			}
		case "file_path":
			if !isStr || !validRelativePath(str) {
				vs = append(vs, fieldViolation{errcode.InvalidFormat, k, "file_path must be a repo-relative path without '..'", truncateForDetails(fmt.Sprint(v))})
			}
		case "estimated_hours", "actual_hours":
			f, ok := toFloat(v)
			if _, isS := v.(string); !ok || isS {
				vs = append(vs, fieldViolation{errcode.InvalidFormat, k, k + " must be a number", truncateForDetails(fmt.Sprint(v))})
			} else {
				checkHours(&vs, k, &f)
			}
		case "acceptance_criteria", "owners":
			if normalized, ok := normalizeJSON(v).([]any); !ok {
				vs = append(vs, fieldViolation{errcode.InvalidFormat, k, k + " must be a list of strings", truncateForDetails(fmt.Sprint(v))})
			} else {
				for _, it := range normalized {
					if _, ok := it.(string); !ok {
						vs = append(vs, fieldViolation{errcode.InvalidFormat, k, k + " must be a list of strings", truncateForDetails(fmt.Sprint(v))})
						break
					}
				}
			}
		}
	}
	return vs
}

// UpdateMetadata sets metadata keys of a node (the root excluded; a nil value
// deletes the key; "title" sets the node's title). Known keys are validated
// (enums, repo-relative file_path, non-negative hours, string lists); keys
// owned by transitions or rollups (status, started_at, completed_at,
// requirements, …) are refused. It returns the keys changed; when nothing
// changes, nothing is edited and the version does not move.
//
// Errors: TASK_NOT_FOUND, MISSING_REQUIRED (no updates), INVALID_FORMAT /
// VALIDATION_ERROR (bad or reserved keys; several are reported together in
// details.violations).
func UpdateMetadata(s *Spec, id string, updates map[string]any) (changed []string, err error) {
	defer s.mutate(&err)()
	n := s.Node(id)
	if n == nil || id == RootID {
		return nil, taskNotFound(s, "task_id", id)
	}
	return updateNodeMetadata(s, id, updates)
}

func updateNodeMetadata(s *Spec, id string, updates map[string]any) ([]string, error) {
	if len(updates) == 0 {
		return nil, newErr(errcode.MissingRequired, "metadata", "no metadata updates given")
	}
	updates = canonicalMetadata(updates)
	if vs := checkMetadataUpdate(updates); len(vs) > 0 {
		return nil, violationsErr(vs)
	}
	n := s.Node(id)
	changed := []string{}
	for _, k := range sortedKeys(updates) {
		v := updates[k]
		if k == "title" {
			if strings.TrimSpace(v.(string)) != n.Title {
				changed = append(changed, k)
			}
			continue
		}
		old, had := n.Metadata[k]
		if (v == nil && had) || (v != nil && (!had || !jsonEqual(old, v))) {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return changed, nil
	}
	e := s.Edit(id)
	for _, k := range changed {
		switch v := updates[k]; {
		case k == "title":
			e.Title = strings.TrimSpace(v.(string))
		case v == nil:
			e.DeleteMeta(k)
		default:
			e.SetMeta(k, v)
		}
	}
	s.touch()
	return changed, nil
}

// UpdatePhaseMetadata is UpdateMetadata for a phase (title, description,
// purpose, estimated_hours and free-form keys).
//
// Errors: PHASE_NOT_FOUND, MISSING_REQUIRED, INVALID_FORMAT,
// VALIDATION_ERROR.
func UpdatePhaseMetadata(s *Spec, phaseID string, updates map[string]any) (changed []string, err error) {
	defer s.mutate(&err)()
	p := s.Node(phaseID)
	if p == nil || p.Type != TypePhase {
		return nil, PhaseNotFound(s, "phase_id", phaseID)
	}
	return updateNodeMetadata(s, phaseID, updates)
}

// UpdateEstimate sets estimated_hours (when hours is not nil) and/or
// complexity (when not empty) of a node.
//
// Errors: TASK_NOT_FOUND, MISSING_REQUIRED (neither given), INVALID_FORMAT.
func UpdateEstimate(s *Spec, id string, hours *float64, complexity string) (err error) {
	defer s.mutate(&err)()
	if s.Node(id) == nil || id == RootID {
		return taskNotFound(s, "task_id", id)
	}
	if hours == nil && complexity == "" {
		return newErr(errcode.MissingRequired, "estimated_hours", "give estimated_hours or complexity")
	}
	var vs []fieldViolation
	checkHours(&vs, "estimated_hours", hours)
	checkEnum(&vs, "complexity", complexity, Complexities)
	if len(vs) > 0 {
		return violationsErr(vs)
	}
	e := s.Edit(id)
	if hours != nil {
		e.SetMeta("estimated_hours", *hours)
	}
	if complexity != "" {
		e.SetMeta("complexity", complexity)
	}
	s.touch()
	return nil
}

// MaxRequirements is the cap on a node's requirements.
const MaxRequirements = 50

// AddRequirement appends {id req-N, type, text} to a node's requirements (N
// one more than the largest existing) and returns it. reqType defaults to
// acceptance.
//
// Errors: TASK_NOT_FOUND, MISSING_REQUIRED (text), INVALID_FORMAT (type),
// DUPLICATE_ENTRY (same text, ignoring case and surrounding space),
// VALIDATION_ERROR (already 50).
func AddRequirement(s *Spec, id, reqType, text string) (req Requirement, err error) {
	defer s.mutate(&err)()
	n := s.Node(id)
	if n == nil || id == RootID {
		return req, taskNotFound(s, "task_id", id)
	}
	if reqType == "" {
		reqType = "acceptance"
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return req, newErr(errcode.MissingRequired, "text", "a requirement needs text")
	}
	if !containsString(RequirementTypes, reqType) {
		return req, newErr(errcode.InvalidFormat, "requirement_type", "requirement type must be one of %s", strings.Join(RequirementTypes, ", ")).
			WithDetail("received", truncateForDetails(reqType)).WithDetail("allowed", RequirementTypes)
	}
	existing := n.Requirements()
	if len(existing) >= MaxRequirements {
		return req, newErr(errcode.Validation, "text", "%s already has %d requirements (max %d)", id, len(existing), MaxRequirements)
	}
	max := 0
	for _, r := range existing {
		if strings.EqualFold(strings.TrimSpace(r.Text), text) {
			return req, newErr(errcode.DuplicateEntry, "text", "%s already has this requirement (%s)", id, r.ID).WithDetail("existing_id", r.ID)
		}
		if nums, ok := idNumbers(r.ID, "req"); ok && len(nums) == 1 && nums[0] > max {
			max = nums[0]
		}
	}
	req = Requirement{ID: fmt.Sprintf("req-%d", max+1), Type: reqType, Text: text}
	e := s.Edit(id)
	list, _ := e.Metadata["requirements"].([]any)
	list = append(cloneValue(list).([]any), map[string]any{"id": req.ID, "type": req.Type, "text": req.Text})
	e.SetMeta("requirements", list)
	s.touch()
	return req, nil
}
