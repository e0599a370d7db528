package main

import (
	"context"
	"errors"
	"sync"

	"github.com/specd/specd/core/store/bucketstore"
)

// installIDReader reads the store's install id for the flag identity
// (flags.Options.LoadInstallID) so that no call waits on an unreachable
// store for it more than once per process. The first read starts when the
// reader is made (at start-up, beside the store's own first use, whose meta
// read it shares) and the first loads wait for it: on a reachable store
// that is one round trip, and every client has its full identity from its
// first call. Once a read has failed, a load answers that failure at once
// and starts another read in the background (one at a time), whose answer
// a later load finds. A read is bounded by the store's own request timeout
// (3 s on etcd) and, in specd call, by the call's deadline.
type installIDReader struct {
	read func() (string, error)

	mu      sync.Mutex
	id      string
	err     error         // the last read's failure
	failed  bool          // a read has failed: loads no longer wait
	running chan struct{} // closed when the read in flight ends; nil when none
}

// newInstallIDReader makes a reader over read and starts the first read.
func newInstallIDReader(read func() (string, error)) *installIDReader {
	r := &installIDReader{read: read}
	r.mu.Lock()
	r.start()
	r.mu.Unlock()
	return r
}

// start starts a read unless one is in flight and returns its end; r.mu
// must be held.
func (r *installIDReader) start() chan struct{} {
	if r.running != nil {
		return r.running
	}
	done := make(chan struct{})
	r.running = done
	go func() {
		id, err := r.read()
		r.mu.Lock()
		if err == nil && id == "" {
			err = errors.New("the store has no install id")
		}
		if err == nil {
			r.id = id
		} else {
			r.err, r.failed = err, true
		}
		r.running = nil
		r.mu.Unlock()
		close(done)
	}()
	return done
}

// Load is the install id, or why it is not known yet.
func (r *installIDReader) Load() (string, error) {
	r.mu.Lock()
	if r.id != "" {
		defer r.mu.Unlock()
		return r.id, nil
	}
	done := r.start()
	if r.failed {
		defer r.mu.Unlock()
		return "", r.err
	}
	r.mu.Unlock()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id, r.err
}

// installIDLoader is the flag identity's install-id read for c: an
// installIDReader whose reads wait within the call's deadline for specd
// call (c.callCtx), else within the store's own request timeout.
func installIDLoader(c *config, st bucketstore.Store) func() (string, error) {
	return newInstallIDReader(func() (string, error) {
		ctx := context.Background()
		if c.callCtx != nil {
			ctx = c.callCtx
		}
		return st.InstallID(ctx)
	}).Load
}
