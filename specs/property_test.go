package specs

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/specd/specd/core"
)

// randomOp applies one random authoring mutation or transition and returns
// its name and error.
func randomOp(r *rand.Rand, s *Spec) (string, error) {
	ids := s.IDs()
	pick := func() string { return ids[r.Intn(len(ids))] }
	var phases []string
	if root := s.Root(); root != nil {
		phases = root.Children.Slice()
	}
	pickLeaf := func() string {
		var leaves []string
		for _, id := range ids {
			if n := s.Node(id); n.IsWorkLeaf() && r.Intn(8) != 0 {
				leaves = append(leaves, id)
			}
		}
		if len(leaves) == 0 {
			return pick()
		}
		return leaves[r.Intn(len(leaves))]
	}
	pickPhase := func() string {
		if len(phases) == 0 || r.Intn(20) == 0 {
			return "phase-" + fmt.Sprint(r.Intn(9)+1)
		}
		return phases[r.Intn(len(phases))]
	}
	types := []NodeType{TypeTask, TypeTask, TypeTask, TypeSubtask, TypeVerify, TypeResearch}
	opts := TransitionOptions{Agent: []string{"", "s1", "s2"}[r.Intn(3)], Reason: []string{"", "r"}[r.Intn(2)], Force: r.Intn(4) == 0}
	switch k := r.Intn(26); k {
	case 22:
		id := pick()
		_, err := AddRequirement(s, id, RequirementTypes[r.Intn(3)], fmt.Sprint("req ", r.Intn(5)))
		return "AddRequirement " + id, err
	case 23:
		id := pick()
		return "UpdateEstimate " + id, UpdateEstimate(s, id, f64(float64(r.Intn(5))), Complexities[r.Intn(3)])
	case 24:
		switch r.Intn(4) {
		case 0:
			_, err := AddRisk(s, Risk{Description: fmt.Sprint("risk ", r.Intn(4)), Likelihood: "low"})
			return "AddRisk", err
		case 1:
			_, err := AddAssumption(s, fmt.Sprint("assumption ", r.Intn(4)))
			return "AddAssumption", err
		case 2:
			return "UpdateFrontmatter", UpdateFrontmatter(s, []string{"mission", "title", "risks", "status"}[r.Intn(4)], "x")
		default:
			_, err := ApplyTemplate(s, Templates()[r.Intn(4)].Name, "")
			return "ApplyTemplate", err
		}
	case 25:
		id := pickLeaf()
		if r.Intn(2) == 0 {
			return "MarkJournaled " + id, MarkJournaled(s, id)
		}
		_, err := Block(s, id, opts)
		return "Block " + id, err
	case 0, 1:
		link := r.Intn(3) != 0
		res, err := AddPhase(s, PhaseInput{Title: "P", Position: randPos(r, len(phases)+2), LinkPrevious: &link, TestCommand: []string{"", "go test"}[r.Intn(2)]})
		return "AddPhase " + res.PhaseID, err
	case 2:
		var tasks []TaskInput
		for i := r.Intn(5); i > 0; i-- {
			tasks = append(tasks, TaskInput{Type: types[r.Intn(len(types))], Title: "t"})
		}
		_, err := AddPhaseBulk(s, PhaseInput{Title: "B", Position: randPos(r, len(phases)+1)}, tasks)
		return "AddPhaseBulk", err
	case 3, 4, 5, 6:
		parent := pick()
		if r.Intn(2) == 0 {
			parent = pickPhase()
		}
		id, err := AddTask(s, parent, TaskInput{Type: types[r.Intn(len(types))], Title: "T", Position: randPos(r, 3)})
		return "AddTask " + parent + " → " + id, err
	case 7:
		id := pick()
		_, err := RemoveTask(s, id, r.Intn(3) != 0)
		return "RemoveTask " + id, err
	case 8:
		id, parent := pick(), pick()
		if r.Intn(2) == 0 {
			parent = ""
		}
		return "MoveTask " + id + " → " + parent, MoveTask(s, id, parent, randPos(r, 3))
	case 9, 10, 11:
		a, b := pick(), pick()
		typ := DependencyTypes[r.Intn(3)]
		return "AddDependency " + a + " " + typ + " " + b, AddDependency(s, a, b, typ)
	case 12:
		a, b := pick(), pick()
		typ := DependencyTypes[r.Intn(3)]
		for _, id := range ids {
			if n := s.Node(id); len(n.Dependencies.BlockedBy) > 0 && r.Intn(3) == 0 {
				a, b, typ = id, n.Dependencies.BlockedBy[0], "blocked_by"
				break
			}
		}
		return "RemoveDependency " + a + " " + b, RemoveDependency(s, a, b, typ)
	case 13:
		p := pickPhase()
		_, err := RemovePhase(s, p, r.Intn(2) == 0)
		return "RemovePhase " + p, err
	case 14:
		p := pickPhase()
		return "MovePhase " + p, MovePhase(s, p, r.Intn(len(phases)+2)-1)
	case 15, 16:
		id := pickLeaf()
		_, err := Start(s, id, opts)
		return "Start " + id, err
	case 17, 18:
		id := pickLeaf()
		_, err := Complete(s, id, opts)
		return "Complete " + id, err
	case 19:
		id := pickLeaf()
		st := []Status{StatusPending, StatusInProgress, StatusCompleted, StatusBlocked, StatusFailed}[r.Intn(5)]
		_, err := UpdateStatus(s, id, st, opts)
		return "UpdateStatus " + id + " " + string(st), err
	case 20:
		if r.Intn(2) == 0 {
			_, err := FindReplace(s, FindReplaceInput{Find: "T", Replace: "U"})
			return "FindReplace", err
		}
		to := Lifecycles()[r.Intn(4)]
		_, err := MoveLifecycle(s, to, r.Intn(2) == 0)
		return "MoveLifecycle " + string(to), err
	default:
		id := pick()
		_, err := UpdateMetadata(s, id, map[string]any{"blocking_mode": BlockingModes[r.Intn(3)]})
		return "UpdateMetadata " + id, err
	}
}

// TestPropertyInvariants applies random sequences of authoring mutations and
// transitions and checks, after every step, that the invariants hold, that a
// failed step left the view unchanged, and that committing the changes to a
// store and reading them back gives the same spec.
// Under -race it runs fewer seeds (propertySeeds, property_race_test.go):
// the race detector adds nothing to this single-goroutine code but makes it
// many times slower; make test runs the full count without -race as well.
func TestPropertyInvariants(t *testing.T) {
	seeds, steps := propertySeeds, 120
	if testing.Short() {
		seeds, steps = min(seeds, 8), 80
	}
	for seed := 1; seed <= seeds; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		s, err := NewSpec(NewSpecInput{Name: "prop", Template: Templates()[seed%4].Name}, testClock(), nil)
		noErr(t, err)
		src := MemorySource{}
		s, src = commit(s, src)
		var history []string
		for step := 0; step < steps; step++ {
			before := overlaySnapshot(t, s)
			name, err := randomOp(r, s)
			history = append(history, fmt.Sprintf("%s: %v", name, err))
			if err != nil {
				if _, ok := err.(*core.Error); !ok {
					t.Fatalf("seed %d step %d %s: non-domain error %T", seed, step, name, err)
				}
				if overlaySnapshot(t, s) != before {
					t.Fatalf("seed %d step %d: failed %s changed the view", seed, step, name)
				}
			}
			vs := CheckInvariants(s)
			vs = append(vs, rollupSummaryViolations(s)...)
			vs = append(vs, nextInPhaseViolations(s)...)
			if len(vs) > 0 {
				for _, h := range history[max(0, len(history)-8):] {
					t.Log(h)
				}
				t.Fatalf("seed %d step %d after %s: %v", seed, step, name, vs)
			}
			if step%20 == 19 {
				// What mutations produce validates without errors and needs no fix.
				doc, err := ParseDocument([]byte(docJSON(t, s)))
				noErr(t, err)
				if rep := Validate(doc); !rep.IsValid {
					t.Fatalf("seed %d step %d: mutated spec does not validate: %+v", seed, step, rep.Diagnostics)
				}
				// The one tolerated leftover: removing a node leaves other
				// nodes' informational depends pointing at it (there is no
				// reverse index to find them without reading every node).
				for _, a := range Fix(doc, FixOptions{Clock: s.Clock}).Applied {
					if a.Code != "MISSING_DEPENDENCY_TARGET" || !strings.HasSuffix(a.Location, ".depends") {
						t.Fatalf("seed %d step %d: Fix changed a consistent spec: %+v", seed, step, a)
					}
				}
			}
			if r.Intn(8) == 0 {
				want := docJSON(t, s)
				s, src = commit(s, src)
				if got := docJSON(t, s); got != want {
					t.Fatalf("seed %d step %d: committed view differs", seed, step)
				}
				if s.Dirty() {
					t.Fatal("fresh view is dirty")
				}
			}
		}
		// The incremental rollups agree with a full recompute.
		want := docJSON(t, s)
		RecomputeAll(s)
		if docJSON(t, s) != want {
			t.Fatalf("seed %d: RecomputeAll disagrees with incremental rollups", seed)
		}
	}
}

// overlaySnapshot renders the header and the view's overlay (cheap after a
// commit), to check that a failed mutation restored the view exactly.
func overlaySnapshot(t *testing.T, s *Spec) string {
	put, del := s.Changes()
	b, err := json.Marshal(struct {
		H Header
		P []*Node
		D []string
		B bool
	}{s.Header, put, del, s.bumped})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rollupSummaryViolations compares every node's internal rollup summary
// (metadata._rollup: in-progress children, first open child) with a full
// recomputation, requiring it on every node with children.
func rollupSummaryViolations(s *Spec) []Violation {
	var out []Violation
	for _, id := range s.IDs() {
		n := s.Node(id)
		_, _, _, want := computedRollupSum(s, n, true)
		if !sameRollupMeta(n, want) {
			out = append(out, Violation{Code: "ROLLUP_SUMMARY", NodeID: id, Message: fmt.Sprintf("summary %v, full recompute %v", n.Metadata[RollupMetaKey], want)})
		}
	}
	return out
}

// nextInPhaseViolations compares, for every phase, the first of
// eachActionableInPhase (which skips
// finished subtrees and uses the first_open hints) with a plain scan of the
// phase in execution order.
func nextInPhaseViolations(s *Spec) []Violation {
	root := s.Root()
	if root == nil {
		return nil
	}
	var out []Violation
	for _, pid := range root.Children.All() {
		p := s.Node(pid)
		if p == nil {
			continue
		}
		var got *Node
		eachActionableInPhase(s, p, func(n *Node) bool { got = n; return false })
		want := nextInPhaseScan(s, p)
		if got != want {
			out = append(out, Violation{Code: "NEXT_IN_PHASE", NodeID: pid, Message: fmt.Sprintf("got %v, a full scan gives %v", nodeID(got), nodeID(want))})
		}
	}
	return out
}

func nodeID(n *Node) string {
	if n == nil {
		return "<none>"
	}
	return n.ID
}

// nextInPhaseScan is the reference: every node of the phase in execution
// order.
func nextInPhaseScan(s *Spec, phase *Node) *Node {
	otherUnfinished := 0
	for m := range ExecutionOrder(s, phase.ID) {
		if m.IsWorkLeaf() && m.Type != TypeVerify && m.Status != StatusCompleted {
			otherUnfinished++
		}
	}
	memo := map[string]bool{}
	for n := range ExecutionOrder(s, phase.ID) {
		if !n.IsWorkLeaf() || n.Status != StatusPending || (n.Type == TypeVerify && otherUnfinished > 0) {
			continue
		}
		if unblockedBelow(s, n, phase.ID, memo) {
			return n
		}
	}
	return nil
}

// randPos is a random position argument: nil (the default place) or 0..hi
// (hi may be past the end, which is INVALID_POSITION).
func randPos(r *rand.Rand, hi int) *int {
	v := r.Intn(hi + 2)
	if v == 0 {
		return nil
	}
	return at(v - 1)
}
