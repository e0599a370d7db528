package etcdstore

// SetLargeCommitHooks makes s run afterStage after staging a change larger
// than one transaction, and afterSwitch after its switch; an error from
// either ends the commit there, as a crash of the server would (tests of
// large.go). Call it before s is used concurrently.
func SetLargeCommitHooks(s *Store, afterStage, afterSwitch func() error) {
	s.afterStage, s.afterSwitch = afterStage, afterSwitch
}

// HoldWriter takes s's writer lock, so updates queue behind it until
// release; queued reports how many wait (tests of group commit).
func HoldWriter(s *Store) (release func(), queued func() int) {
	s.wmu <- struct{}{}
	return func() { <-s.wmu }, func() int {
		s.qmu.Lock()
		defer s.qmu.Unlock()
		return len(s.queue)
	}
}
