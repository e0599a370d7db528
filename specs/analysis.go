package specs

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// SpecStats summarises a spec (spec stats).
type SpecStats struct {
	SpecID               string         `json:"spec_id"`
	TotalNodes           int            `json:"total_nodes"`
	Phases               int            `json:"phases"`
	Groups               int            `json:"groups"`
	Tasks                int            `json:"tasks"`
	Subtasks             int            `json:"subtasks"`
	Verifications        int            `json:"verifications"`
	Research             int            `json:"research"`
	StatusCounts         map[Status]int `json:"status_counts"` // over task/subtask/verify leaves
	MaxDepth             int            `json:"max_depth"`     // root = 0
	VerificationCoverage float64        `json:"verification_coverage"`
	TotalTasks           int            `json:"total_tasks"`
	CompletedTasks       int            `json:"completed_tasks"`
	ProgressPercentage   int            `json:"progress_percentage"`
	Dependencies         int            `json:"dependencies"` // blocked_by edges
	EstimatedHours       float64        `json:"estimated_hours"`
	ActualHours          float64        `json:"actual_hours"`
}

// Stats counts nodes by type, leaf statuses, depth, dependencies and hours
// over the tree reachable from the root. VerificationCoverage is the share
// of phases (0–1, 2 decimals) holding at least one verify node; hours sum the
// leaves' estimated_hours / actual_hours. It reads every node.
func Stats(s *Spec) SpecStats {
	st := SpecStats{SpecID: s.Header.SpecID, StatusCounts: map[Status]int{}}
	root := s.Root()
	if root == nil {
		return st
	}
	st.TotalTasks, st.CompletedTasks = root.TotalTasks, root.CompletedTasks
	st.ProgressPercentage = progress(root.CompletedTasks, root.TotalTasks)
	t := statsTally{st: &st, depth: map[string]int{RootID: 0}, verifyPhases: map[string]bool{}, byType: st.typeCounters()}
	for n := range ExecutionOrder(s, RootID) {
		t.add(s, n)
	}
	delete(t.verifyPhases, "") // verify nodes outside any phase
	if st.Phases > 0 {
		st.VerificationCoverage = round2(float64(len(t.verifyPhases)) / float64(st.Phases))
	}
	st.EstimatedHours, st.ActualHours = round2(st.EstimatedHours), round2(st.ActualHours)
	return st
}

// typeCounters are st's per-type node counters, by node type.
func (st *SpecStats) typeCounters() map[NodeType]*int {
	return map[NodeType]*int{TypePhase: &st.Phases, TypeGroup: &st.Groups, TypeTask: &st.Tasks,
		TypeSubtask: &st.Subtasks, TypeVerify: &st.Verifications, TypeResearch: &st.Research}
}

// statsTally is Stats' state over the walk: each node's depth (set when
// its parent is seen), the phases holding a verify node and the per-type
// counters.
type statsTally struct {
	st           *SpecStats
	depth        map[string]int
	verifyPhases map[string]bool
	byType       map[NodeType]*int
}

// add counts node n, reached in execution order.
func (t *statsTally) add(s *Spec, n *Node) {
	st := t.st
	st.TotalNodes++
	d := t.depth[n.ID]
	st.MaxDepth = max(st.MaxDepth, d)
	for _, c := range n.Children.All() {
		t.depth[c] = d + 1
	}
	st.Dependencies += len(n.Dependencies.BlockedBy)
	if c := t.byType[n.Type]; c != nil {
		*c++
	}
	if n.Type == TypeVerify {
		t.verifyPhases[phaseOf(s, n.ID)] = true
	}
	if n.IsWorkLeaf() {
		st.StatusCounts[n.Status]++
		st.EstimatedHours += positiveMeta(n, "estimated_hours")
		st.ActualHours += positiveMeta(n, "actual_hours")
	}
}

// positiveMeta is n's metadata key as a number when it is one above 0,
// else 0.
func positiveMeta(n *Node, key string) float64 {
	if h, ok := n.MetaFloat(key); ok && h > 0 {
		return h
	}
	return 0
}

// Bottleneck is a node many others wait on.
type Bottleneck struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Status     Status `json:"status"`
	Blocks     int    `json:"blocks"`     // direct dependents
	Transitive int    `json:"transitive"` // nodes reachable through blocks edges
}

// DepsAnalysis is the result of AnalyzeDeps.
type DepsAnalysis struct {
	DependencyCount int          `json:"dependency_count"`
	Threshold       int          `json:"threshold"`
	Bottlenecks     []Bottleneck `json:"bottlenecks"`
	Cycles          [][]string   `json:"cycles"`
	// Deadlock is one cycle of the inherited wait graph (phase/parent edges
	// included), reported when there is no direct cycle.
	Deadlock []string `json:"deadlock,omitempty"`
}

// AnalyzeDeps counts blocked_by edges, lists bottlenecks (nodes that
// directly block at least threshold others; threshold ≤ 0 means 3) sorted by
// direct then transitive dependents, and the cycles over blocked_by (each
// strongly connected component with more than one node, or a self edge, in
// natural order). It reads every node.
func AnalyzeDeps(s *Spec, threshold int) DepsAnalysis {
	if threshold <= 0 {
		threshold = 3
	}
	a := DepsAnalysis{Threshold: threshold, Bottlenecks: []Bottleneck{}, Cycles: [][]string{}}
	ids := s.IDs()
	for _, id := range ids {
		n := s.Node(id)
		a.DependencyCount += len(n.Dependencies.BlockedBy)
		if len(n.Dependencies.Blocks) >= threshold {
			a.Bottlenecks = append(a.Bottlenecks, Bottleneck{ID: id, Title: n.Title, Status: n.Status,
				Blocks: len(n.Dependencies.Blocks), Transitive: transitiveBlocks(s, id)})
		}
	}
	sort.SliceStable(a.Bottlenecks, func(i, j int) bool { return a.Bottlenecks[i].before(a.Bottlenecks[j]) })
	a.Cycles = blockedByCycles(s, ids)
	if len(a.Cycles) == 0 {
		a.Deadlock = FindDeadlock(s)
	}
	return a
}

// before orders bottlenecks: more direct dependents first, then more
// transitive ones, then natural id order.
func (b Bottleneck) before(o Bottleneck) bool {
	if b.Blocks != o.Blocks {
		return b.Blocks > o.Blocks
	}
	if b.Transitive != o.Transitive {
		return b.Transitive > o.Transitive
	}
	return CompareIDs(b.ID, o.ID) < 0
}

// transitiveBlocks counts the nodes reachable from id through blocks
// edges.
func transitiveBlocks(s *Spec, id string) int {
	seen := map[string]bool{id: true}
	queue := []string{id}
	for len(queue) > 0 {
		n := s.Node(queue[0])
		queue = queue[1:]
		if n == nil {
			continue
		}
		for _, b := range n.Dependencies.Blocks {
			if !seen[b] {
				seen[b] = true
				queue = append(queue, b)
			}
		}
	}
	return len(seen) - 1
}

// blockedByCycles returns the strongly connected components of the direct
// blocked_by graph that contain a cycle (Tarjan's algorithm, iterative),
// each in natural order, sorted by their first id.
func blockedByCycles(s *Spec, ids []string) [][]string {
	t := tarjan{s: s, index: map[string]int{}, low: map[string]int{}, onStack: map[string]bool{}}
	for _, start := range ids {
		if _, ok := t.index[start]; !ok {
			t.run(start)
		}
	}
	sort.Slice(t.out, func(i, j int) bool { return CompareIDs(t.out[i][0], t.out[j][0]) < 0 })
	return t.out
}

// tarjan is the state of Tarjan's strongly connected components search
// over blocked_by edges to existing nodes.
type tarjan struct {
	s          *Spec
	index, low map[string]int
	onStack    map[string]bool
	stack      []string
	next       int
	out        [][]string // the components holding a cycle
}

// tarjanFrame is one node of the explicit call stack and the index of its
// next blocked_by edge.
type tarjanFrame struct {
	id string
	i  int
}

// open numbers id and pushes it on the component stack.
func (t *tarjan) open(id string) {
	t.index[id], t.low[id] = t.next, t.next
	t.next++
	t.stack = append(t.stack, id)
	t.onStack[id] = true
}

// run searches from start, which has no index yet.
func (t *tarjan) run(start string) {
	call := []tarjanFrame{{id: start}}
	t.open(start)
	for len(call) > 0 {
		top := &call[len(call)-1]
		if w, ok := t.nextEdge(top); ok {
			if _, seen := t.index[w]; !seen {
				t.open(w)
				call = append(call, tarjanFrame{id: w})
			} else if t.onStack[w] {
				t.low[top.id] = min(t.low[top.id], t.index[w])
			}
			continue
		}
		v := top.id
		call = call[:len(call)-1]
		if len(call) > 0 {
			parent := call[len(call)-1].id
			t.low[parent] = min(t.low[parent], t.low[v])
		}
		t.closeComponent(v)
	}
}

// nextEdge advances f to its next blocked_by target that exists.
func (t *tarjan) nextEdge(f *tarjanFrame) (string, bool) {
	n := t.s.Node(f.id)
	if n == nil {
		return "", false
	}
	for f.i < len(n.Dependencies.BlockedBy) {
		w := n.Dependencies.BlockedBy[f.i]
		f.i++
		if t.s.Has(w) {
			return w, true
		}
	}
	return "", false
}

// closeComponent pops v's component when v is its root, keeping it when it
// holds a cycle: more than one node, or v blocked by itself.
func (t *tarjan) closeComponent(v string) {
	if t.low[v] != t.index[v] {
		return
	}
	comp := t.popUntil(v)
	if len(comp) > 1 || blockedBySelf(t.s, v) {
		SortIDs(comp)
		t.out = append(t.out, comp)
	}
}

// popUntil pops the component stack down to v, included.
func (t *tarjan) popUntil(v string) []string {
	var comp []string
	for {
		w := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.onStack[w] = false
		comp = append(comp, w)
		if w == v {
			return comp
		}
	}
}

// blockedBySelf reports whether node id lists itself in blocked_by.
func blockedBySelf(s *Spec, id string) bool {
	n := s.Node(id)
	return n != nil && containsString(n.Dependencies.BlockedBy, id)
}

// Completeness weights.
const (
	completenessTitleWeight       = 0.25
	completenessDescriptionWeight = 0.40
	completenessFilePathWeight    = 0.35
	maxCompletenessIssues         = 200
)

// CompletenessCategory is one scored category.
type CompletenessCategory struct {
	Name    string  `json:"name"`
	Weight  float64 `json:"weight"`
	Total   int     `json:"total"`
	Present int     `json:"present"`
	Score   float64 `json:"score"` // 0–1
}

// CompletenessIssue names one missing item.
type CompletenessIssue struct {
	NodeID  string `json:"node_id"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// CompletenessReport is the result of Completeness.
type CompletenessReport struct {
	Score      int                    `json:"score"` // 0–100
	Categories []CompletenessCategory `json:"categories"`
	Issues     []CompletenessIssue    `json:"issues"`
	// IssuesDropped counts issues beyond the first 200.
	IssuesDropped int `json:"issues_dropped,omitempty"`
}

// Completeness scores how fully the spec is written, 0–100: titles (weight
// 0.25) over every phase/group/task/subtask/verify/research node;
// descriptions (0.40) over phases (description or purpose), tasks and
// subtasks; file paths (0.35) over leaf tasks and subtasks whose category is
// not investigation, decision or research. Only categories that have items
// count, with their weights renormalised; a spec with no items scores 0.
// Issues list the missing items (first 200). It reads every node.
func Completeness(s *Spec) CompletenessReport {
	titles := &CompletenessCategory{Name: "titles", Weight: completenessTitleWeight}
	descriptions := &CompletenessCategory{Name: "descriptions", Weight: completenessDescriptionWeight}
	filePaths := &CompletenessCategory{Name: "file_paths", Weight: completenessFilePathWeight}
	rep := CompletenessReport{Issues: []CompletenessIssue{}, Categories: []CompletenessCategory{}}
	for n := range ExecutionOrder(s, RootID) {
		if n.ID == RootID {
			continue
		}
		rep.score(titles, n.ID, "title", hasRealTitle(n), " has no real title")
		if needsDescription(n) {
			rep.score(descriptions, n.ID, "description", hasDescription(n), " has no description")
		}
		if needsFilePath(n) {
			rep.score(filePaths, n.ID, "file_path", n.FilePath() != "", " does not name the file it changes")
		}
	}
	rep.weigh(titles, descriptions, filePaths)
	return rep
}

// score counts one item of category c, present or not; a missing one is an
// issue on field of node id (its message is id followed by missing).
func (rep *CompletenessReport) score(c *CompletenessCategory, id, field string, present bool, missing string) {
	c.Total++
	if present {
		c.Present++
		return
	}
	if len(rep.Issues) < maxCompletenessIssues {
		rep.Issues = append(rep.Issues, CompletenessIssue{id, field, id + missing})
	} else {
		rep.IssuesDropped++
	}
}

// weigh sets each category's score, lists them, and sets the report's
// score: the categories with items, weighted, their weights renormalised (0
// when none has items).
func (rep *CompletenessReport) weigh(cats ...*CompletenessCategory) {
	var sum, weights float64
	for _, c := range cats {
		if c.Total > 0 {
			c.Score = round2(float64(c.Present) / float64(c.Total))
			sum += c.Weight * float64(c.Present) / float64(c.Total)
			weights += c.Weight
		}
		rep.Categories = append(rep.Categories, *c)
	}
	if weights > 0 {
		rep.Score = int(math.Round(100 * sum / weights))
	}
}

// hasRealTitle reports whether n has a title other than blank or its id.
func hasRealTitle(n *Node) bool { return strings.TrimSpace(n.Title) != "" && n.Title != n.ID }

// needsDescription reports whether Completeness expects n to have a
// description: phases, tasks and subtasks.
func needsDescription(n *Node) bool {
	return n.Type == TypePhase || n.Type == TypeTask || n.Type == TypeSubtask
}

// hasDescription reports whether n has a non-blank description (a phase's
// purpose counts when it has none).
func hasDescription(n *Node) bool {
	desc := n.Description()
	if n.Type == TypePhase && desc == "" {
		desc = n.MetaString("purpose")
	}
	return strings.TrimSpace(desc) != ""
}

// noFileCategories are the task categories whose tasks change no file.
var noFileCategories = []string{"investigation", "decision", "research"}

// needsFilePath reports whether Completeness expects n to name a file: a
// leaf task or subtask whose category is not one of noFileCategories.
func needsFilePath(n *Node) bool {
	return (n.Type == TypeTask || n.Type == TypeSubtask) && n.IsLeaf() && !containsString(noFileCategories, n.TaskCategory())
}

// DuplicateOptions tunes DuplicateDetection.
type DuplicateOptions struct {
	Threshold float64 // similarity in (0, 1]; 0 means 0.8
	MaxPairs  int     // 0 means 100
	Scope     string  // "titles" (default), "descriptions", or "both" (title and description together)
}

// DuplicatePair is two nodes with similar text.
type DuplicatePair struct {
	A          string  `json:"a"`
	B          string  `json:"b"`
	Similarity float64 `json:"similarity"` // 0–1, 3 decimals
	Field      string  `json:"field"`
}

// DuplicateReport is the result of DuplicateDetection.
type DuplicateReport struct {
	Threshold float64         `json:"threshold"`
	Measure   string          `json:"measure"`
	Pairs     []DuplicatePair `json:"pairs"`
	Truncated bool            `json:"truncated"`
	Compared  int             `json:"compared"` // nodes compared
}

// scaffoldTitles are the standard verify titles that legitimately repeat in
// every phase; DuplicateDetection ignores verify nodes with these titles.
var scaffoldTitles = map[string]bool{"run tests": true, "review against the spec": true, "fidelity review": true}

// DuplicateDetection finds pairs of task, subtask and verify nodes with
// similar text. The similarity measure is the Jaccard index of token sets:
// |A ∩ B| / |A ∪ B|, where a text's tokens are its lowercase runs of letters
// and digits, ignoring one-character tokens. Pairs with similarity ≥
// Threshold (default 0.8) are returned, most similar first (ties in natural
// id order), at most MaxPairs (default 100; Truncated says when more
// matched). Verify nodes titled like the standard scaffold ("Run tests",
// "Review against the spec", "Fidelity review") are skipped. Candidate pairs
// come from prefix filtering over an inverted index, so the cost stays near
// linear for specs without many near-duplicates.
func DuplicateDetection(s *Spec, opts DuplicateOptions) DuplicateReport {
	t, maxPairs, scope := duplicateDefaults(opts)
	rep := DuplicateReport{Threshold: t, Measure: "jaccard-token-set", Pairs: []DuplicatePair{}}
	recs := duplicateRecords(s, scope)
	rep.Compared = len(recs)
	sortTokensByRarity(recs)
	pairs := similarPairs(recs, t, scope)
	sortDuplicatePairs(pairs)
	if len(pairs) > maxPairs {
		pairs, rep.Truncated = pairs[:maxPairs], true
	}
	rep.Pairs = append(rep.Pairs, pairs...)
	return rep
}

// duplicateDefaults returns the options to use: a threshold outside (0, 1]
// is 0.8, MaxPairs ≤ 0 is 100, an empty scope is titles.
func duplicateDefaults(opts DuplicateOptions) (threshold float64, maxPairs int, scope string) {
	threshold, maxPairs, scope = opts.Threshold, opts.MaxPairs, opts.Scope
	if threshold <= 0 || threshold > 1 {
		threshold = 0.8
	}
	if maxPairs <= 0 {
		maxPairs = 100
	}
	if scope == "" {
		scope = "titles"
	}
	return threshold, maxPairs, scope
}

// dupRecord is one compared node and its token set.
type dupRecord struct {
	id     string
	tokens []string
}

// duplicateRecords lists, in execution order, the task, subtask and verify
// nodes to compare with their token sets: the title (scope titles), the
// description (descriptions) or both joined by a space (both). Verify nodes
// titled like the standard scaffold and without a description are skipped,
// as are nodes whose text has no token.
func duplicateRecords(s *Spec, scope string) []dupRecord {
	var recs []dupRecord
	for n := range ExecutionOrder(s, RootID) {
		if !comparedForDuplicates(n) {
			continue
		}
		if toks := tokenSet(duplicateText(n, scope)); len(toks) > 0 {
			recs = append(recs, dupRecord{n.ID, toks})
		}
	}
	return recs
}

// comparedForDuplicates reports whether DuplicateDetection compares n: a
// task, subtask or verify node, but not a verify node titled like the
// standard scaffold and without a description.
func comparedForDuplicates(n *Node) bool {
	switch n.Type {
	case TypeTask, TypeSubtask:
		return true
	case TypeVerify:
		return !scaffoldTitles[strings.ToLower(strings.TrimSpace(n.Title))] || n.Description() != ""
	}
	return false
}

// duplicateText is the text of n that scope compares: its description
// ("descriptions"), title and description joined by a space ("both"), else
// its title.
func duplicateText(n *Node, scope string) string {
	switch scope {
	case "descriptions":
		return n.Description()
	case "both":
		return n.Title + " " + n.Description()
	}
	return n.Title
}

// sortTokensByRarity orders each record's tokens rarest first across all
// records (ties alphabetically), the order prefix filtering needs.
func sortTokensByRarity(recs []dupRecord) {
	freq := map[string]int{}
	for _, r := range recs {
		for _, tok := range r.tokens {
			freq[tok]++
		}
	}
	for _, r := range recs {
		sort.Slice(r.tokens, func(i, j int) bool {
			a, b := r.tokens[i], r.tokens[j]
			if freq[a] != freq[b] {
				return freq[a] < freq[b]
			}
			return a < b
		})
	}
}

// similarPairs returns every pair of records whose Jaccard similarity is at
// least t (within 1e-9), each pair once with A before B in natural id order
// and the similarity rounded to 3 decimals. Candidates come from prefix
// filtering: two sets with similarity ≥ t share a token among the first
// len − ⌈t·len⌉ + 1 rarest tokens of each, so only records sharing such a
// prefix token (found through an inverted index of earlier records) are
// compared.
func similarPairs(recs []dupRecord, t float64, scope string) []DuplicatePair {
	index := map[string][]int{}
	var pairs []DuplicatePair
	for i, r := range recs {
		prefix := r.tokens[:len(r.tokens)-int(math.Ceil(t*float64(len(r.tokens))))+1]
		for _, j := range sharingRecords(index, prefix) {
			if sim := jaccard(r.tokens, recs[j].tokens); sim >= t-1e-9 {
				pairs = append(pairs, newDuplicatePair(recs[j].id, r.id, sim, scope))
			}
		}
		for _, tok := range prefix {
			index[tok] = append(index[tok], i)
		}
	}
	return pairs
}

// sharingRecords are the records index lists under any of tokens, each
// once, in the order the tokens and their lists name them.
func sharingRecords(index map[string][]int, tokens []string) []int {
	seen := map[int]bool{}
	var out []int
	for _, tok := range tokens {
		for _, j := range index[tok] {
			if !seen[j] {
				seen[j] = true
				out = append(out, j)
			}
		}
	}
	return out
}

// newDuplicatePair is the pair of a and b, in natural id order, with sim
// rounded to 3 decimals.
func newDuplicatePair(a, b string, sim float64, field string) DuplicatePair {
	if CompareIDs(a, b) > 0 {
		a, b = b, a
	}
	return DuplicatePair{A: a, B: b, Similarity: math.Round(sim*1000) / 1000, Field: field}
}

// sortDuplicatePairs orders pairs most similar first, ties by A then B in
// natural id order.
func sortDuplicatePairs(pairs []DuplicatePair) {
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].Similarity != pairs[j].Similarity {
			return pairs[i].Similarity > pairs[j].Similarity
		}
		if c := CompareIDs(pairs[i].A, pairs[j].A); c != 0 {
			return c < 0
		}
		return CompareIDs(pairs[i].B, pairs[j].B) < 0
	})
}

// tokenSet returns the distinct lowercase alphanumeric tokens of s longer
// than one character.
func tokenSet(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(f)) < 2 || seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, f)
	}
	return out
}

// jaccard is |a ∩ b| / |a ∪ b| of two token sets (0 when both are empty).
func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := sharedCount(a, b)
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// sharedCount is how many elements of b are in a.
func sharedCount(a, b []string) int {
	set := make(map[string]bool, len(a))
	for _, x := range a {
		set[x] = true
	}
	n := 0
	for _, x := range b {
		if set[x] {
			n++
		}
	}
	return n
}
