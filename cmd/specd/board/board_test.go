package board_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/cmd/specd/board"
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/httpguard"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/tools"
)

const secret = "specd_test-secret-of-the-viewer"

// newBoard is a board over a fresh store's MCP registry; keyed gives it
// one observer key (secret).
func newBoard(t *testing.T, keyed bool, cfg board.Config) *httptest.Server {
	t.Helper()
	var ids []string
	if keyed {
		ids = []string{"viewer"}
	}
	srv := httptest.NewServer(newHandler(t, cfg, ids...))
	t.Cleanup(srv.Close)
	return srv
}

// keySecret is the secret of the test key id ("viewer"'s is secret).
func keySecret(id string) string {
	if id == "viewer" {
		return secret
	}
	return "specd_test-secret-of-" + id
}

// newHandler is a board over a fresh store's MCP registry with one
// observer key per id (their secrets: keySecret).
func newHandler(t *testing.T, cfg board.Config, keyIDs ...string) *board.Board {
	t.Helper()
	st := storetest.Open(t)
	deps := &tools.Deps{Version: "test",
		Workspace: filepath.Dir(filepath.Dir(st.Path())), TokenBudget: core.DefaultTokenBudget,
		Runtime: mcptool.Runtime{Deadline: 10 * time.Second, Logger: cfg.Logger}}
	deps.OverStore(st)
	_, reg := tools.NewMCPServer(deps)
	// After the server closes, before the store does: the error answers
	// (a page for a missing spec) reach the store's error log.
	t.Cleanup(func() { reg.FlushErrors(context.Background()) })
	cfg.Registry, cfg.Runtime, cfg.Subscriptions = reg, deps.Runtime, deps.Subscriptions
	if len(keyIDs) > 0 {
		var lines []string
		for _, id := range keyIDs {
			line, err := httpguard.KeyLine(id, httpguard.Observer, keySecret(id))
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, line)
		}
		file := filepath.Join(t.TempDir(), "keys")
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var err error
		if cfg.Keys, err = httpguard.LoadKeys(file); err != nil {
			t.Fatal(err)
		}
	}
	return board.New(cfg, http.NotFoundHandler())
}

var noRedirect = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// login posts the key and returns the answer.
func login(t *testing.T, srv *httptest.Server, key string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/login", strings.NewReader(url.Values{"key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func get(t *testing.T, srv *httptest.Server, path string, c *http.Cookie) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestBoardSessionsAreBoundedAndExpire: the cookie carries a token, not
// the key, with HttpOnly and SameSite=Strict; at the cap the key's own
// oldest session goes; a session ends at its lifetime.
func TestBoardSessionsAreBoundedAndExpire(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv := newBoard(t, true, board.Config{MaxSessions: 2, SessionTTL: time.Hour, Now: clock})
	var cookies []*http.Cookie
	for i := 0; i < 3; i++ {
		resp := login(t, srv, secret)
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Fatalf("sign-in %d: %d with %d cookies", i, resp.StatusCode, len(resp.Cookies()))
		}
		c := resp.Cookies()[0]
		if c.Name != board.CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || strings.Contains(c.Value, secret) || len(c.Value) < 40 {
			t.Fatalf("cookie %+v: want HttpOnly, SameSite=Strict, a long token and not the key", c)
		}
		cookies = append(cookies, c)
		mu.Lock()
		now = now.Add(time.Minute)
		mu.Unlock()
	}
	if code := get(t, srv, "/", cookies[0]); code != http.StatusSeeOther {
		t.Errorf("the oldest session past the cap of 2: %d, want 303 to sign in", code)
	}
	if code := get(t, srv, "/", cookies[2]); code != http.StatusOK {
		t.Errorf("the newest session: %d, want 200", code)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if code := get(t, srv, "/", cookies[2]); code != http.StatusSeeOther {
		t.Errorf("a session past its lifetime: %d, want 303 to sign in", code)
	}
}

// TestBoardSignInRefusals: a wrong key, a body over the cap and a
// cross-origin post are refused, and nothing of the plan is served
// without a session.
func TestBoardSignInRefusals(t *testing.T) {
	srv := newBoard(t, true, board.Config{})
	if resp := login(t, srv, "specd_wrong"); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("wrong key: %d, %d cookies", resp.StatusCode, len(resp.Cookies()))
	}
	if resp := login(t, srv, strings.Repeat("x", board.MaxFormBytes+1)); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over %d bytes: %d, want 413", board.MaxFormBytes, resp.StatusCode)
	}
	if resp := login(t, srv, secret, "Origin", "http://evil.example"); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("cross-origin sign-in: %d, want 403", resp.StatusCode)
	}
	for path, want := range map[string]int{"/": 303, "/specs/x": 303, "/specs/x?part=main": 401, "/events?spec=x": 401} {
		if code := get(t, srv, path, nil); code != want {
			t.Errorf("GET %s without a session: %d, want %d", path, code, want)
		}
	}
}

// TestBoardEventStreamsAreCapped: a key holds at most MaxStreamsPerKey
// event streams; closing one frees its place.
func TestBoardEventStreamsAreCapped(t *testing.T) {
	srv := newBoard(t, false, board.Config{MaxStreamsPerKey: 1})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // before the server's Close, which waits for open streams
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?spec=some-spec", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := resp.Body.Read(buf)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(string(buf[:n]), "open") {
		t.Fatalf("first stream: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), buf[:n])
	}
	if code := get(t, srv, "/events?spec=some-spec", nil); code != http.StatusTooManyRequests {
		t.Fatalf("second stream of the key: %d, want 429", code)
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx2, cancel2 := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx2, http.MethodGet, srv.URL+"/events?spec=some-spec", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		code := resp.StatusCode
		cancel2()
		resp.Body.Close()
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing the stream, a new one still gets %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBoardSecurityHeaders: every board answer carries the strict CSP
// and Cache-Control: no-store (pages and their parts carry the plan); the
// MCP paths pass through untouched.
func TestBoardSecurityHeaders(t *testing.T) {
	srv := newBoard(t, false, board.Config{})
	for _, path := range []string{"/", "/?part=main", "/static/board.css", "/specs/nope"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Content-Security-Policy") != board.ContentSecurityPolicy || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
			resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: headers %v", path, resp.Header)
		}
	}
	resp, err := http.Get(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Security-Policy") != "" {
		t.Errorf("/mcp did not reach the next handler: %d %v", resp.StatusCode, resp.Header)
	}
}
