package specs

import (
	"fmt"
	"slices"
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

// validRelativePath reports whether p is a clean repo-relative path: not
// empty, no NUL, not rooted (no leading separator, no drive letter) and no
// ".." segment.
func validRelativePath(p string) bool {
	if p == "" || strings.Contains(p, "\x00") || isRooted(p) {
		return false
	}
	return !slices.Contains(strings.FieldsFunc(p, isPathSep), "..")
}

// isPathSep reports whether r separates path segments ('/' or '\').
func isPathSep(r rune) bool { return r == '/' || r == '\\' }

// isRooted reports whether the non-empty path p starts at a root: a
// separator, or a drive letter ("c:").
func isRooted(p string) bool { return isPathSep(rune(p[0])) || len(p) >= 2 && p[1] == ':' }

// taskInputTypes are the node types a TaskInput may ask for.
var taskInputTypes = []NodeType{TypeTask, TypeSubtask, TypeVerify, TypeResearch}

// nodeType is the type of the node in describes (task when unset).
func (in TaskInput) nodeType() NodeType {
	if in.Type == "" {
		return TypeTask
	}
	return in.Type
}

// hasVerifyFields reports whether in sets a field of verify nodes.
func (in TaskInput) hasVerifyFields() bool {
	return in.VerificationType != "" || in.Command != "" || in.Expected != ""
}

// hasResearchFields reports whether in sets a field of research nodes.
func (in TaskInput) hasResearchFields() bool {
	return in.BlockingMode != "" || in.ResearchType != "" || in.Query != ""
}

// validateTaskInput checks a TaskInput; prefix is prepended to field names.
// Violations come in field order: task_type, title, the enums,
// estimated_hours, file_path, acceptance_criteria, then fields of another
// node type.
func validateTaskInput(in TaskInput, prefix string) []fieldViolation {
	var vs []fieldViolation
	t := in.nodeType()
	if !slices.Contains(taskInputTypes, t) {
		vs = append(vs, fieldViolation{errcode.InvalidFormat, prefix + "task_type", "task_type must be one of task, subtask, verify, research", truncateForDetails(string(in.Type))})
	}
	checkTaskTitle(&vs, prefix+"title", in.Title)
	checkEnum(&vs, prefix+"task_category", in.TaskCategory, TaskCategories)
	checkEnum(&vs, prefix+"complexity", in.Complexity, Complexities)
	checkEnum(&vs, prefix+"verification_type", in.VerificationType, VerificationTypes)
	checkEnum(&vs, prefix+"blocking_mode", in.BlockingMode, BlockingModes)
	checkHours(&vs, prefix+"estimated_hours", in.EstimatedHours)
	checkFilePath(&vs, prefix+"file_path", in.FilePath)
	checkCriteria(&vs, prefix, in.AcceptanceCriteria)
	checkTypeFields(&vs, prefix, t, in)
	return vs
}

// checkTaskTitle requires a non-blank title of at most 500 characters.
func checkTaskTitle(vs *[]fieldViolation, field, title string) {
	if strings.TrimSpace(title) == "" {
		*vs = append(*vs, fieldViolation{errcode.MissingRequired, field, "title is required and must not be blank", nil})
	} else if len([]rune(title)) > 500 {
		*vs = append(*vs, fieldViolation{errcode.InvalidFormat, field, "title must be at most 500 characters", truncateForDetails(title)})
	}
}

// checkFilePath refuses a file path that is set but not repo-relative.
func checkFilePath(vs *[]fieldViolation, field, p string) {
	if p != "" && !validRelativePath(p) {
		*vs = append(*vs, fieldViolation{errcode.InvalidFormat, field, "file_path must be a repo-relative path without '..'", truncateForDetails(p)})
	}
}

// checkCriteria refuses blank acceptance criteria, each by its index.
func checkCriteria(vs *[]fieldViolation, prefix string, criteria []string) {
	for i, c := range criteria {
		if strings.TrimSpace(c) == "" {
			*vs = append(*vs, fieldViolation{errcode.InvalidFormat, fmt.Sprintf("%sacceptance_criteria[%d]", prefix, i), "acceptance criteria must not be blank", ""})
		}
	}
}

// checkTypeFields refuses verify fields on a node of type t other than
// verify and research fields on one other than research.
func checkTypeFields(vs *[]fieldViolation, prefix string, t NodeType, in TaskInput) {
	if t != TypeVerify && in.hasVerifyFields() {
		*vs = append(*vs, fieldViolation{errcode.InvalidFormat, prefix + "verification_type", "verification fields apply to verify nodes only", string(t)})
	}
	if t != TypeResearch && in.hasResearchFields() {
		*vs = append(*vs, fieldViolation{errcode.InvalidFormat, prefix + "blocking_mode", "research fields apply to research nodes only", string(t)})
	}
}

// newPendingNode is a pending node of type t titled title (trimmed), with
// empty children, metadata and dependency lists and no id or parent yet.
func newPendingNode(t NodeType, title string) *Node {
	return &Node{Type: t, Title: strings.TrimSpace(title), Status: StatusPending, Children: ChildListOf([]string{}),
		Metadata: map[string]any{}, Dependencies: Dependencies{Blocks: []string{}, BlockedBy: []string{}, Depends: []string{}}}
}

// setMetas sets every key of m on n.
func setMetas(n *Node, m map[string]any) {
	for k, v := range m {
		n.SetMeta(k, v)
	}
}

// setMetaText sets metadata k to v when v is not empty.
func setMetaText(n *Node, k, v string) {
	if v != "" {
		n.SetMeta(k, v)
	}
}

// description is in's description: Description, else its Details joined
// by newlines and trimmed.
func (in TaskInput) description() string {
	if in.Description != "" {
		return in.Description
	}
	return strings.TrimSpace(strings.Join(in.Details, "\n"))
}

// typeMeta writes the metadata only one node type has.
var typeMeta = map[NodeType]func(n *Node, in TaskInput){TypeVerify: setVerifyMeta, TypeResearch: setResearchMeta}

// setVerifyMeta writes a verify node's verification_type (manual by
// default, run-tests when a command is given), command and expected.
func setVerifyMeta(n *Node, in TaskInput) {
	vt := in.VerificationType
	if vt == "" {
		vt = "manual"
		if in.Command != "" {
			vt = "run-tests"
		}
	}
	n.SetMeta("verification_type", vt)
	setMetaText(n, "command", in.Command)
	setMetaText(n, "expected", in.Expected)
}

// setResearchMeta writes a research node's blocking_mode (soft by
// default), research_type and query.
func setResearchMeta(n *Node, in TaskInput) {
	mode := in.BlockingMode
	if mode == "" {
		mode = "soft"
	}
	n.SetMeta("blocking_mode", mode)
	setMetaText(n, "research_type", in.ResearchType)
	setMetaText(n, "query", in.Query)
}

// buildNode makes the pending node described by in (without id/parent).
func buildNode(in TaskInput) *Node {
	t := in.nodeType()
	n := newPendingNode(t, in.Title)
	setMetas(n, in.Metadata)
	setMetaText(n, "description", in.description())
	setMetaText(n, "task_category", in.TaskCategory)
	setMetaText(n, "file_path", in.FilePath)
	setMetaText(n, "complexity", in.Complexity)
	if len(in.AcceptanceCriteria) > 0 {
		n.SetMeta("acceptance_criteria", in.AcceptanceCriteria)
	}
	if in.EstimatedHours != nil {
		n.SetMeta("estimated_hours", *in.EstimatedHours)
	}
	if set := typeMeta[t]; set != nil {
		set(n, in)
	}
	return n
}

// allowedChildren are the node types each type of node may hold.
var allowedChildren = map[NodeType][]NodeType{
	TypePhase:   {TypeTask, TypeVerify, TypeResearch, TypeGroup},
	TypeGroup:   {TypeTask, TypeVerify, TypeResearch, TypeGroup},
	TypeTask:    {TypeTask, TypeSubtask, TypeVerify, TypeResearch},
	TypeSubtask: {TypeTask, TypeSubtask, TypeVerify, TypeResearch},
	TypeSpec:    {TypePhase},
}

// allowedUnder reports whether a node of type child may sit under parent.
func allowedUnder(parent *Node, child NodeType) bool {
	return slices.Contains(allowedChildren[parent.Type], child)
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
func defaultIndex(s *Spec, children ChildList, t NodeType) int {
	i := children.Len()
	if t == TypeVerify {
		return i
	}
	for i > 0 {
		c := s.Node(children.At(i - 1))
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
	id, _, err = addTask(s, parentID, in)
	return id, err
}

// addTask is AddTask that also returns the new node's index among its
// parent's children.
func addTask(s *Spec, parentID string, in TaskInput) (id string, idx int, err error) {
	defer s.mutate(&err)()
	if parentID == "" {
		return "", 0, newErr(errcode.MissingRequired, "parent", "parent is required (a phase or task id)")
	}
	in = in.canonical()
	if vs := validateTaskInput(in, ""); len(vs) > 0 {
		return "", 0, violationsErr(vs)
	}
	parent := s.Node(parentID)
	if parent == nil {
		return "", 0, NodeNotFound(s, "parent", parentID)
	}
	return addChild(s, parent, buildNode(in), in.Position)
}

// addChild adds n under parent at position (nil: before the parent's
// trailing verify nodes, or last for a verify node) and returns its new id
// and its index among the parent's children.
func addChild(s *Spec, parent *Node, n *Node, position *int) (string, int, error) {
	id, idx, err := placeChild(s, parent, n, position)
	if err != nil {
		return "", 0, err
	}
	RecomputeAncestors(s, id)
	s.touch()
	return id, idx, nil
}

// placeChild is addChild without the rollups and the header's touch: the
// caller must recompute n's ancestors before the mutation ends.
func placeChild(s *Spec, parent *Node, n *Node, position *int) (string, int, error) {
	if !allowedUnder(parent, n.Type) {
		hint := ""
		if parent.Type == TypeSpec {
			hint = "; add a phase with phase-add"
		}
		return "", 0, newErr(errcode.InvalidParent, "parent", "a %s cannot be added under %s (%s)%s", n.Type, parent.ID, parent.Type, hint).
			WithDetail("received", parent.ID)
	}
	idx, perr := positionIndex(position, parent.Children.Len(), defaultIndex(s, parent.Children, n.Type), "position")
	if perr != nil {
		return "", 0, perr
	}
	n.ID = NewNodeID(s, parent.ID, n.Type)
	n.Parent = parent.ID
	s.Put(n)
	s.insertChild(parent.ID, idx, n.ID)
	return n.ID, idx, nil
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
		unlinkOutside(s, s.Node(id), set)
	}
	for _, id := range ids {
		s.Delete(id)
	}
}

// unlinkOutside removes n's blocks and blocked_by edges (both halves) to
// nodes outside set.
func unlinkOutside(s *Spec, n *Node, set map[string]bool) {
	for _, b := range n.Dependencies.Blocks {
		if !set[b] {
			unlinkBlocked(s, b, n.ID)
		}
	}
	for _, a := range n.Dependencies.BlockedBy {
		if !set[a] {
			unlinkBlocked(s, n.ID, a)
		}
	}
}

// RemoveTask removes a node that is not a phase or the root, with its
// subtree when cascade is true, and returns the removed ids (pre-order).
//
// Errors: TASK_NOT_FOUND, VALIDATION_ERROR (the root or a phase: use
// RemovePhase; children without cascade, field cascade).
func RemoveTask(s *Spec, id string, cascade bool) (removed []string, err error) {
	defer s.mutate(&err)()
	n, err := taskNode(s, id, "remove phases with phase-remove")
	if err != nil {
		return nil, err
	}
	if !n.IsLeaf() && !cascade {
		return nil, newErr(errcode.Validation, "cascade", "%s has %d children: pass cascade to remove them too", id, n.Children.Len()).
			WithDetail("children", cloneStrings(n.Children.Slice()))
	}
	removed = subtree(s, id)
	parentID := n.Parent
	removeNodes(s, removed)
	removeChildOf(s, parentID, id)
	RecomputeAncestors(s, parentID)
	s.touch()
	return removed, nil
}

// taskNode is the node id for task remove and move: TASK_NOT_FOUND (field
// task_id) when there is none, VALIDATION_ERROR when it is the root or a
// phase (the message ends with hint, the phase tool to use).
func taskNode(s *Spec, id, hint string) (*Node, error) {
	n := s.Node(id)
	if n == nil {
		return nil, taskNotFound(s, "task_id", id)
	}
	if id == RootID || n.Type == TypePhase {
		return nil, newErr(errcode.Validation, "task_id", "%s is a %s: %s", id, n.Type, hint)
	}
	return n, nil
}

// removeChildOf removes child from the children of parentID, when that node
// exists.
func removeChildOf(s *Spec, parentID, child string) {
	if s.Has(parentID) {
		e := s.Edit(parentID)
		e.Children = e.Children.Removed(child)
	}
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
	n, err := taskNode(s, id, "move phases with phase-move")
	if err != nil {
		return err
	}
	oldParent := n.Parent
	if newParent == "" {
		newParent = oldParent
	}
	np, err := moveTarget(s, n, newParent)
	if err != nil {
		return err
	}
	siblings := np.Children.Removed(id)
	idx, perr := positionIndex(position, siblings.Len(), defaultIndex(s, siblings, n.Type), "position")
	if perr != nil {
		return perr
	}
	if err := reparent(s, id, oldParent, newParent, idx); err != nil {
		return err
	}
	RecomputeAncestors(s, id)
	s.touch()
	return nil
}

// moveTarget is the node newParent that n moves under. Errors:
// PHASE_NOT_FOUND / TASK_NOT_FOUND (field parent), INVALID_PARENT (inside
// n's own subtree, or a parent n's type may not sit under).
func moveTarget(s *Spec, n *Node, newParent string) (*Node, error) {
	np := s.Node(newParent)
	if np == nil {
		return nil, NodeNotFound(s, "parent", newParent)
	}
	if isWithin(s, newParent, n.ID) {
		return nil, newErr(errcode.InvalidParent, "parent", "cannot move %s into its own subtree (%s)", n.ID, newParent).WithDetail("received", newParent)
	}
	if !allowedUnder(np, n.Type) {
		return nil, newErr(errcode.InvalidParent, "parent", "a %s cannot sit under %s (%s)", n.Type, newParent, np.Type).WithDetail("received", newParent)
	}
	return np, nil
}

// isWithin reports whether id is ancestor or id itself, following parents
// from id (at most 10000 steps, stopping at a missing node).
func isWithin(s *Spec, id, ancestor string) bool {
	for x, guard := id, 0; x != "" && guard < 10000; guard++ {
		if x == ancestor {
			return true
		}
		xn := s.Node(x)
		if xn == nil {
			return false
		}
		x = xn.Parent
	}
	return false
}

// reparent moves id from oldParent's children to newParent's at idx and,
// when the parent changes, refuses (CIRCULAR_DEPENDENCY, details.cycle) a
// move whose inherited edges close a cycle, else recomputes the old
// parent's ancestors.
func reparent(s *Spec, id, oldParent, newParent string, idx int) error {
	removeChildOf(s, oldParent, id)
	e := s.Edit(newParent)
	e.Children = e.Children.Removed(id).Inserted(idx, id)
	if oldParent == newParent {
		return nil
	}
	s.Edit(id).Parent = newParent
	if cycle := moveCycle(s, id, newParent); cycle != nil {
		return newErr(errcode.CircularDependency, "parent", "moving %s under %s would create a dependency cycle", id, newParent).
			WithDetail("cycle", cycle)
	}
	RecomputeAncestors(s, oldParent)
	return nil
}

// moveCycle is the dependency cycle id closes now that it sits under
// newParent (without its first node), or nil.
func moveCycle(s *Spec, id, newParent string) []string {
	if path := waitPath(s, vertex{newParent, true}, vertex{id, true}); path != nil {
		return cycleIDs(id, newParent, path)[1:]
	}
	if path := waitPath(s, vertex{id, false}, vertex{newParent, false}); path != nil {
		return cycleIDs(newParent, id, path)[1:]
	}
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

// addPhase inserts the pending phase in describes (no scaffold) and, unless
// in.LinkPrevious is false, chains it after the phase before it.
//
// Errors: MISSING_REQUIRED (title), INVALID_FORMAT (estimated_hours),
// VALIDATION_ERROR (no root), INVALID_POSITION.
func addPhase(s *Spec, in PhaseInput) (PhaseResult, error) {
	idx, err := phaseSlot(s, in)
	if err != nil {
		return PhaseResult{}, err
	}
	id := NewPhaseID(s)
	s.Put(newPhaseNode(id, in))
	r := s.Edit(RootID)
	r.Children = r.Children.Inserted(idx, id)
	res := PhaseResult{PhaseID: id}
	if in.LinkPrevious == nil || *in.LinkPrevious {
		res.LinkedTo, res.Relinked = chainAfterPrevious(s, id, r.Children, idx)
	}
	RecomputeAncestors(s, id)
	return res, nil
}

// phaseSlot checks in (title, estimated_hours) and returns the index among
// the root's children where the phase goes (in.Position, else last).
func phaseSlot(s *Spec, in PhaseInput) (int, error) {
	if strings.TrimSpace(in.Title) == "" {
		return 0, newErr(errcode.MissingRequired, "title", "a phase needs a title")
	}
	var vs []fieldViolation
	if checkHours(&vs, "estimated_hours", in.EstimatedHours); len(vs) > 0 {
		return 0, violationsErr(vs)
	}
	root := s.Root()
	if root == nil {
		return 0, newErr(errcode.Validation, "spec_id", "spec %s has no root node; run spec fix", s.Header.SpecID)
	}
	idx, perr := positionIndex(in.Position, root.Children.Len(), root.Children.Len(), "position")
	if perr != nil {
		return 0, perr
	}
	return idx, nil
}

// newPhaseNode is the pending phase id under the root with in's metadata,
// purpose, description and estimated_hours.
func newPhaseNode(id string, in PhaseInput) *Node {
	n := newPendingNode(TypePhase, in.Title)
	n.ID, n.Parent = id, RootID
	setMetas(n, in.Metadata)
	setMetaText(n, "purpose", in.Purpose)
	setMetaText(n, "description", in.Description)
	if in.EstimatedHours != nil {
		n.SetMeta("estimated_hours", *in.EstimatedHours)
	}
	return n
}

// chainAfterPrevious makes phase id, at index at of the root's children,
// blocked by the phase before it (returned as prev; "" when none, and then
// nothing changes). When that phase blocked the phase after id, the edge
// is moved to run through id (returned in relinked).
func chainAfterPrevious(s *Spec, id string, children ChildList, at int) (prev string, relinked []Link) {
	prev = nearestPhase(s, children, at-1, -1)
	if prev == "" {
		return "", nil
	}
	linkBlocked(s, id, prev)
	next := nearestPhase(s, children, at+1, +1)
	if nn := s.Node(next); nn != nil && containsString(nn.Dependencies.BlockedBy, prev) {
		unlinkBlocked(s, next, prev)
		linkBlocked(s, next, id)
		relinked = []Link{{Blocker: id, Blocked: next}}
	}
	return prev, relinked
}

// nearestPhase is the first phase among children from index from, stepping
// by step (-1 backwards, +1 forwards), or "" when there is none.
func nearestPhase(s *Spec, children ChildList, from, step int) string {
	for i := from; i >= 0 && i < children.Len(); i += step {
		if c := s.Node(children.At(i)); c != nil && c.Type == TypePhase {
			return c.ID
		}
	}
	return ""
}

// Scaffold titles.
const (
	ScaffoldRunTestsTitle = "Run tests"
	ScaffoldReviewTitle   = "Review against the spec"
)

func addVerifyScaffold(s *Spec, phaseID, testCommand string) []string {
	phase := s.Node(phaseID)
	run := buildNode(TaskInput{Type: TypeVerify, Title: ScaffoldRunTestsTitle, Command: testCommand, Expected: "All tests pass"})
	runID, _, _ := addChild(s, phase, run, nil)
	review := buildNode(TaskInput{Type: TypeVerify, Title: ScaffoldReviewTitle, VerificationType: "manual",
		Expected: "The implementation matches the spec"})
	reviewID, _, _ := addChild(s, s.Node(phaseID), review, nil)
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
	tasks = canonicalTasks(tasks)
	in.Metadata = canonicalMetadata(in.Metadata)
	defaults := canonicalMetadata(foundryDefaults(in.MetadataDefaults))
	if vs := bulkViolations(in, tasks, defaults); len(vs) > 0 {
		return PhaseResult{}, violationsErr(vs)
	}
	res, err = addPhase(s, in)
	if err != nil {
		return PhaseResult{}, err
	}
	if err = addBulkTasks(s, &res, tasks, defaults); err != nil {
		return PhaseResult{}, err
	}
	if in.VerifyScaffold && !hasVerifyTask(tasks) {
		res.VerifyIDs = append(res.VerifyIDs, addVerifyScaffold(s, res.PhaseID, in.TestCommand)...)
	}
	s.touch()
	return res, nil
}

// bulkViolations are every violation of an AddPhaseBulk call, in order:
// phase.title, phase.estimated_hours, metadata_defaults.key, then
// tasks[i].field task by task.
func bulkViolations(in PhaseInput, tasks []TaskInput, defaults map[string]any) []fieldViolation {
	var vs []fieldViolation
	if strings.TrimSpace(in.Title) == "" {
		vs = append(vs, fieldViolation{errcode.MissingRequired, "phase.title", "a phase needs a title", nil})
	}
	checkHours(&vs, "phase.estimated_hours", in.EstimatedHours)
	for _, v := range checkMetadataUpdate(defaults) {
		v.Field = "metadata_defaults." + v.Field
		vs = append(vs, v)
	}
	return append(vs, taskListViolations(tasks)...)
}

// taskListViolations checks each task (validateTaskInput, fields named
// tasks[i].field) and that every subtask follows a task it can belong to.
func taskListViolations(tasks []TaskInput) []fieldViolation {
	var vs []fieldViolation
	seenTask := false
	for i, t := range tasks {
		prefix := fmt.Sprintf("tasks[%d].", i)
		vs = append(vs, validateTaskInput(t, prefix)...)
		if t.Type == TypeSubtask && !seenTask {
			vs = append(vs, fieldViolation{errcode.Validation, prefix + "type", "a subtask must follow a task it belongs to", "subtask"})
		}
		seenTask = seenTask || t.nodeType() == TypeTask
	}
	return vs
}

// hasVerifyTask reports whether tasks hold a verify node.
func hasVerifyTask(tasks []TaskInput) bool {
	return slices.ContainsFunc(tasks, func(t TaskInput) bool { return t.Type == TypeVerify })
}

// addBulkTasks adds tasks in order under the phase res.PhaseID, each
// subtask under the closest preceding task, filling the metadata keys a
// task leaves unset from defaults; the ids go to res (verify nodes to
// VerifyIDs, the others to TaskIDs). Errors are addChild's. The rollups
// are computed once all are placed (a rollup within a mutation reads every
// node the mutation changed, so one per task would make a bulk quadratic):
// each node's own as it is placed (a leaf), each task that received
// subtasks from its children, then the phase and its ancestors.
func addBulkTasks(s *Spec, res *PhaseResult, tasks []TaskInput, defaults map[string]any) error {
	lastTask := ""
	var parents []string // the tasks that received subtasks, each once
	for _, t := range tasks {
		n := buildNode(t)
		fillUnsetMeta(n, defaults)
		parent := res.PhaseID
		if n.Type == TypeSubtask {
			parent = lastTask
		}
		id, _, err := placeChild(s, s.Node(parent), n, nil)
		if err != nil {
			return err
		}
		rollupNode(s, id, false) // a leaf's own counts
		s.touch()
		if n.Type == TypeTask {
			lastTask = id
		}
		if parent != res.PhaseID && (len(parents) == 0 || parents[len(parents)-1] != parent) {
			parents = append(parents, parent)
		}
		res.addNode(n.Type, id)
	}
	for _, p := range parents {
		rollupNode(s, p, true)
	}
	RecomputeAncestors(s, res.PhaseID)
	return nil
}

// fillUnsetMeta sets each non-nil key of defaults that n's metadata lacks.
func fillUnsetMeta(n *Node, defaults map[string]any) {
	for k, v := range defaults {
		if _, ok := n.Metadata[k]; !ok && v != nil {
			n.SetMeta(k, v)
		}
	}
}

// addNode lists a created node's id: verify nodes in VerifyIDs, the others
// in TaskIDs.
func (r *PhaseResult) addNode(t NodeType, id string) {
	if t == TypeVerify {
		r.VerifyIDs = append(r.VerifyIDs, id)
	} else {
		r.TaskIDs = append(r.TaskIDs, id)
	}
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
	if active := nonPendingLeaves(s, ids[1:]); len(active) > 0 && !force {
		return res, nonPendingErr(phaseID, active)
	}
	before := cloneStrings(p.Dependencies.BlockedBy)
	after := cloneStrings(p.Dependencies.Blocks)
	res.PhaseID = phaseID
	res.Removed = ids
	res.TasksRemoved = p.TotalTasks
	removeNodes(s, ids)
	r := s.Edit(RootID)
	r.Children = r.Children.Removed(phaseID)
	res.Relinked = relinkAcross(s, before, after)
	RecomputeAncestors(s, RootID)
	s.touch()
	return res, nil
}

// nonPendingLeaves are the leaves of ids whose status is not pending.
func nonPendingLeaves(s *Spec, ids []string) []string {
	var active []string
	for _, id := range ids {
		if n := s.Node(id); n.Status != StatusPending && n.IsLeaf() {
			active = append(active, id)
		}
	}
	return active
}

// nonPendingErr is RemovePhase's CONFLICT for the non-pending leaves active
// (details.non_pending lists the first 20).
func nonPendingErr(phaseID string, active []string) *core.Error {
	list := active[:min(len(active), 20)]
	return newErr(errcode.Conflict, "force", "phase %s has %d tasks that are not pending; pass force to remove it anyway", phaseID, len(active)).
		WithDetail("non_pending", list).WithDetail("non_pending_count", len(active))
}

// relinkAcross makes every c of after blocked by every a of before, where
// both exist, differ, the edge is new and would close no cycle, and returns
// the edges added in order.
func relinkAcross(s *Spec, before, after []string) []Link {
	var out []Link
	for _, a := range before {
		for _, c := range after {
			if canLink(s, c, a) {
				linkBlocked(s, c, a)
				out = append(out, Link{Blocker: a, Blocked: c})
			}
		}
	}
	return out
}

// canLink reports whether "waiter blocked_by prereq" can be added: both
// nodes exist, they differ, the edge is not there yet and it closes no
// cycle.
func canLink(s *Spec, waiter, prereq string) bool {
	w := s.Node(waiter)
	if w == nil || !s.Has(prereq) || waiter == prereq || containsString(w.Dependencies.BlockedBy, prereq) {
		return false
	}
	return wouldCycle(s, waiter, prereq) == nil
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
	rest := root.Children.Removed(phaseID)
	idx, perr := positionIndex(&position, rest.Len(), rest.Len(), "position")
	if perr != nil {
		return perr
	}
	r := s.Edit(RootID)
	r.Children = rest.Inserted(idx, phaseID)
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

// checkMetadataUpdate validates updates to a node's metadata, key by key in
// sorted order: reserved keys are refused, and a known key with a non-nil
// value (and the title, which a nil cannot delete) must pass its
// metadataValueChecks entry.
func checkMetadataUpdate(updates map[string]any) []fieldViolation {
	var vs []fieldViolation
	for _, k := range sortedKeys(updates) {
		v := updates[k]
		if why, ok := reservedNodeKeys[k]; ok {
			vs = append(vs, fieldViolation{errcode.Validation, k, fmt.Sprintf("%s cannot be set directly (%s)", k, why), nil})
			continue
		}
		// nil deletes a key; the title cannot be deleted, so a nil title is
		// checked (and refused) like any other value.
		if check := metadataValueChecks[k]; check != nil && (v != nil || k == "title") {
			vs = append(vs, check(k, v)...)
		}
	}
	return vs
}

// metadataValueChecks check the value of a known metadata key; each returns
// the key's violations (none when the value is fine).
var metadataValueChecks = map[string]func(k string, v any) []fieldViolation{
	"title":         checkTitleValue,
	"task_category": checkEnumValue, "complexity": checkEnumValue, "verification_type": checkEnumValue, "blocking_mode": checkEnumValue,
	"file_path":       checkFilePathValue,
	"estimated_hours": checkHoursValue, "actual_hours": checkHoursValue,
	"acceptance_criteria": checkStringListValue, "owners": checkStringListValue,
}

// invalidValue is the INVALID_FORMAT violation of key k holding v.
func invalidValue(k string, v any, message string) []fieldViolation {
	return []fieldViolation{{errcode.InvalidFormat, k, message, truncateForDetails(fmt.Sprint(v))}}
}

func checkTitleValue(k string, v any) []fieldViolation {
	if str, ok := v.(string); !ok || strings.TrimSpace(str) == "" {
		return []fieldViolation{{errcode.InvalidFormat, k, "title must be a non-blank string", fmt.Sprint(v)}}
	}
	return nil
}

func checkEnumValue(k string, v any) []fieldViolation {
	allowed := metadataEnums[k]
	if str, ok := v.(string); !ok || !containsString(allowed, str) {
		return invalidValue(k, v, k+" must be one of "+strings.Join(allowed, ", "))
	}
	return nil
}

func checkFilePathValue(k string, v any) []fieldViolation {
	if str, ok := v.(string); !ok || !validRelativePath(str) {
		return invalidValue(k, v, "file_path must be a repo-relative path without '..'")
	}
	return nil
}

func checkHoursValue(k string, v any) []fieldViolation {
	f, ok := toFloat(v)
	if _, isS := v.(string); !ok || isS {
		return invalidValue(k, v, k+" must be a number")
	}
	var vs []fieldViolation
	checkHours(&vs, k, &f)
	return vs
}

func checkStringListValue(k string, v any) []fieldViolation {
	if !isStringList(v) {
		return invalidValue(k, v, k+" must be a list of strings")
	}
	return nil
}

// isStringList reports whether v, read as JSON, is a list of strings.
func isStringList(v any) bool {
	list, ok := normalizeJSON(v).([]any)
	if !ok {
		return false
	}
	for _, it := range list {
		if _, ok := it.(string); !ok {
			return false
		}
	}
	return true
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
	if _, err := nonRootNode(s, id); err != nil {
		return nil, err
	}
	return updateNodeMetadata(s, id, updates)
}

// nonRootNode is node id of s; TASK_NOT_FOUND (field task_id) when there
// is none or id is the root.
func nonRootNode(s *Spec, id string) (*Node, error) {
	n := s.Node(id)
	if n == nil || id == RootID {
		return nil, taskNotFound(s, "task_id", id)
	}
	return n, nil
}

func updateNodeMetadata(s *Spec, id string, updates map[string]any) ([]string, error) {
	if len(updates) == 0 {
		return nil, newErr(errcode.MissingRequired, "metadata", "no metadata updates given")
	}
	updates = canonicalMetadata(updates)
	if vs := checkMetadataUpdate(updates); len(vs) > 0 {
		return nil, violationsErr(vs)
	}
	changed := changedKeys(s.Node(id), updates)
	if len(changed) == 0 {
		return changed, nil
	}
	applyMetadata(s.Edit(id), changed, updates)
	s.touch()
	return changed, nil
}

// changedKeys are the keys of updates, sorted, that would change n (never
// nil).
func changedKeys(n *Node, updates map[string]any) []string {
	changed := []string{}
	for _, k := range sortedKeys(updates) {
		if metaChanges(n, k, updates[k]) {
			changed = append(changed, k)
		}
	}
	return changed
}

// metaChanges reports whether setting key k to v (nil: deleting it; "title":
// the node's title) changes n.
func metaChanges(n *Node, k string, v any) bool {
	if k == "title" {
		return strings.TrimSpace(v.(string)) != n.Title
	}
	old, had := n.Metadata[k]
	if v == nil {
		return had
	}
	return !had || !jsonEqual(old, v)
}

// applyMetadata writes the keys of updates listed in keys to e: "title"
// sets the title (trimmed), nil deletes the key.
func applyMetadata(e *Node, keys []string, updates map[string]any) {
	for _, k := range keys {
		switch v := updates[k]; {
		case k == "title":
			e.Title = strings.TrimSpace(v.(string))
		case v == nil:
			e.DeleteMeta(k)
		default:
			e.SetMeta(k, v)
		}
	}
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
	if _, err := nonRootNode(s, id); err != nil {
		return err
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
	setEstimate(s.Edit(id), hours, complexity)
	s.touch()
	return nil
}

// setEstimate sets estimated_hours (when hours is not nil) and complexity
// (when not empty) on e.
func setEstimate(e *Node, hours *float64, complexity string) {
	if hours != nil {
		e.SetMeta("estimated_hours", *hours)
	}
	setMetaText(e, "complexity", complexity)
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
	n, err := nonRootNode(s, id)
	if err != nil {
		return req, err
	}
	req, err = newRequirement(id, n.Requirements(), reqType, text)
	if err != nil {
		return Requirement{}, err
	}
	e := s.Edit(id)
	list, _ := e.Metadata["requirements"].([]any)
	list = append(cloneValue(list).([]any), map[string]any{"id": req.ID, "type": req.Type, "text": req.Text})
	e.SetMeta("requirements", list)
	s.touch()
	return req, nil
}

// newRequirement is the requirement to add to node id, which has existing:
// text trimmed, reqType (acceptance when empty), the id req-N with N one
// more than the largest existing. Errors: MISSING_REQUIRED (text),
// INVALID_FORMAT (type), VALIDATION_ERROR (already MaxRequirements),
// DUPLICATE_ENTRY (same text ignoring case and surrounding space).
func newRequirement(id string, existing []Requirement, reqType, text string) (Requirement, error) {
	if reqType == "" {
		reqType = "acceptance"
	}
	text = strings.TrimSpace(text)
	if err := checkRequirementInput(reqType, text); err != nil {
		return Requirement{}, err
	}
	if len(existing) >= MaxRequirements {
		return Requirement{}, newErr(errcode.Validation, "text", "%s already has %d requirements (max %d)", id, len(existing), MaxRequirements)
	}
	if i := slices.IndexFunc(existing, func(r Requirement) bool { return strings.EqualFold(strings.TrimSpace(r.Text), text) }); i >= 0 {
		return Requirement{}, newErr(errcode.DuplicateEntry, "text", "%s already has this requirement (%s)", id, existing[i].ID).WithDetail("existing_id", existing[i].ID)
	}
	return Requirement{ID: fmt.Sprintf("req-%d", maxRequirementNumber(existing)+1), Type: reqType, Text: text}, nil
}

// checkRequirementInput requires text (MISSING_REQUIRED) and a known
// requirement type (INVALID_FORMAT).
func checkRequirementInput(reqType, text string) error {
	if text == "" {
		return newErr(errcode.MissingRequired, "text", "a requirement needs text")
	}
	if !containsString(RequirementTypes, reqType) {
		return newErr(errcode.InvalidFormat, "requirement_type", "requirement type must be one of %s", strings.Join(RequirementTypes, ", ")).
			WithDetail("received", truncateForDetails(reqType)).WithDetail("allowed", RequirementTypes)
	}
	return nil
}

// maxRequirementNumber is the largest N among the req-N ids of existing (0
// when none).
func maxRequirementNumber(existing []Requirement) int {
	top := 0
	for _, r := range existing {
		if n, ok := singleNumber(r.ID, "req"); ok {
			top = max(top, n)
		}
	}
	return top
}
