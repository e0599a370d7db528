package etcdstore

import (
	"context"
	"strconv"
	"sync"
)

// ChangeStamp is the subscription watcher's cheap "did anything change?"
// (bucketstore.Store's; the bbolt store answers it from one stat of its
// file). Here the token is the revision of the newest spec change this
// store's watch has seen: the first call starts one watch (Changes) for
// the store's lifetime, so a spec changed through any specd server on the
// cluster moves the token of every server, and the watcher then reads the
// subscribed specs' versions (specs/specstore's SpecVersions). fresh is
// true while that watch is not established on the cluster (from the first
// call until etcd confirms it, and again while it restarts after an error
// or a compaction): a change committed then would move no token, so the
// watcher reads the versions at every look until the watch is live. Once
// it is, fresh is false: a watch event arrives after its commit, so an
// unchanged token means no change was reported since. Before the watch's
// first event the token is "0", which differs from the watcher's initial
// "" (it reads once).
func (s *Store) ChangeStamp() (token string, fresh bool) {
	s.startStamp()
	return strconv.FormatInt(s.stampRev.Load(), 10), !s.stampLive.Load()
}

// startStamp starts the store's change watch once (a no-op after Close):
// each change moves stampRev and then wakes the ChangeNotify feeds, and so
// does the watch becoming live (changes made while it was not are read
// then, the stamp having been fresh).
func (s *Store) startStamp() {
	s.stampOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopStamp = cancel
		ch := s.changes(ctx, func(live bool) {
			s.stampLive.Store(live)
			if live {
				s.wakers.wake()
			}
		})
		go func() {
			defer s.wakers.closeAll()
			for c := range ch {
				for {
					old := s.stampRev.Load()
					if c.Revision <= old || s.stampRev.CompareAndSwap(old, c.Revision) {
						break
					}
				}
				s.wakers.wake()
			}
		}()
	})
}

// ChangeNotify sends on the returned channel whenever a spec may have
// changed on the cluster, through this server or any other: after each
// change the store's watch (ChangeStamp's) reports, once that change has
// moved ChangeStamp, and whenever that watch becomes live (changes made
// while it was not are then read, the stamp being fresh); also once at
// the start, so a change made before the call is looked for. Sends are
// coalesced: the channel holds at most one pending value, and a receiver
// reads ChangeStamp and, when it moved, the versions, as a poller would.
// The subscription watcher (core/mcptool's Watch.Wake) is woken by it
// instead of waiting for its next poll, and polls (its WakeInterval) only
// as a safety net. The channel is closed when ctx ends or the store
// closes; the caller then polls ChangeStamp. The error is non-nil only
// when the store is closed.
func (s *Store) ChangeNotify(ctx context.Context) (<-chan struct{}, error) {
	if s.closed.Load() {
		return nil, UnavailableError(nil)
	}
	ch := make(chan struct{}, 1)
	ch <- struct{}{} // look once now
	if !s.wakers.add(ch) {
		return nil, UnavailableError(nil)
	}
	s.startStamp()
	context.AfterFunc(ctx, func() { s.wakers.remove(ch) })
	return ch, nil
}

// wakeSet is the channels of the live ChangeNotify feeds.
type wakeSet struct {
	mu     sync.Mutex
	chans  map[chan struct{}]struct{}
	closed bool // the store's watch ended: no feed will be woken again
}

func (w *wakeSet) add(ch chan struct{}) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	if w.chans == nil {
		w.chans = map[chan struct{}]struct{}{}
	}
	w.chans[ch] = struct{}{}
	return true
}

// remove closes ch and forgets it (the feed's context ended).
func (w *wakeSet) remove(ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.chans[ch]; ok {
		delete(w.chans, ch)
		close(ch)
	}
}

// wake sends on every feed that has no value pending.
func (w *wakeSet) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.chans {
		select {
		case ch <- struct{}{}:
		default: // one pending value says it all
		}
	}
}

// closeAll closes every feed (the watch ended: the store closed).
func (w *wakeSet) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for ch := range w.chans {
		close(ch)
	}
	w.chans = nil
}
