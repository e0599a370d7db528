package etcdstore

import (
	"context"
	"strconv"
)

// ChangeStamp is the subscription watcher's cheap "did anything change?"
// (bucketstore.Store's; the bbolt store answers it from one stat of its
// file). Here the token is the revision of the newest spec change this
// store's watch has seen: the first call starts one watch (Changes) for
// the store's lifetime, so a spec changed through any specd server on the
// cluster moves the token of every server, and the watcher then reads the
// subscribed specs' versions (specs/specstore's SpecVersions). fresh is always false: a
// watch event arrives after its commit, so an unchanged token means no
// change was reported since. Before the watch's first event the token is
// "0", which differs from the watcher's initial "" (it reads once).
func (s *Store) ChangeStamp() (token string, fresh bool) {
	s.stampOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopStamp = cancel
		ch := s.Changes(ctx)
		go func() {
			for c := range ch {
				for {
					old := s.stampRev.Load()
					if c.Revision <= old || s.stampRev.CompareAndSwap(old, c.Revision) {
						break
					}
				}
			}
		}()
	})
	return strconv.FormatInt(s.stampRev.Load(), 10), false
}
