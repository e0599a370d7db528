package httpguard

import (
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/server"
)

const sessionPrefix = "mcp-session-"

// Sessions is the register of the MCP session ids this server issued, each
// with the key that opened it. An id it never issued, or one already ended
// (DELETE, or the idle sweep of mcp-go's WithSessionIdleTTL), is refused:
// mcp-go then answers 404 as the streamable-HTTP specification asks.
// Ended ids are forgotten at once, so the register holds live sessions only.
type Sessions struct {
	onChange func(live int) // reports the live count (metrics); may be nil

	mu    sync.Mutex
	owner map[string]string // session id → key id
	byKey map[string]int    // key id → live sessions
}

// NewSessions returns an empty register; onChange (may be nil) hears the
// number of live sessions after every change.
func NewSessions(onChange func(live int)) *Sessions {
	return &Sessions{onChange: onChange, owner: map[string]string{}, byKey: map[string]int{}}
}

// Count is the number of live sessions opened with key id.
func (s *Sessions) Count(keyID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey[keyID]
}

// Live is the number of live sessions.
func (s *Sessions) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owner)
}

// Owner is the key id that opened session id, and whether id is live.
func (s *Sessions) Owner(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.owner[id]
	return k, ok
}

func (s *Sessions) add(id, keyID string) {
	s.mu.Lock()
	s.owner[id] = keyID
	s.byKey[keyID]++
	n := len(s.owner)
	s.mu.Unlock()
	if s.onChange != nil {
		s.onChange(n)
	}
}

func (s *Sessions) end(id string) {
	s.mu.Lock()
	k, ok := s.owner[id]
	if ok {
		delete(s.owner, id)
		if s.byKey[k]--; s.byKey[k] <= 0 {
			delete(s.byKey, k)
		}
	}
	n := len(s.owner)
	s.mu.Unlock()
	if ok && s.onChange != nil {
		s.onChange(n)
	}
}

// ResolveSessionIdManager implements server.SessionIdManagerResolver: the
// manager it returns records new sessions under the request's key id. r is
// nil for mcp-go's idle sweeper, which only terminates.
func (s *Sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	m := sessionManager{s: s}
	if r != nil {
		if id, ok := IdentityFrom(r.Context()); ok {
			m.keyID = id.KeyID
		}
	}
	return m
}

type sessionManager struct {
	s     *Sessions
	keyID string
}

func (m sessionManager) Generate() string {
	id := sessionPrefix + uuid.NewString()
	m.s.add(id, m.keyID)
	return id
}

// Validate accepts live ids issued to the same key; any other id is an
// error (mcp-go answers 404).
func (m sessionManager) Validate(id string) (bool, error) {
	owner, ok := m.s.Owner(id)
	if !ok || !strings.HasPrefix(id, sessionPrefix) || owner != m.keyID {
		return false, errUnknownSession
	}
	return false, nil
}

func (m sessionManager) Terminate(id string) (bool, error) {
	if owner, ok := m.s.Owner(id); !ok || (m.keyID != "" && owner != m.keyID) {
		return false, errUnknownSession
	}
	m.s.end(id)
	return false, nil
}

type sessionError string

func (e sessionError) Error() string { return string(e) }

const errUnknownSession = sessionError("unknown session id")
