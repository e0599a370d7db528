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
	depth := map[string]int{RootID: 0}
	phasesWithVerify := map[string]bool{}
	for n := range ExecutionOrder(s, RootID) {
		st.TotalNodes++
		d := depth[n.ID]
		if d > st.MaxDepth {
			st.MaxDepth = d
		}
		for _, c := range n.Children {
			depth[c] = d + 1
		}
		st.Dependencies += len(n.Dependencies.BlockedBy)
		switch n.Type {
		case TypePhase:
			st.Phases++
		case TypeGroup:
			st.Groups++
		case TypeTask:
			st.Tasks++
		case TypeSubtask:
			st.Subtasks++
		case TypeVerify:
			st.Verifications++
			if p := phaseOf(s, n.ID); p != "" {
				phasesWithVerify[p] = true
			}
		case TypeResearch:
			st.Research++
		}
		if n.IsWorkLeaf() {
			st.StatusCounts[n.Status]++
			if h, ok := n.MetaFloat("estimated_hours"); ok && h > 0 {
				st.EstimatedHours += h
			}
			if h, ok := n.MetaFloat("actual_hours"); ok && h > 0 {
				st.ActualHours += h
			}
		}
	}
	if st.Phases > 0 {
		st.VerificationCoverage = round2(float64(len(phasesWithVerify)) / float64(st.Phases))
	}
	st.EstimatedHours, st.ActualHours = round2(st.EstimatedHours), round2(st.ActualHours)
	return st
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
	sort.SliceStable(a.Bottlenecks, func(i, j int) bool {
		x, y := a.Bottlenecks[i], a.Bottlenecks[j]
		if x.Blocks != y.Blocks {
			return x.Blocks > y.Blocks
		}
		if x.Transitive != y.Transitive {
			return x.Transitive > y.Transitive
		}
		return CompareIDs(x.ID, y.ID) < 0
	})
	a.Cycles = blockedByCycles(s, ids)
	if len(a.Cycles) == 0 {
		a.Deadlock = FindDeadlock(s)
	}
	return a
}

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
// blocked_by graph that contain a cycle (Tarjan's algorithm, iterative).
func blockedByCycles(s *Spec, ids []string) [][]string {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	type frame struct {
		id string
		i  int
	}
	for _, start := range ids {
		if _, ok := index[start]; ok {
			continue
		}
		call := []frame{{id: start}}
		index[start], low[start] = next, next
		next++
		stack = append(stack, start)
		onStack[start] = true
		for len(call) > 0 {
			top := &call[len(call)-1]
			n := s.Node(top.id)
			var edges []string
			if n != nil {
				edges = n.Dependencies.BlockedBy
			}
			if top.i < len(edges) {
				w := edges[top.i]
				top.i++
				if !s.Has(w) {
					continue
				}
				if _, ok := index[w]; !ok {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{id: w})
				} else if onStack[w] && index[w] < low[top.id] {
					low[top.id] = index[w]
				}
				continue
			}
			v := top.id
			call = call[:len(call)-1]
			if len(call) > 0 && low[v] < low[call[len(call)-1].id] {
				low[call[len(call)-1].id] = low[v]
			}
			if low[v] == index[v] {
				var comp []string
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				if len(comp) > 1 || (n != nil && containsString(n.Dependencies.BlockedBy, v)) {
					SortIDs(comp)
					out = append(out, comp)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return CompareIDs(out[i][0], out[j][0]) < 0 })
	return out
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
	cats := []*CompletenessCategory{
		{Name: "titles", Weight: completenessTitleWeight},
		{Name: "descriptions", Weight: completenessDescriptionWeight},
		{Name: "file_paths", Weight: completenessFilePathWeight},
	}
	rep := CompletenessReport{Issues: []CompletenessIssue{}, Categories: []CompletenessCategory{}}
	issue := func(id, field, msg string) {
		if len(rep.Issues) < maxCompletenessIssues {
			rep.Issues = append(rep.Issues, CompletenessIssue{id, field, msg})
		} else {
			rep.IssuesDropped++
		}
	}
	for n := range ExecutionOrder(s, RootID) {
		if n.ID == RootID {
			continue
		}
		cats[0].Total++
		if strings.TrimSpace(n.Title) != "" && n.Title != n.ID {
			cats[0].Present++
		} else {
			issue(n.ID, "title", n.ID+" has no real title")
		}
		switch n.Type {
		case TypePhase, TypeTask, TypeSubtask:
			cats[1].Total++
			desc := n.Description()
			if n.Type == TypePhase && desc == "" {
				desc = n.MetaString("purpose")
			}
			if strings.TrimSpace(desc) != "" {
				cats[1].Present++
			} else {
				issue(n.ID, "description", n.ID+" has no description")
			}
		}
		if (n.Type == TypeTask || n.Type == TypeSubtask) && n.IsLeaf() {
			switch n.TaskCategory() {
			case "investigation", "decision", "research":
			default:
				cats[2].Total++
				if n.FilePath() != "" {
					cats[2].Present++
				} else {
					issue(n.ID, "file_path", n.ID+" does not name the file it changes")
				}
			}
		}
	}
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
	return rep
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
		if !(n.Type == TypeTask || n.Type == TypeSubtask || n.Type == TypeVerify) {
			continue
		}
		if n.Type == TypeVerify && scaffoldTitles[strings.ToLower(strings.TrimSpace(n.Title))] && n.Description() == "" {
			continue
		}
		var text string
		switch scope {
		case "descriptions":
			text = n.Description()
		case "both":
			text = n.Title + " " + n.Description()
		default:
			text = n.Title
		}
		if toks := tokenSet(text); len(toks) > 0 {
			recs = append(recs, dupRecord{n.ID, toks})
		}
	}
	return recs
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
		prefix := len(r.tokens) - int(math.Ceil(t*float64(len(r.tokens)))) + 1
		seen := map[int]bool{}
		for _, tok := range r.tokens[:prefix] {
			for _, j := range index[tok] {
				if seen[j] {
					continue
				}
				seen[j] = true
				if sim := jaccard(r.tokens, recs[j].tokens); sim >= t-1e-9 {
					a, b := recs[j].id, r.id
					if CompareIDs(a, b) > 0 {
						a, b = b, a
					}
					pairs = append(pairs, DuplicatePair{A: a, B: b, Similarity: math.Round(sim*1000) / 1000, Field: scope})
				}
			}
			index[tok] = append(index[tok], i)
		}
	}
	return pairs
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

func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	set := make(map[string]bool, len(a))
	for _, x := range a {
		set[x] = true
	}
	inter := 0
	for _, x := range b {
		if set[x] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
