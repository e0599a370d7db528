package mcptool

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestHolderOf: a holder names the session without containing its id, is
// the same for the same session and differs between sessions, and carries
// the key id and the client name.
func TestHolderOf(t *testing.T) {
	a := Session{ID: "mcp-session-0b7c3f43-9d0e-4a37-9f53-9e3a1f1b2c3d", ClientName: "claude-code", KeyID: "ann"}
	b := a
	b.ID = "mcp-session-5a1e2b3c-1111-4a37-9f53-9e3a1f1b2c3d"
	ha, hb := HolderOf(a), HolderOf(b)
	if !regexp.MustCompile(`^ann/claude-code#[0-9a-f]{12}$`).MatchString(ha) {
		t.Fatalf("holder %q, want ann/claude-code#<12 hex>", ha)
	}
	if ha != HolderOf(a) || ha == hb {
		t.Fatalf("same session %q/%q, other session %q", ha, HolderOf(a), hb)
	}
	if strings.Contains(ha, a.ID) || strings.Contains(ha, "0b7c3f43") {
		t.Fatalf("holder %q carries the session id", ha)
	}
	if h := HolderOf(Session{ID: "proc-1"}); !regexp.MustCompile(`^agent#[0-9a-f]{12}$`).MatchString(h) {
		t.Fatalf("keyless, nameless holder %q", h)
	}
	long := Session{ID: "s", ClientName: strings.Repeat("é", 40)}
	if h := HolderOf(long); !strings.HasPrefix(h, strings.Repeat("é", 32)+"#") {
		t.Fatalf("long client name not cut at 64 bytes on a rune boundary: %q", h)
	}
	if h := HolderOf(Session{}); h != "" {
		t.Fatalf("no session, holder %q", h)
	}
}

// TestHolderOfIsTheHMACLabel: the label is the first 6 bytes of a fresh
// HMAC-SHA-256 of the session id under holderKey, whatever HMAC state the
// previous calls (of other sessions, at once) left behind.
func TestHolderOfIsTheHMACLabel(t *testing.T) {
	want := func(s Session) string {
		mac := hmac.New(sha256.New, holderKey)
		mac.Write([]byte(s.ID))
		name := s.ClientName
		if name == "" {
			name = "agent"
		}
		h := name + "#" + hex.EncodeToString(mac.Sum(nil)[:6])
		if s.KeyID != "" {
			h = s.KeyID + "/" + h
		}
		return h
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				s := Session{ID: fmt.Sprintf("mcp-session-%d-%d%s", g, i, strings.Repeat("x", i)), ClientName: []string{"", "claude-code"}[i%2], KeyID: []string{"", "ann"}[i%3%2]}
				if got, w := HolderOf(s), want(s); got != w {
					t.Errorf("HolderOf(%+v) = %q, want %q", s, got, w)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkHolderOf labels one session's holder, as every call does.
func BenchmarkHolderOf(b *testing.B) {
	s := Session{ID: "mcp-session-0b7c3f43-9d0e-4a37-9f53-9e3a1f1b2c3d", ClientName: "claude-code", KeyID: "ann"}
	b.ReportAllocs()
	for b.Loop() {
		HolderOf(s)
	}
}
