package httpguard

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// ConnLimiter caps the connections a server holds open. At the cap, a new
// connection evicts the oldest one that carries no request (new and still
// sending its headers, or idle between requests); when every connection is
// busy the new one is closed at once. So idle or slow connections, however
// many, cannot keep a fresh client out, and the server's file descriptors
// stay under the cap.
//
// Wire it with Listener around the server's listener and ConnState as the
// http.Server's ConnState.
type ConnLimiter struct {
	max int

	mu    sync.Mutex
	conns map[net.Conn]*connState
}

type connState struct {
	idle  bool
	since time.Time
}

// NewConnLimiter caps open connections at max.
func NewConnLimiter(max int) *ConnLimiter {
	return &ConnLimiter{max: max, conns: map[net.Conn]*connState{}}
}

// Open is the number of connections held.
func (l *ConnLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Listener wraps inner so that Accept enforces the cap.
func (l *ConnLimiter) Listener(inner net.Listener) net.Listener {
	return &limitListener{Listener: inner, l: l}
}

type limitListener struct {
	net.Listener
	l *ConnLimiter
}

func (ll *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ll.l.admit(c) {
			return c, nil
		}
		_ = c.Close()
	}
}

// admit registers c, evicting the oldest idle connection at the cap; false
// when every held connection is busy.
func (l *ConnLimiter) admit(c net.Conn) bool {
	l.mu.Lock()
	var victim net.Conn
	if len(l.conns) >= l.max {
		var oldest time.Time
		for vc, st := range l.conns {
			if st.idle && (victim == nil || st.since.Before(oldest)) {
				victim, oldest = vc, st.since
			}
		}
		if victim == nil {
			l.mu.Unlock()
			return false
		}
		delete(l.conns, victim)
	}
	l.conns[c] = &connState{idle: true, since: time.Now()}
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Close()
	}
	return true
}

// ConnState tracks each connection's state (http.Server.ConnState).
func (l *ConnLimiter) ConnState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.conns[c]
	switch s {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	case http.StateActive:
		if ok {
			st.idle = false
		}
	case http.StateNew, http.StateIdle:
		if ok {
			st.idle, st.since = true, time.Now()
		}
	}
}
