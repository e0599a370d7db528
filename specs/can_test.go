package specs

import (
	"fmt"
	"math/rand"
	"testing"
)

// tryOn is a fresh view of the committed spec s over src: a move tried on
// it leaves s as it was.
func tryOn(s *Spec, src MemorySource) *Spec {
	v := NewSpecView(s.Header.Clone(), src)
	v.Clock = s.Clock
	return v
}

// TestPropertyCanMatchesMove: in many generated states, the read models'
// can_start (task info, for no session, the holder and another session),
// can_complete and can_archive (lifecycle state) are true exactly when the
// move they predict succeeds. Both answers of can_start and can_complete
// must occur, so the property is not met by one constant (every folder
// may archive, so can_archive is always true).
func TestPropertyCanMatchesMove(t *testing.T) {
	seeds, steps := propertySeeds, 80
	if testing.Short() {
		seeds = min(seeds, 8)
	}
	seen := map[string]bool{}
	lifecycles := Lifecycles()
	for seed := 1; seed <= seeds; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		s, err := NewSpec(NewSpecInput{Name: "prop", Template: Templates()[seed%4].Name}, testClock(), nil)
		noErr(t, err)
		src := MemorySource{}
		for step := 0; step < steps; step++ {
			name, _ := randomOp(r, s)
			if r.Intn(6) == 0 {
				_, _ = MoveLifecycle(s, lifecycles[r.Intn(len(lifecycles))], r.Intn(2) == 0)
			}
			s, src = commit(s, src)
			where := fmt.Sprintf("seed %d step %d after %s", seed, step, name)
			for _, id := range s.IDs() {
				n := s.Node(id)
				for _, agent := range []string{"", "s1", "s2"} {
					can := InfoOf(s, n, agent).CanStart
					_, err := Start(tryOn(s, src), id, TransitionOptions{Agent: agent})
					if can != (err == nil) {
						t.Fatalf("%s: %s (%s) by %q: can_start %v, start: %v", where, id, n.Status, agent, can, err)
					}
					seen[fmt.Sprint("start ", can)] = true
				}
			}
			st := StateOf(s)
			for _, m := range []struct {
				name string
				can  bool
				to   Lifecycle
			}{{"complete", st.CanComplete, LifecycleCompleted}, {"archive", st.CanArchive, LifecycleArchived}} {
				_, err := MoveLifecycle(tryOn(s, src), m.to, false)
				if m.can != (err == nil) {
					t.Fatalf("%s: %s from %s at %d%%: can_%s %v, move: %v", where, m.name, st.Lifecycle, st.ProgressPercentage, m.name, m.can, err)
				}
				seen[fmt.Sprint(m.name, " ", m.can)] = true
			}
		}
	}
	for _, k := range []string{"start true", "start false", "complete true", "complete false", "archive true"} {
		if !seen[k] {
			t.Errorf("no generated state gave %s: the property was not exercised", k)
		}
	}
}
