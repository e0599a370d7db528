package specs

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

// childPrefixes is every prefix scanChildNumber could be asked about kids
// that matters: each id cut before each "-", and the ids themselves.
func childPrefixes(kids []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, id := range kids {
		add(id)
		for i := range len(id) {
			if id[i] == '-' {
				add(id[:i])
			}
		}
	}
	return out
}

// checkChildNumbers fails when newChildNumbers(kids) answers differently
// from scanChildNumber(kids, p) for a prefix p.
func checkChildNumbers(t *testing.T, kids []string) {
	t.Helper()
	nums := newChildNumbers(ChildListOf(kids))
	for _, p := range append(childPrefixes(kids), "", "zz", "task-1") {
		if got, want := nums.top[p], scanChildNumber(ChildListOf(kids), p); got != want {
			t.Fatalf("children %q, prefix %q: memo %d, scan %d", kids, p, got, want)
		}
	}
}

// TestChildNumbersMatchScan checks the memo's one-pass numbering against
// the scan on the ids numberAfter treats specially: signs (Atoi takes
// "+5" and "-5"), leading zeros, numbers too large for an int, a bare
// number, digits inside a segment, an empty prefix.
func TestChildNumbersMatchScan(t *testing.T) {
	ids := []string{
		"task-1-1", "task-1-10", "task-1-007", "task-1--5", "task-1-+5", "task-1-+", "task-1-", "task-1-x",
		"task-1-2-3", "task-1-0", "task-1-00", "task-1-99999999999999999999", "task-1-9223372036854775807",
		"task-1-0000000000000000000000000042", "-7", "+7", "7", "-+7", "--7", "a-+-7", "a+7", "a1", "a-1b",
		"verify-1-3", "research-1-2", "group-1-4", "phase-2", "spec-root", "", "-", "task-1-+-3", "task-1-++3",
	}
	for _, id := range ids {
		checkChildNumbers(t, []string{id})
	}
	checkChildNumbers(t, ids)
}

// FuzzChildNumbers checks the memo's numbering against the scan on any
// list of ids (one per line).
func FuzzChildNumbers(f *testing.F) {
	f.Add("task-1-1\ntask-1-+5\ntask-1--9\ntask-1-007")
	f.Add("a-1\na-2-3\n-4\n+5\nb-99999999999999999999")
	f.Fuzz(func(t *testing.T, list string) {
		checkChildNumbers(t, strings.Split(list, "\n"))
	})
}

// ---- a differential run of mutations, as the store serves them ----

// memoStore is a store as specs/specstore keeps one for this test's
// purpose: encoded nodes (the stored bytes) and a header.
type memoStore struct {
	header Header
	raw    map[string][]byte
}

// memoServer is one server over a memoStore: its decoded-node cache,
// validated by the stored bytes and written through on commit, as
// specstore's nodeCache (two servers over one store are two processes
// writing the same etcd).
type memoServer struct {
	st    *memoStore
	cache map[string]memoCached
}

type memoCached struct {
	raw []byte
	n   *Node
}

// memoSource is one view's NodeSource: the same node for the same id
// during the view, from the server's cache when the bytes match.
type memoSource struct {
	srv  *memoServer
	seen map[string]*Node
}

func (m memoSource) Get(id string) (*Node, bool) {
	if n, ok := m.seen[id]; ok {
		return n, n != nil
	}
	raw, ok := m.srv.st.raw[id]
	if !ok {
		m.seen[id] = nil
		return nil, false
	}
	if c, ok := m.srv.cache[id]; ok && bytes.Equal(c.raw, raw) {
		m.seen[id] = c.n
		return c.n, true
	}
	n, err := DecodeNode(id, raw)
	if err != nil {
		panic(err)
	}
	m.srv.cache[id] = memoCached{raw: raw, n: n}
	m.seen[id] = n
	return n, true
}

func (m memoSource) IDs() []string { return sortedKeys(m.srv.st.raw) }

func (srv *memoServer) view() *Spec {
	s := NewSpecView(srv.st.header.Clone(), memoSource{srv: srv, seen: map[string]*Node{}})
	s.Clock = testClock()
	return s
}

// commit writes the view's changes through this server's cache; lost
// leaves the stored bytes unchanged (a commit that failed after the
// write-through), so the cached nodes never match again.
func (srv *memoServer) commit(t *testing.T, s *Spec, lost bool) {
	t.Helper()
	put, del := s.Changes()
	raws := make([][]byte, len(put))
	for i, n := range put {
		b, err := EncodeNode(n)
		noErr(t, err)
		raws[i] = b
		srv.cache[n.ID] = memoCached{raw: b, n: n}
	}
	if lost {
		return
	}
	for _, id := range del {
		delete(srv.st.raw, id)
	}
	for i, n := range put {
		srv.st.raw[n.ID] = raws[i]
	}
	srv.st.header = s.Header.Clone()
}

// byteReader hands out the bytes of a fuzz input as choices (0 when used
// up).
type byteReader struct{ b []byte }

func (r *byteReader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return int(c)
}

func (r *byteReader) pick(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[r.next()%len(list)]
}

var memoTypes = []NodeType{TypeTask, TypeSubtask, TypeVerify, TypeResearch, TypeGroup}

// checkNewNodeIDs fails when NewNodeID, for any node of s as parent and
// any type, differs from the plain rule (scan the parent's children, then
// the first free id), or when a node's memo differs from its children's
// fresh numbering. It returns how many nodes answered from a memo.
func checkNewNodeIDs(t *testing.T, s *Spec, step string) int {
	t.Helper()
	memos := 0
	for _, id := range s.IDs() {
		n := s.Node(id)
		if n.nums.describes(n.Children) {
			memos++
			if want := newChildNumbers(n.Children).top; !maps.Equal(n.nums.top, want) {
				t.Fatalf("%s: %s's memo %v, its children number %v", step, id, n.nums.top, want)
			}
		}
		for _, typ := range memoTypes {
			prefix := nodeIDPrefix(s, n, id, typ)
			want := freeID(s, prefix, scanChildNumber(n.Children, prefix)+1)
			if got := NewNodeID(s, id, typ); got != want {
				t.Fatalf("%s: NewNodeID(%s, %s) = %s, the scan gives %s", step, id, typ, got, want)
			}
		}
	}
	return memos
}

// memoSetup stores a spec whose parents sit on both sides of
// memoMinChildren: two long phases, a task with many subtasks, a group.
func memoSetup(t *testing.T) *memoStore {
	s := newTestSpec(t)
	bulk := func(n int, title string) []TaskInput {
		out := make([]TaskInput, n)
		for i := range out {
			out[i] = TaskInput{Title: fmt.Sprintf("%s %d", title, i)}
		}
		return out
	}
	must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "One"}, bulk(memoMinChildren+8, "a")))
	p2 := must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "Two", VerifyScaffold: true}, bulk(memoMinChildren-2, "b")))
	for i := range memoMinChildren + 1 {
		must[string](t)(AddTask(s, "task-1-1", TaskInput{Title: fmt.Sprint("s", i), Type: TypeSubtask}))
	}
	// Groups come from imports only: put one in place.
	g := "group-2-1"
	grp := newPendingNode(TypeGroup, "g")
	grp.ID, grp.Parent = g, p2.PhaseID
	s.Put(grp)
	s.insertChild(p2.PhaseID, 0, g)
	for i := range 5 {
		must[string](t)(AddTask(s, g, TaskInput{Title: fmt.Sprint("g", i)}))
	}
	RecomputeAll(s)
	mustNoViolations(t, s, "setup")
	st := &memoStore{raw: map[string][]byte{}}
	(&memoServer{st: st, cache: map[string]memoCached{}}).commit(t, s, false)
	return st
}

// runMemoOps runs the mutations ops describes, alternating between two
// servers over one store, and checks every NewNodeID after each one. It
// returns how many checks found a node answering from its memo.
func runMemoOps(t *testing.T, ops []byte) int {
	st := memoSetup(t)
	servers := []*memoServer{{st: st, cache: map[string]memoCached{}}, {st: st, cache: map[string]memoCached{}}}
	r := &byteReader{b: ops}
	memos := 0
	for step := 0; len(r.b) > 0; step++ {
		srv := servers[r.next()%2]
		s := srv.view()
		for k := r.next()%4 + 1; k > 0 && len(r.b) > 0; k-- {
			desc := memoOp(s, r)
			memos += checkNewNodeIDs(t, s, fmt.Sprintf("step %d %s", step, desc))
		}
		srv.commit(t, s, r.next()%8 == 0)
		for i, other := range servers {
			memos += checkNewNodeIDs(t, other.view(), fmt.Sprintf("step %d, server %d after commit", step, i))
		}
	}
	return memos
}

// memoOp runs one mutation chosen by r on s (errors are part of the run:
// a refused mutation leaves the view as it was) and describes it.
func memoOp(s *Spec, r *byteReader) string {
	ids := s.IDs()
	var parents, tasks, phases []string
	for _, id := range ids {
		switch n := s.Node(id); n.Type {
		case TypePhase:
			phases = append(phases, id)
			parents = append(parents, id)
		case TypeGroup:
			parents = append(parents, id)
		case TypeTask, TypeSubtask, TypeVerify, TypeResearch:
			tasks = append(tasks, id)
			if n.Type == TypeTask || n.Type == TypeSubtask {
				parents = append(parents, id)
			}
		}
	}
	pos := func() *int {
		if p := r.next(); p%3 == 0 {
			return at(p / 3)
		}
		return nil
	}
	switch op := r.next() % 16; {
	case op < 8: // adds, mostly to the long lists
		parent := r.pick(parents)
		if op < 4 {
			parent = r.pick(phases)
		}
		typ := memoTypes[r.next()%len(memoTypes)]
		id, err := AddTask(s, parent, TaskInput{Title: "x", Type: typ, Position: pos()})
		return fmt.Sprintf("add %s under %s: %s %v", typ, parent, id, err)
	case op == 8:
		id := r.pick(tasks)
		_, err := RemoveTask(s, id, r.next()%2 == 0)
		return fmt.Sprintf("remove %s: %v", id, err)
	case op < 11:
		id, parent := r.pick(tasks), r.pick(parents)
		return fmt.Sprintf("move %s to %s: %v", id, parent, MoveTask(s, id, parent, pos()))
	case op == 11:
		id := r.pick(tasks)
		status := []Status{StatusCompleted, StatusInProgress, StatusPending}[r.next()%3]
		_, err := UpdateStatus(s, id, status, TransitionOptions{Force: true, Reason: "r", TakeOver: true})
		return fmt.Sprintf("status %s %s: %v", id, status, err)
	case op == 12:
		res, err := AddPhase(s, PhaseInput{Title: "p"})
		return fmt.Sprintf("phase-add %s: %v", res.PhaseID, err)
	case op == 13 && r.next()%4 == 0:
		id := r.pick(phases)
		_, err := RemovePhase(s, id, true)
		return fmt.Sprintf("phase-remove %s: %v", id, err)
	case op == 14:
		id := r.pick(phases)
		return fmt.Sprintf("phase-move %s: %v", id, MovePhase(s, id, r.next()%4))
	default: // an edit of a parent that leaves its children as they are
		id := r.pick(parents)
		if e := s.Edit(id); e != nil {
			e.Title = "edited"
		}
		return "edit " + id
	}
}

// TestNewNodeIDMemoDifferential runs random mutations (adds of every type
// at any position, removes, moves in and out, status changes, phases
// added, removed and moved, edits, lost commits, two servers over one
// store) and checks after every one that NewNodeID gives the ids of the
// plain scan for every parent and type, and that every memo numbers its
// node's children exactly.
func TestNewNodeIDMemoDifferential(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	memos := 0
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 22))
		ops := make([]byte, 400)
		for i := range ops {
			ops[i] = byte(rng.IntN(256))
		}
		memos += runMemoOps(t, ops)
	}
	if memos == 0 {
		t.Fatal("no node ever answered from a memo: the run tests nothing")
	}
}

// FuzzNewNodeIDMemo is TestNewNodeIDMemoDifferential on any sequence of
// mutations (seed corpus in testdata/fuzz/FuzzNewNodeIDMemo).
func FuzzNewNodeIDMemo(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 1, 1, 4, 1, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 600 {
			ops = ops[:600]
		}
		runMemoOps(t, ops)
	})
}

// memoPhase returns phase-1 of s, failing unless it answers from a memo:
// the tests below would otherwise test nothing.
func memoPhase(t *testing.T, s *Spec) *Node {
	t.Helper()
	p := s.Node("phase-1")
	if !p.nums.describes(p.Children) {
		t.Fatalf("phase-1 (%d children) has no memo", p.Children.Len())
	}
	return p
}

// wantNextTask fails unless the next task id under phase-1 is want, and
// every NewNodeID and memo of s agrees with the scan.
func wantNextTask(t *testing.T, s *Spec, want string) {
	t.Helper()
	if got := NewNodeID(s, "phase-1", TypeTask); got != want {
		t.Fatalf("next task under phase-1 = %s, want %s", got, want)
	}
	checkNewNodeIDs(t, s, want)
}

// TestNewNodeIDMemoCarried pins where the memo survives, so that adds to
// a long phase stay lookups: through an add (the node written and cached),
// into the next view over the cache, and through a clone (a rollup edit).
func TestNewNodeIDMemoCarried(t *testing.T) {
	srv := &memoServer{st: memoSetup(t), cache: map[string]memoCached{}}
	s := srv.view()
	if p := s.Node("phase-1"); p.nums != nil {
		t.Fatal("a decoded node has a memo")
	}
	must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "a"}))
	memoPhase(t, s)
	srv.commit(t, s, false)
	s = srv.view()
	memoPhase(t, s)
	must[TransitionResult](t)(UpdateStatus(s, "task-1-2", StatusInProgress, TransitionOptions{}))
	if _, ok := s.overlay["phase-1"]; !ok {
		t.Fatal("the status change did not edit phase-1")
	}
	memoPhase(t, s)
	wantNextTask(t, s, "task-1-42")
}

// TestNewNodeIDMemoInvalidated checks, for each edit of a node's children,
// that a memo made before it never answers after it (the ids are those of
// the scan, and differ from what the old memo would give).
func TestNewNodeIDMemoInvalidated(t *testing.T) {
	// Each case starts from a view where phase-1 holds task-1-1..41 and
	// answers from a memo, committed when commit is set.
	cases := []struct {
		name   string
		commit bool
		edit   func(t *testing.T, s *Spec)
		want   string
	}{
		{"remove the largest", false, func(t *testing.T, s *Spec) {
			must[[]string](t)(RemoveTask(s, "task-1-41", false))
		}, "task-1-41"},
		{"remove the largest, then a clone in the next view", true, func(t *testing.T, s *Spec) {
			must[[]string](t)(RemoveTask(s, "task-1-41", false))
			put, del := s.Changes()
			src := MemorySource{}
			for _, id := range s.IDs() {
				src[id] = s.Node(id)
			}
			src.Apply(put, del)
			next := NewSpecView(s.Header, src)
			next.Clock = s.Clock
			*s = *next
			s.Edit("phase-1").Title = "cloned"
		}, "task-1-41"},
		{"move the largest out, then remove another", false, func(t *testing.T, s *Spec) {
			must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "b"})) // task-1-42
			noErr(t, MoveTask(s, "task-1-42", "phase-2", nil))
			must[[]string](t)(RemoveTask(s, "task-1-41", false))
		}, "task-1-41"},
		{"move a larger one in", false, func(t *testing.T, s *Spec) {
			must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "b"})) // task-1-42
			noErr(t, MoveTask(s, "task-1-42", "phase-2", nil))
			must[[]string](t)(RemoveTask(s, "task-1-41", false))
			wantNextTask(t, s, "task-1-41")
			noErr(t, MoveTask(s, "task-1-42", "phase-1", at(0)))
		}, "task-1-43"},
		{"reorder and refused mutations", false, func(t *testing.T, s *Spec) {
			noErr(t, MoveTask(s, "task-1-41", "phase-1", at(0)))
			if err := MoveTask(s, "task-1-3", "phase-1", at(999)); err == nil {
				t.Fatal("a move to position 999 was accepted")
			}
			if _, err := AddTask(s, "phase-1", TaskInput{Title: "c", Position: at(999)}); err == nil {
				t.Fatal("an add at position 999 was accepted")
			}
			must[[]string](t)(RemoveTask(s, "task-1-41", false))
		}, "task-1-41"},
		{"a list cut short and appended to", false, func(t *testing.T, s *Spec) {
			e := s.Edit("phase-1") // the node the add made, with its memo
			e.Children = ChildListOf(e.Children.Range(0, e.Children.Len()-1))
			s.Delete("task-1-41")
			wantNextTask(t, s, "task-1-41")
			e.Children = e.Children.Inserted(e.Children.Len(), "task-1-7") // where task-1-41 was
		}, "task-1-41"},
		{"a decoded copy (another process wrote it)", false, func(t *testing.T, s *Spec) {
			raw, err := EncodeNode(s.Node("phase-1"))
			noErr(t, err)
			n, err := DecodeNode("phase-1", raw)
			noErr(t, err)
			if n.nums != nil {
				t.Fatal("a decoded node has a memo")
			}
			must[[]string](t)(RemoveTask(s, "task-1-41", false))
		}, "task-1-41"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := &memoServer{st: memoSetup(t), cache: map[string]memoCached{}}
			s := srv.view()
			must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "a"})) // task-1-41
			if c.commit {
				srv.commit(t, s, false)
				s = srv.view()
			}
			memoPhase(t, s)
			c.edit(t, s)
			wantNextTask(t, s, c.want)
		})
	}
}

// TestNewNodeIDMemoSharedNodes adds under one shared phase node from views
// on several goroutines at once, as the server's requests do, with the
// node as the add wrote it (with a memo) and as another process's write
// is decoded (without one, so each view numbers the children itself):
// shared nodes are only read (go test -race), and every view gets the
// same id.
func TestNewNodeIDMemoSharedNodes(t *testing.T) {
	st := memoSetup(t)
	writer := &memoServer{st: st, cache: map[string]memoCached{}}
	s := writer.view()
	must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "a"}))
	writer.commit(t, s, false)
	for _, srv := range []*memoServer{writer, {st: st, cache: map[string]memoCached{}}} {
		src := MemorySource{}
		for id := range st.raw {
			src[id], _ = memoSource{srv: srv, seen: map[string]*Node{}}.Get(id)
		}
		if p := src["phase-1"]; p.nums.describes(p.Children) != (srv == writer) {
			t.Fatalf("phase-1 has a memo: %v", p.nums != nil)
		}
		errs := make(chan error, 4)
		for range 4 {
			go func() {
				for range 50 {
					v := NewSpecView(st.header, src)
					v.Clock = testClock()
					id, err := AddTask(v, "phase-1", TaskInput{Title: "b"})
					if err == nil && id != "task-1-42" {
						err = fmt.Errorf("added %s, want task-1-42", id)
					}
					if err != nil {
						errs <- err
						return
					}
					v.Edit("phase-1").Title = "cloned"
				}
				errs <- nil
			}()
		}
		for range 4 {
			noErr(t, <-errs)
		}
	}
}
