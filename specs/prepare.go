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
	ts.Previous, ts.Parent = siblingAndParent(s, n)
	own, _, err := j.TaskEntries(n.ID, 0, PrepareJournalEntries, nil)
	if err != nil {
		return ts, err
	}
	ts.Journal = own
	ts.PreviousEntry, err = newestEntry(j, ts.Previous)
	return ts, err
}

// siblingAndParent are n's previous sibling (nil when first or when its
// parent is missing) and its parent when that is work (a task, subtask or
// group), else nil.
func siblingAndParent(s *Spec, n *Node) (previous, parent *Node) {
	p := s.Node(n.Parent)
	if p == nil {
		return nil, nil
	}
	if i := p.Children.Index(n.ID); i > 0 {
		previous = s.Node(p.Children.At(i - 1))
	}
	if isWorkParent(p) {
		parent = p
	}
	return previous, parent
}

// isWorkParent reports whether p is work others sit under: a task, subtask
// or group.
func isWorkParent(p *Node) bool {
	return p.Type == TypeTask || p.Type == TypeSubtask || p.Type == TypeGroup
}

// newestEntry is n's newest journal entry (nil when n is nil or has none).
// Errors are the journal's.
func newestEntry(j JournalReader, n *Node) (*JournalEntry, error) {
	if n == nil {
		return nil, nil
	}
	last, _, err := j.TaskEntries(n.ID, 0, 1, nil)
	if err != nil || len(last) != 1 {
		return nil, err
	}
	return &last[0], nil
}
