package specs

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/fuzzy"
)

// Severity of a diagnostic.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Diagnostic categories (foundry-mcp's list).
const (
	CategoryStructure    = "structure"
	CategoryMetadata     = "metadata"
	CategoryHierarchy    = "hierarchy"
	CategoryNode         = "node"
	CategoryDependency   = "dependency"
	CategoryCounts       = "counts"
	CategoryNodeMetadata = "node-metadata"
)

// Size caps checked by Validate.
const (
	MaxChildren      = 1000
	MaxJournal       = 1000
	MaxNestingDepth  = 10
	maxFixRounds     = 6
	maxDidYouMeanLen = 2
	// maxDidYouMeanInput bounds the quadratic distance: longer values get no
	// suggestion.
	maxDidYouMeanInput = 64
)

// Diagnostic is one finding of Validate. Location is a path into the
// document ("spec_id", "metadata.risks", "hierarchy.task-1-2.status",
// "hierarchy.task-1-2.dependencies.blocked_by"). FixID, set when
// AutoFixable, identifies the fix in Fix's applied/skipped lists and in
// FixOptions.Only: "<CODE>:<location>" plus ":<target>" where one location
// has several.
type Diagnostic struct {
	Code         string   `json:"code"`
	Message      string   `json:"message"`
	Severity     Severity `json:"severity"`
	Category     string   `json:"category"`
	Location     string   `json:"location"`
	NodeID       string   `json:"node_id,omitempty"`
	SuggestedFix string   `json:"suggested_fix,omitempty"`
	AutoFixable  bool     `json:"auto_fixable"`
	FixID        string   `json:"fix_id,omitempty"`
}

// ValidationReport is the result of Validate. IsValid means no errors.
type ValidationReport struct {
	IsValid      bool         `json:"is_valid"`
	ErrorCount   int          `json:"error_count"`
	WarningCount int          `json:"warning_count"`
	InfoCount    int          `json:"info_count"`
	Diagnostics  []Diagnostic `json:"diagnostics"`
}

// issue is a diagnostic with its fix (nil: not auto-fixable). Issues of one
// group share one fix, run once per round.
type issue struct {
	Diagnostic
	fix   func(d *Document) bool
	group string
}

type checker struct {
	d      *Document
	clock  core.Clock
	issues []issue
	// flagged records nodes that already have a hierarchy issue this round.
	flagged map[string]bool
	// ctx, when set, stops the node loops once done (every ctxEvery
	// nodes); err is then its error.
	ctx context.Context
	err error
}

// ctxEvery is how many nodes the checker's loops handle between looks at
// the context: a look costs little next to 256 nodes' checks.
const ctxEvery = 256

// stopped reports whether the checker stops before the i-th item of a
// loop: its context is done (looked at every ctxEvery items).
func (c *checker) stopped(i int) bool {
	if c.err == nil && c.ctx != nil && i%ctxEvery == 0 {
		c.err = c.ctx.Err()
	}
	return c.err != nil
}

func (c *checker) add(sev Severity, cat, code, loc, nodeID, suggestion string, fix func(*Document) bool, format string, args ...any) *issue {
	is := issue{Diagnostic: Diagnostic{Code: code, Severity: sev, Category: cat, Location: loc, NodeID: nodeID,
		Message: fmt.Sprintf(format, args...), SuggestedFix: suggestion, AutoFixable: fix != nil}, fix: fix}
	if fix != nil {
		is.FixID = code + ":" + loc
	}
	c.issues = append(c.issues, is)
	return &c.issues[len(c.issues)-1]
}

// keyed appends a target to the fix id of an issue.
func keyed(is *issue, key string) {
	if is.FixID != "" {
		is.FixID += ":" + key
	}
}

// Validate checks a full document (typically one just parsed from foundry
// JSON or hand-edited) against the spec model and returns every diagnostic.
// It never fails and never modifies doc. See the package's fixture tests for
// the codes it emits: MISSING_REQUIRED_FIELD, INVALID_FIELD_TYPE,
// INVALID_ID (a spec or node id outside IDPattern; never auto-fixed),
// INVALID_SPEC_ID_FORMAT, INVALID_TIMESTAMP, INVALID_LIFECYCLE,
// MISSING_MISSION, INVALID_METADATA_TYPE, INVALID_RISK, MISSING_SPEC_ROOT,
// INVALID_ROOT, INVALID_NODE, MISSING_NODE_FIELD, INVALID_NODE_TYPE,
// INVALID_STATUS (with a did-you-mean), EMPTY_TITLE, MISSING_CHILD_NODE,
// DUPLICATE_CHILD, PARENT_CHILD_MISMATCH, ORPHANED_NODES,
// INVALID_PARENT_TYPE, NESTING_TOO_DEEP, TOO_MANY_CHILDREN,
// DUPLICATE_DEPENDENCY, SELF_DEPENDENCY, MISSING_DEPENDENCY_TARGET,
// BIDIRECTIONAL_INCONSISTENCY, CYCLE_DETECTED, TOTAL_TASKS_MISMATCH,
// COMPLETED_TASKS_MISMATCH, STATUS_ROLLUP_MISMATCH, SPEC_ROLLUP_MISMATCH,
// MISSING_VERIFICATION_TYPE, INVALID_VERIFICATION_TYPE,
// INVALID_TASK_CATEGORY, INVALID_COMPLEXITY, INVALID_ESTIMATE,
// INVALID_BLOCKING_MODE, INVALID_FILE_PATH, LEGACY_METADATA_FIELD,
// MISSING_FILE_PATH, MISSING_ACCEPTANCE_CRITERIA, JOURNAL_TOO_LARGE,
// INVALID_JOURNAL_ENTRY.
//
// A document without errors, once stored with FromDocument, satisfies
// CheckInvariants.
func Validate(doc *Document) ValidationReport {
	if doc == nil {
		doc = &Document{absent: dSpecID | dTitle | dGenerated | dLastUpdated | dMetadata | dHierarchy}
	}
	c := &checker{d: doc, flagged: map[string]bool{}}
	c.run()
	return report(c.issues)
}

// ValidateContext is Validate that stops with ctx's error once ctx is
// done, so that a call's deadline holds for a large document.
func ValidateContext(ctx context.Context, doc *Document) (ValidationReport, error) {
	if doc == nil {
		return Validate(nil), nil
	}
	c := &checker{d: doc, flagged: map[string]bool{}, ctx: ctx}
	c.run()
	if c.err != nil {
		return ValidationReport{}, c.err
	}
	return report(c.issues), nil
}

func report(issues []issue) ValidationReport {
	r := ValidationReport{Diagnostics: []Diagnostic{}}
	for _, is := range issues {
		r.Diagnostics = append(r.Diagnostics, is.Diagnostic)
		switch is.Severity {
		case SeverityError:
			r.ErrorCount++
		case SeverityWarning:
			r.WarningCount++
		default:
			r.InfoCount++
		}
	}
	r.IsValid = r.ErrorCount == 0
	return r
}

func (c *checker) run() {
	c.checkTopLevel()
	c.checkSpecMetadata()
	if c.d.Hierarchy == nil {
		return
	}
	c.checkRoot()
	ids := sortedIDs(c.d.Hierarchy)
	if !c.eachNode(ids, c.checkNodeFields) {
		return
	}
	c.checkHierarchy(ids)
	if !c.eachNode(ids, c.checkDeps) || !c.eachNode(ids, c.checkNodeMetadata) || c.stopped(0) {
		return
	}
	c.checkCountsAndCycles()
	c.checkJournal()
}

// eachNode runs check on every id in order. It reports false when the
// checker stopped (its context is done) before the end.
func (c *checker) eachNode(ids []string, check func(id string)) bool {
	for i, id := range ids {
		if c.stopped(i) {
			return false
		}
		check(id)
	}
	return true
}

// ---- top level ----

var specIDPattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*-\d{4}-\d{2}-\d{2}-\d{3,4}$`)

func strictTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && (strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z"))
}

func fieldPtr(d *Document, name string) (*string, *string) {
	if name == "generated" {
		return &d.Generated, &d.LastUpdated
	}
	return &d.LastUpdated, &d.Generated
}

var specListKeys = []string{"objectives", "assumptions", "constraints", "open_questions", "success_criteria", "risks", "revision_history"}

func (c *checker) checkSpecMetadata() {
	m := c.d.Metadata
	if m == nil {
		return
	}
	if s, _ := m["mission"].(string); strings.TrimSpace(s) == "" {
		c.add(SeverityWarning, CategoryMetadata, "MISSING_MISSION", "metadata.mission", "", "state the mission with spec-update-frontmatter", nil,
			"the spec has no mission")
	}
	c.checkSpecLists(m)
	c.checkSpecHours(m)
	c.checkSpecRisks(m)
}

// checkSpecLists reports every spec list field (specListKeys) that is set
// to something other than a list; the fix makes it one.
func (c *checker) checkSpecLists(m map[string]any) {
	for _, k := range specListKeys {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		if _, isList := v.([]any); isList {
			continue
		}
		c.add(SeverityError, CategoryMetadata, "INVALID_METADATA_TYPE", "metadata."+k, "", "make it a list (a single string becomes a one-item list)", specListFix(k),
			"metadata.%s must be a list", k)
	}
}

// specListFix makes metadata k a list: a non-blank string becomes a
// one-item list, anything else an empty list.
func specListFix(k string) func(*Document) bool {
	return func(d *Document) bool {
		v := d.Metadata[k]
		if _, ok := v.([]any); ok {
			return false
		}
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			d.Metadata[k] = []any{s}
		} else {
			d.Metadata[k] = []any{}
		}
		return true
	}
}

// checkSpecHours reports estimated_hours/actual_hours set to something
// other than a number; fixable when it reads as a non-negative number.
func (c *checker) checkSpecHours(m map[string]any) {
	for _, k := range []string{"estimated_hours", "actual_hours"} {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		if _, isNum := v.(float64); isNum {
			continue
		}
		var fix func(*Document) bool
		if f, ok := toFloat(v); ok && f >= 0 {
			fix = specNumberFix(k)
		}
		c.add(SeverityWarning, CategoryMetadata, "INVALID_METADATA_TYPE", "metadata."+k, "", "write a number", fix, "metadata.%s must be a number", k)
	}
}

// specNumberFix replaces metadata k by the number it reads as.
func specNumberFix(k string) func(*Document) bool {
	return func(d *Document) bool {
		f, ok := toFloat(d.Metadata[k])
		if !ok {
			return false
		}
		d.Metadata[k] = f
		return true
	}
}

// checkSpecRisks reports every entry of metadata.risks that is not a
// well-formed risk (see validRisk).
func (c *checker) checkSpecRisks(m map[string]any) {
	risks, _ := m["risks"].([]any)
	for i, it := range risks {
		if !validRisk(it) {
			c.add(SeverityWarning, CategoryMetadata, "INVALID_RISK", fmt.Sprintf("metadata.risks[%d]", i), "", "give a description and low|medium|high levels", nil,
				"risk %d needs a description and likelihood/impact in low|medium|high", i+1)
		}
	}
}

// validRisk reports whether it is an object with a non-blank description
// whose likelihood and impact, when present, are in RiskLevels.
func validRisk(it any) bool {
	r, ok := it.(map[string]any)
	if !ok {
		return false
	}
	if desc, _ := r["description"].(string); strings.TrimSpace(desc) == "" {
		return false
	}
	for _, f := range []string{"likelihood", "impact"} {
		if lv, has := r[f]; has {
			if s, _ := lv.(string); !containsString(RiskLevels, s) {
				return false
			}
		}
	}
	return true
}

// ---- hierarchy ----

func (c *checker) checkRoot() {
	r := c.d.Hierarchy[RootID]
	if r == nil {
		c.flagged[RootID] = true
		c.add(SeverityError, CategoryHierarchy, "MISSING_SPEC_ROOT", "hierarchy."+RootID, RootID, "create spec-root and attach the phases", createRoot,
			"the hierarchy has no spec-root node")
		return
	}
	if r.Type != TypeSpec || r.Parent != "" {
		c.add(SeverityError, CategoryHierarchy, "INVALID_ROOT", "hierarchy."+RootID, RootID, "make spec-root type spec with a null parent", resetRoot,
			"spec-root must have type spec and a null parent (type %q, parent %q)", truncateForDetails(string(r.Type)), truncateForDetails(r.Parent))
	}
}

// createRoot is the fix of MISSING_SPEC_ROOT: it adds a spec-root node
// (titled after the document) and attaches under it, in id order, every node
// that belongs there (see belongsUnderRoot). It does nothing when the root
// exists.
func createRoot(d *Document) bool {
	if d.Hierarchy[RootID] != nil {
		return false
	}
	root := &Node{ID: RootID, Type: TypeSpec, Title: d.Title, Status: StatusPending, Children: ChildListOf([]string{}), Metadata: map[string]any{}}
	if root.Title == "" {
		root.Title = d.SpecID
	}
	for _, id := range sortedIDs(d.Hierarchy) {
		if n := d.Hierarchy[id]; n != nil && belongsUnderRoot(d, id, n) {
			n.Parent = RootID
			n.absent &^= fParent
			root.Children = root.Children.Inserted(root.Children.Len(), id)
		}
	}
	d.Hierarchy[RootID] = root
	return true
}

// belongsUnderRoot reports whether node id goes under a recreated root: it
// names the root as parent, or it is a phase (by type or id) whose parent is
// unset or missing.
func belongsUnderRoot(d *Document, id string, n *Node) bool {
	if n.Parent == RootID {
		return true
	}
	orphan := n.Parent == "" || d.Hierarchy[n.Parent] == nil
	return orphan && (n.Type == TypePhase || strings.HasPrefix(id, "phase-"))
}

// resetRoot is the fix of INVALID_ROOT: spec-root becomes type spec with
// no parent.
func resetRoot(d *Document) bool {
	r := d.Hierarchy[RootID]
	if r == nil || (r.Type == TypeSpec && r.Parent == "") {
		return false
	}
	r.Type, r.Parent = TypeSpec, ""
	r.absent &^= fType | fParent
	r.malformed &^= fType | fParent
	return true
}

func sortedIDs(h map[string]*Node) []string {
	ids := make([]string, 0, len(h))
	for id := range h {
		ids = append(ids, id)
	}
	SortIDs(ids)
	return ids
}

// typePrefixes maps id prefixes to the node type they suggest, in the order
// inferType tries them.
var typePrefixes = []struct {
	prefix string
	t      NodeType
}{
	{"phase-", TypePhase}, {"verify-", TypeVerify}, {"research-", TypeResearch},
	{"group-", TypeGroup}, {"subtask-", TypeSubtask},
}

// inferType guesses a node type from its id: the root, a type prefix, and
// task-N-M-K… (three numbers or more) for a subtask.
func inferType(id string) NodeType {
	if id == RootID {
		return TypeSpec
	}
	for _, p := range typePrefixes {
		if strings.HasPrefix(id, p.prefix) {
			return p.t
		}
	}
	if !strings.HasPrefix(id, "task-") {
		return ""
	}
	if nums, ok := idNumbers(id, "task"); ok && len(nums) >= 3 {
		return TypeSubtask
	}
	return TypeTask
}

// inferParent guesses the parent of id from its id and type: phases go under
// the root, task-N-M-K under task-N-M, other <type>-N-M under phase-N. It
// returns "" when the guess does not exist in the document.
func inferParent(d *Document, id string, t NodeType) string {
	if t == TypePhase || strings.HasPrefix(id, "phase-") {
		if d.Hierarchy[RootID] != nil {
			return RootID
		}
		return ""
	}
	cand := numberedParent(id)
	if cand != "" && d.Hierarchy[cand] != nil && cand != id {
		return cand
	}
	return ""
}

// numberedParent returns the parent id that <type>-N-M… suggests: the id
// without its last number for three numbers or more, phase-N for two, ""
// for one or when anything after the type is not all digits.
func numberedParent(id string) string {
	i := strings.Index(id, "-")
	if i < 0 {
		return ""
	}
	parts := strings.Split(id[i+1:], "-")
	for _, p := range parts {
		if strings.Trim(p, "0123456789") != "" {
			return ""
		}
	}
	switch {
	case len(parts) >= 3:
		return id[:strings.LastIndex(id, "-")]
	case len(parts) == 2:
		return "phase-" + parts[0]
	}
	return ""
}

var typeSynonyms = map[string]NodeType{
	"subtask": TypeSubtask, "sub_task": TypeSubtask, "sub-task": TypeSubtask, "verification": TypeVerify,
	"verify_step": TypeVerify, "verification_step": TypeVerify, "verify-step": TypeVerify, "check": TypeVerify,
	"tasks": TypeTask, "todo": TypeTask, "milestone": TypePhase, "stage": TypePhase, "section": TypeGroup,
	"task_group": TypeGroup, "task-group": TypeGroup, "spike": TypeResearch, "investigation": TypeResearch, "root": TypeSpec,
}

var statusSynonyms = map[string]Status{
	"todo": StatusPending, "to_do": StatusPending, "not_started": StatusPending, "new": StatusPending,
	"open": StatusPending, "backlog": StatusPending, "planned": StatusPending, "ready": StatusPending, "queued": StatusPending,
	"done": StatusCompleted, "complete": StatusCompleted, "finished": StatusCompleted, "closed": StatusCompleted,
	"resolved": StatusCompleted, "success": StatusCompleted, "succeeded": StatusCompleted, "passed": StatusCompleted, "completed": StatusCompleted,
	"inprogress": StatusInProgress, "in_progress": StatusInProgress, "started": StatusInProgress, "active": StatusInProgress,
	"doing": StatusInProgress, "wip": StatusInProgress, "working": StatusInProgress, "ongoing": StatusInProgress, "running": StatusInProgress,
	"on_hold": StatusBlocked, "onhold": StatusBlocked, "waiting": StatusBlocked, "stuck": StatusBlocked, "blocked": StatusBlocked,
	"error": StatusFailed, "errored": StatusFailed, "fail": StatusFailed, "failure": StatusFailed, "failed": StatusFailed,
	"pending": StatusPending,
}

// normalizeWord lowercases s and turns spaces and dashes into underscores.
func normalizeWord(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

// MapStatus maps a status spelling to a valid status: exact names,
// case/separator variants and synonyms (todo, done, inprogress, complete,
// …). ok is false when nothing matches.
func MapStatus(s string) (Status, bool) {
	if st := Status(s); st.Valid() {
		return st, true
	}
	st, ok := statusSynonyms[normalizeWord(s)]
	return st, ok
}

// MapNodeType maps a node type spelling to a valid type (case variants and
// synonyms such as sub-task, verification).
func MapNodeType(s string) (NodeType, bool) {
	if t := NodeType(s); t.Valid() {
		return t, true
	}
	w := normalizeWord(s)
	if t := NodeType(w); t.Valid() {
		return t, true
	}
	if t, ok := typeSynonyms[w]; ok {
		return t, true
	}
	if t, ok := typeSynonyms[strings.ReplaceAll(w, "_", "-")]; ok {
		return t, true
	}
	return "", false
}

// didYouMean returns the closest of options to s within a small edit
// distance (fuzzy.Distance: a swap of two adjacent letters counts once), or
// "". On a tie the earlier option wins.
func didYouMean(s string, options []string) string {
	w := normalizeWord(s)
	if len(w) > maxDidYouMeanInput {
		return ""
	}
	best, bestD := "", maxDidYouMeanLen+1
	for _, o := range options {
		if d := fuzzy.Distance(w, o); d < bestD {
			best, bestD = o, d
		}
	}
	return best
}

func nodeLoc(id string, field ...string) string {
	loc := "hierarchy." + id
	for _, f := range field {
		loc += "." + f
	}
	return loc
}

// placementOK is allowedUnder plus what imported specs legitimately contain.
func placementOK(p, c *Node) bool {
	if allowedUnder(p, c.Type) {
		return true
	}
	// Subtasks directly under a phase or group occur in foundry specs.
	return c.Type == TypeSubtask && (p.Type == TypePhase || p.Type == TypeGroup)
}

// attach moves id under parent (removing it from its old parent's children).
func attach(d *Document, id, parent string) bool {
	n, p := d.Hierarchy[id], d.Hierarchy[parent]
	if n == nil || p == nil || isDescendant(d, parent, id) {
		return false
	}
	if old := d.Hierarchy[n.Parent]; old != nil && n.Parent != parent {
		old.Children = old.Children.Removed(id)
	}
	n.Parent = parent
	n.absent &^= fParent
	if !p.Children.Contains(id) {
		p.Children = p.Children.Inserted(docDefaultIndex(d, p.Children, n.Type), id)
	}
	return true
}

// isDescendant reports whether x is id or below it, following children lists.
func isDescendant(d *Document, x, id string) bool {
	if x == id {
		return true
	}
	seen := map[string]bool{}
	stack := []string{id}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[cur] {
			continue
		}
		seen[cur] = true
		n := d.Hierarchy[cur]
		if n == nil {
			continue
		}
		for _, c := range n.Children.All() {
			if c == x {
				return true
			}
			stack = append(stack, c)
		}
	}
	return false
}

func docDefaultIndex(d *Document, children ChildList, t NodeType) int {
	i := children.Len()
	if t == TypeVerify {
		return i
	}
	for i > 0 {
		c := d.Hierarchy[children.At(i-1)]
		if c == nil || c.Type != TypeVerify {
			break
		}
		i--
	}
	return i
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(list))
	for _, x := range list {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// ---- dependencies ----

// depList is one dependency list of a node. mirror, when set, is the list
// of the target that must name the node back (blocked_by ↔ blocks), called
// mirrorName, and relation says in a message how the node relates to the
// target.
type depList struct {
	name       string
	get        func(*Node) *[]string
	mirrorName string
	mirror     func(*Node) *[]string
	relation   string
}

// depLists are the dependency lists checkDeps checks, in order.
var depLists = []depList{
	{name: "blocked_by", get: func(n *Node) *[]string { return &n.Dependencies.BlockedBy },
		mirrorName: "blocks", mirror: func(n *Node) *[]string { return &n.Dependencies.Blocks }, relation: "is blocked by"},
	{name: "blocks", get: func(n *Node) *[]string { return &n.Dependencies.Blocks },
		mirrorName: "blocked_by", mirror: func(n *Node) *[]string { return &n.Dependencies.BlockedBy }, relation: "blocks"},
	{name: "depends", get: func(n *Node) *[]string { return &n.Dependencies.Depends }},
}

func (c *checker) checkDeps(id string) {
	n := c.d.Hierarchy[id]
	if n == nil || strings.TrimSpace(id) == "" {
		return
	}
	for _, l := range depLists {
		list := *l.get(n)
		loc := nodeLoc(id, "dependencies", l.name)
		if hasDup(list) {
			c.add(SeverityWarning, CategoryDependency, "DUPLICATE_DEPENDENCY", loc, id, "keep one of each", dedupeDepFix(id, l),
				"node %s lists the same %s target more than once", id, l.name)
		}
		for _, t := range dedupe(list) {
			c.checkDepTarget(id, l, loc, t)
		}
	}
}

// checkDepTarget reports what is wrong with target t of node id's list l, at
// most one issue: a self reference, a missing target (a warning in depends),
// or a target whose mirror list does not name id back.
func (c *checker) checkDepTarget(id string, l depList, loc, t string) {
	var is *issue
	tn := c.d.Hierarchy[t]
	switch {
	case t == id:
		is = c.add(SeverityError, CategoryDependency, "SELF_DEPENDENCY", loc, id, "remove the self reference", removeDepFix(id, l, t),
			"node %s lists itself in %s", id, l.name)
	case tn == nil || strings.TrimSpace(t) == "":
		sev := SeverityError
		if l.mirror == nil {
			sev = SeverityWarning
		}
		is = c.add(sev, CategoryDependency, "MISSING_DEPENDENCY_TARGET", loc, id, "remove the reference", removeDepFix(id, l, t),
			"node %s lists %q in %s, which does not exist", id, truncateForDetails(t), l.name)
	case l.mirror != nil && !containsString(*l.mirror(tn), id):
		is = c.add(SeverityError, CategoryDependency, "BIDIRECTIONAL_INCONSISTENCY", loc, id, "add "+id+" to "+t+"."+l.mirrorName, addMirrorFix(id, l, t),
			"node %s %s %s, but %s.%s does not list it", id, l.relation, t, t, l.mirrorName)
	default:
		return
	}
	keyed(is, t)
}

// dedupeDepFix removes repeated targets from node id's list l.
func dedupeDepFix(id string, l depList) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || !hasDup(*l.get(n)) {
			return false
		}
		*l.get(n) = dedupe(*l.get(n))
		return true
	}
}

// removeDepFix removes target t from node id's list l.
func removeDepFix(id string, l depList, t string) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || !containsString(*l.get(n), t) {
			return false
		}
		*l.get(n) = removeString(*l.get(n), t)
		return true
	}
}

// addMirrorFix appends id to target t's mirror of list l.
func addMirrorFix(id string, l depList, t string) func(*Document) bool {
	return func(d *Document) bool {
		tn := d.Hierarchy[t]
		if tn == nil || containsString(*l.mirror(tn), id) {
			return false
		}
		*l.mirror(tn) = append(*l.mirror(tn), id)
		return true
	}
}

// ---- node metadata ----

var verificationSynonyms = map[string]string{
	"auto": "run-tests", "automated": "run-tests", "automatic": "run-tests", "test": "run-tests", "tests": "run-tests",
	"unit": "run-tests", "pytest": "run-tests", "run_tests": "run-tests", "runtests": "run-tests", "command": "run-tests",
	"review": "fidelity", "fidelity_review": "fidelity", "spec_review": "fidelity", "code_review": "fidelity",
	"human": "manual", "manual_check": "manual", "manual_review": "manual",
}

var categorySynonyms = map[string]string{
	"implement": "implementation", "impl": "implementation", "coding": "implementation", "code": "implementation",
	"development": "implementation", "dev": "implementation", "feature": "implementation",
	"refactor": "refactoring", "cleanup": "refactoring", "investigate": "investigation", "analysis": "investigation",
	"discovery": "investigation", "decide": "decision", "design": "decision", "spike": "research",
}

var complexitySynonyms = map[string]string{
	"med": "medium", "moderate": "medium", "normal": "medium", "easy": "low", "simple": "low", "small": "low",
	"trivial": "low", "hard": "high", "complex": "high", "large": "high", "difficult": "high",
}

// enumCheck reports an invalid enum value in node metadata, fixable when a
// synonym (or a case variant) maps it, or to fallback when one is given.
func (c *checker) enumCheck(id, key, code string, allowed []string, synonyms map[string]string, sev Severity, fallback string) {
	n := c.d.Hierarchy[id]
	v, ok := n.Metadata[key]
	if !ok || v == nil {
		return
	}
	s, isStr := v.(string)
	if isStr && containsString(allowed, s) {
		return
	}
	target := ""
	if isStr {
		target = enumSpelling(s, allowed, synonyms)
	}
	if target == "" {
		target = fallback
	}
	var fix func(*Document) bool
	suggestion := "use one of " + strings.Join(allowed, ", ")
	if target != "" {
		suggestion = "use " + target
		fix = setNodeMetaFix(id, key, target)
	}
	c.add(sev, CategoryNodeMetadata, code, nodeLoc(id, "metadata", key), id, suggestion, fix,
		"node %s has %s %q", id, key, truncateForDetails(fmt.Sprint(v)))
}

// enumSpelling maps s to a value of allowed: its normalized spelling (see
// normalizeWord), that spelling with dashes for underscores, or its synonym;
// "" when none matches.
func enumSpelling(s string, allowed []string, synonyms map[string]string) string {
	w := normalizeWord(s)
	for _, cand := range []string{w, strings.ReplaceAll(w, "_", "-")} {
		if containsString(allowed, cand) {
			return cand
		}
	}
	return synonyms[w]
}

// setNodeMetaFix sets node id's metadata key to value.
func setNodeMetaFix(id, key string, value any) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || n.Metadata[key] == value {
			return false
		}
		n.SetMeta(key, value)
		return true
	}
}

// ---- counts, rollups and cycles ----

// rollupView builds a view of the document's hierarchy (clones) and
// recomputes it, to compare with the stored counts.
// Invalid types and statuses that map to valid ones are mapped first, so
// the expected counts are those the fixed document will have.
func rollupView(d *Document, clock core.Clock) *Spec {
	s := FromDocument(*d)
	s.Clock = clock
	for id, n := range s.overlay {
		if !n.Type.Valid() {
			if t, ok := MapNodeType(string(n.Type)); ok {
				n.Type = t
			}
		}
		if !n.Status.Valid() || (n.Status == StatusArchived && id != RootID) {
			if st, ok := MapStatus(string(n.Status)); ok {
				n.Status = st
			}
		}
	}
	RecomputeAll(s)
	return s
}

// recountFix is the fix of the count and rollup mismatches: it copies the
// recomputed counts, statuses and metadata onto every node that differs,
// and the recomputed status, progress and current phase onto the document.
func (c *checker) recountFix() func(*Document) bool {
	return func(d *Document) bool {
		if d.Hierarchy == nil {
			return false
		}
		s := rollupView(d, c.clock)
		changed := false
		for id, n := range d.Hierarchy {
			if e := s.Node(id); n != nil && e != nil && copyRollup(n, e) {
				changed = true
			}
		}
		if headerRollupDiffers(d, s.Header) {
			d.Status, d.ProgressPercentage, d.CurrentPhase = s.Header.Status, s.Header.ProgressPercentage, s.Header.CurrentPhase
			changed = true
		}
		return changed
	}
}

// copyRollup copies e's counts, status and metadata onto n when any of them
// differs, and reports whether it did.
func copyRollup(n, e *Node) bool {
	if e.TotalTasks == n.TotalTasks && e.CompletedTasks == n.CompletedTasks && e.Status == n.Status && jsonEqual(e.Metadata, n.Metadata) {
		return false
	}
	n.TotalTasks, n.CompletedTasks, n.Status = e.TotalTasks, e.CompletedTasks, e.Status
	n.Metadata = cloneMap(e.Metadata)
	n.absent &^= fTotal | fCompleted | fStatus
	n.malformed &^= fTotal | fCompleted | fStatus
	return true
}

// headerRollupDiffers reports whether the document's status, progress or
// current phase differ from the recomputed header h.
func headerRollupDiffers(d *Document, h Header) bool {
	return d.Status != h.Status || d.ProgressPercentage != h.ProgressPercentage || d.CurrentPhase != h.CurrentPhase
}

func (c *checker) checkCountsAndCycles() {
	d := c.d
	if d.Hierarchy[RootID] == nil {
		return
	}
	s := rollupView(d, c.clock)
	recount := c.recountFix()
	for _, id := range sortedIDs(d.Hierarchy) {
		if n, e := d.Hierarchy[id], s.Node(id); n != nil && e != nil {
			c.checkNodeCounts(id, n, e, recount)
		}
	}
	h := s.Header
	if headerRollupDiffers(d, h) {
		c.addRecount(recount, "SPEC_ROLLUP_MISMATCH", "status", "", "recompute status, progress_percentage and current_phase",
			"top-level status/progress/current_phase are %q/%d/%q, expected %q/%d/%q", truncateForDetails(string(d.Status)), d.ProgressPercentage,
			truncateForDetails(d.CurrentPhase), h.Status, h.ProgressPercentage, h.CurrentPhase)
	}
	if cycle := FindDeadlock(s); cycle != nil {
		c.add(SeverityError, CategoryDependency, "CYCLE_DETECTED", nodeLoc(cycle[0], "dependencies", "blocked_by"), cycle[0],
			"remove one blocked_by edge of the cycle with task remove-dependency", nil,
			"dependency cycle (inherited edges included): %s", strings.Join(cycle, " → "))
	}
}

// checkNodeCounts reports where node n's stored counts and (valid) status
// differ from e, its recomputed self.
func (c *checker) checkNodeCounts(id string, n, e *Node, recount func(*Document) bool) {
	if n.TotalTasks != e.TotalTasks {
		c.addRecount(recount, "TOTAL_TASKS_MISMATCH", nodeLoc(id, "total_tasks"), id, "recount",
			"node %s has total_tasks %d, expected %d", id, n.TotalTasks, e.TotalTasks)
	}
	if n.CompletedTasks != e.CompletedTasks {
		c.addRecount(recount, "COMPLETED_TASKS_MISMATCH", nodeLoc(id, "completed_tasks"), id, "recount",
			"node %s has completed_tasks %d, expected %d", id, n.CompletedTasks, e.CompletedTasks)
	}
	if n.Status != e.Status && n.Status.Valid() {
		c.addRecount(recount, "STATUS_ROLLUP_MISMATCH", nodeLoc(id, "status"), id, "recompute it from the children",
			"node %s has status %s, but its children make it %s", id, n.Status, e.Status)
	}
}

// addRecount adds a counts error fixed by recount, in the "recount" group
// (one recount per fix round, however many mismatches).
func (c *checker) addRecount(recount func(*Document) bool, code, loc, nodeID, suggestion, format string, args ...any) {
	is := c.add(SeverityError, CategoryCounts, code, loc, nodeID, suggestion, recount, format, args...)
	is.group = "recount"
}

// ---- journal ----

func (c *checker) checkJournal() {
	d := c.d
	if len(d.Journal) > MaxJournal {
		c.add(SeverityWarning, CategoryStructure, "JOURNAL_TOO_LARGE", "journal", "", "archive old entries", nil,
			"the journal has %d entries (max %d)", len(d.Journal), MaxJournal)
	}
	bad := 0
	for _, e := range d.Journal {
		if !containsString(JournalEntryTypes, e.EntryType) {
			bad++
		}
	}
	if bad > 0 || d.malformed&dJournal != 0 {
		c.add(SeverityWarning, CategoryStructure, "INVALID_JOURNAL_ENTRY", "journal", "", "drop malformed entries and map unknown entry types to note", fixJournal,
			"%s", journalMessage(bad, d.malformed&dJournal != 0))
	}
}

// fixJournal is the fix of INVALID_JOURNAL_ENTRY: it clears the malformed
// mark (the malformed items were dropped on reading) and turns unknown entry
// types into note.
func fixJournal(d *Document) bool {
	changed := d.malformed&dJournal != 0
	d.malformed &^= dJournal
	for i := range d.Journal {
		if !containsString(JournalEntryTypes, d.Journal[i].EntryType) {
			d.Journal[i].EntryType = "note"
			changed = true
		}
	}
	return changed
}

func journalMessage(bad int, malformed bool) string {
	var parts []string
	if malformed {
		parts = append(parts, "malformed items (dropped on reading)")
	}
	if bad > 0 {
		parts = append(parts, fmt.Sprintf("%d entries with an unknown entry_type", bad))
	}
	return "the journal has " + strings.Join(parts, " and ")
}
