package specs

// TaskSurroundings is what an agent reads before working on a task: the
// task's own prerequisites, its previous sibling with that sibling's newest
// journal entry, its parent when the parent is itself work (a task,
// subtask or group; phases are reported as Phase), its phase, and its own
// newest journal entries.
type TaskSurroundings struct {
	Deps          DepCheck
	Previous      *Node
	PreviousEntry *JournalEntry
	Parent        *Node
	Phase         *Node
	Journal       []JournalEntry // newest first, at most PrepareJournalEntries
}

// PrepareJournalEntries is how many of the task's own entries Surroundings
// reads.
const PrepareJournalEntries = 3

// Surroundings reads n's surroundings; the journal is read through its
// task index, so the cost depends on the two tasks' entries, not the
// journal's size. Errors are the journal's.
func Surroundings(s *Spec, j JournalReader, n *Node) (TaskSurroundings, error) {
	ts := TaskSurroundings{Deps: CheckDeps(s, n), Phase: PhaseOf(s, n)}
	if p := s.Node(n.Parent); p != nil {
		if i := indexOf(p.Children, n.ID); i > 0 {
			ts.Previous = s.Node(p.Children[i-1])
		}
		if p.Type == TypeTask || p.Type == TypeSubtask || p.Type == TypeGroup {
			ts.Parent = p
		}
	}
	own, _, err := j.TaskEntries(n.ID, 0, PrepareJournalEntries, nil)
	if err != nil {
		return ts, err
	}
	ts.Journal = own
	if ts.Previous != nil {
		last, _, err := j.TaskEntries(ts.Previous.ID, 0, 1, nil)
		if err != nil {
			return ts, err
		}
		if len(last) == 1 {
			ts.PreviousEntry = &last[0]
		}
	}
	return ts, nil
}
