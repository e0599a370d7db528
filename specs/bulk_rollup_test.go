package specs

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestAddPhaseBulkMatchesSingleAdds checks that a bulk add, which rolls up
// once at the end, leaves the spec exactly as the same phase filled by one
// AddTask after another (each rolled up as it is added): same ids, same
// nodes, same counts, statuses and summaries, same header. Random task
// lists (tasks, subtasks, verify and research nodes, completed or not),
// with and without the verify scaffold, into an empty spec and one whose
// only phase is completed.
func TestAddPhaseBulkMatchesSingleAdds(t *testing.T) {
	fixed := func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	types := []NodeType{TypeTask, TypeTask, TypeSubtask, TypeSubtask, TypeVerify, TypeResearch}
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		tasks := make([]TaskInput, rng.IntN(60))
		seenTask := false
		for i := range tasks {
			typ := types[rng.IntN(len(types))]
			if typ == TypeSubtask && !seenTask {
				typ = TypeTask
			}
			seenTask = seenTask || typ == TypeTask
			tasks[i] = TaskInput{Title: fmt.Sprint("t", i), Type: typ}
		}
		in := PhaseInput{Title: "bulk", VerifyScaffold: seed%2 == 0}
		start := func() *Spec {
			s, err := NewSpec(NewSpecInput{Name: "bulk"}, fixed, nil)
			noErr(t, err)
			if seed%3 == 0 {
				p := must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "done"}, []TaskInput{{Title: "a"}}))
				must[TransitionResult](t)(UpdateStatus(s, p.TaskIDs[0], StatusCompleted, TransitionOptions{Force: true}))
			}
			return s
		}
		bulk := start()
		res := must[PhaseResult](t)(AddPhaseBulk(bulk, in, tasks))

		one := start()
		p := must[PhaseResult](t)(AddPhaseBulk(one, PhaseInput{Title: in.Title}, nil))
		var ids []string
		last := ""
		for _, task := range tasks {
			parent := p.PhaseID
			if task.Type == TypeSubtask {
				parent = last
			}
			id := must[string](t)(AddTask(one, parent, task))
			if task.Type == TypeTask {
				last = id
			}
			ids = append(ids, id)
		}
		if in.VerifyScaffold && !hasVerifyTask(tasks) {
			addVerifyScaffold(one, p.PhaseID, "")
		}
		var wantTasks, wantVerify []string
		for i, task := range tasks {
			if task.Type == TypeVerify {
				wantVerify = append(wantVerify, ids[i])
			} else {
				wantTasks = append(wantTasks, ids[i])
			}
		}
		if !slices.Equal(res.TaskIDs, wantTasks) || !slices.Equal(res.VerifyIDs[:len(wantVerify)], wantVerify) {
			t.Fatalf("seed %d: bulk ids %v %v, single adds %v %v", seed, res.TaskIDs, res.VerifyIDs, wantTasks, wantVerify)
		}
		mustNoViolations(t, bulk, fmt.Sprint("bulk, seed ", seed))
		if b, o := storedJSON(t, bulk), storedJSON(t, one); b != o {
			t.Fatalf("seed %d: the bulk add differs from single adds\nbulk: %s\none:  %s", seed, b, o)
		}
	}
}

// storedJSON is the header and every node of s as the store keeps them
// (with the internal rollup summaries, which Document leaves out).
func storedJSON(t *testing.T, s *Spec) string {
	t.Helper()
	h, err := json.Marshal(s.Header)
	noErr(t, err)
	out := string(h)
	for _, id := range s.IDs() {
		b, err := EncodeNode(s.Node(id))
		noErr(t, err)
		out += "\n" + id + " " + string(b)
	}
	return out
}
