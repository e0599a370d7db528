package board_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/cmd/specd/board"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// signIn signs in with key id's secret (sending the cookie c when not nil)
// and returns the session cookie; it fails the test unless the board
// answers 303 with one.
func signIn(t *testing.T, srv *httptest.Server, id string, c *http.Cookie) *http.Cookie {
	t.Helper()
	var hdr []string
	if c != nil {
		hdr = []string{"Cookie", c.String()}
	}
	resp := login(t, srv, keySecret(id), hdr...)
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("sign-in of %s: %d with %d cookies", id, resp.StatusCode, len(resp.Cookies()))
	}
	return resp.Cookies()[0]
}

// openEvents opens the event stream of c's session and reads up to its
// opening comment.
func openEvents(t *testing.T, srv *httptest.Server, c *http.Cookie) (*http.Response, *bufio.Reader) {
	t.Helper()
	// The deadline only bounds a broken build (a stream that never ends);
	// nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel) // before the server's Close, which waits for open streams
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?spec=some-spec", nil)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("event stream: %d, want 200", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream before its opening: %v", err)
		}
		if line == ": open\n" {
			return resp, r
		}
	}
}

// streamEnds reads the rest of a stream: the board must end it, after a
// signed-out event.
func streamEnds(t *testing.T, resp *http.Response, r *bufio.Reader, what string) {
	t.Helper()
	rest, err := io.ReadAll(r)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: the event stream outlived its session (%v)", what, err)
	}
	if !strings.Contains(string(rest), "event: signed-out\n") {
		t.Errorf("%s: the stream ended without a signed-out event: %q", what, rest)
	}
}

// TestBoardStreamEndsWithItsSession: an open event stream ends, with a
// signed-out event, when its session ends — signed out, past its lifetime,
// or evicted by a newer session of its key — and reconnecting it is 401.
func TestBoardStreamEndsWithItsSession(t *testing.T) {
	t.Run("sign-out", func(t *testing.T) {
		srv := newBoard(t, true, board.Config{})
		c := signIn(t, srv, "viewer", nil)
		resp, r := openEvents(t, srv, c)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/logout", nil)
		req.AddCookie(c)
		out, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out.Body.Close()
		streamEnds(t, resp, r, "after sign-out")
		if code := get(t, srv, "/events?spec=some-spec", c); code != http.StatusUnauthorized {
			t.Errorf("reconnecting after sign-out: %d, want 401", code)
		}
	})
	t.Run("expiry", func(t *testing.T) {
		clock := newFakeClock()
		srv := newBoard(t, true, board.Config{SessionTTL: time.Hour, Now: clock.Now})
		c := signIn(t, srv, "viewer", nil)
		resp, r := openEvents(t, srv, c)
		clock.Add(time.Hour)
		// The board learns of the expiry on its next look at the session
		// (a page load); its timer does the same when the clock is real.
		if code := get(t, srv, "/", c); code != http.StatusSeeOther {
			t.Errorf("a page past the session's lifetime: %d, want 303", code)
		}
		streamEnds(t, resp, r, "past the lifetime")
		if code := get(t, srv, "/events?spec=some-spec", c); code != http.StatusUnauthorized {
			t.Errorf("reconnecting past the lifetime: %d, want 401", code)
		}
	})
	t.Run("eviction", func(t *testing.T) {
		srv := newBoard(t, true, board.Config{MaxSessionsPerKey: 1})
		c := signIn(t, srv, "viewer", nil)
		resp, r := openEvents(t, srv, c)
		signIn(t, srv, "viewer", nil)
		streamEnds(t, resp, r, "evicted")
		if code := get(t, srv, "/events?spec=some-spec", c); code != http.StatusUnauthorized {
			t.Errorf("reconnecting once evicted: %d, want 401", code)
		}
	})
}

// TestBoardStreamEndsAtItsSessionsLifetime: with the real clock, the
// session's own timer ends it at its lifetime, and its open stream with
// it, with no request to notice. A session that expired before its stream
// opened is tried again with a longer lifetime.
func TestBoardStreamEndsAtItsSessionsLifetime(t *testing.T) {
	for ttl := time.Second; ; ttl *= 2 {
		srv := newBoard(t, true, board.Config{SessionTTL: ttl})
		c := signIn(t, srv, "viewer", nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute+ttl)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?spec=some-spec", nil)
		req.AddCookie(c)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusUnauthorized && ttl < time.Minute {
			resp.Body.Close()
			continue
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("event stream: %d", resp.StatusCode)
		}
		streamEnds(t, resp, bufio.NewReader(resp.Body), "at the session's lifetime")
		return
	}
}

// TestBoardSignInNeverEvictsAnotherKeysSession: sign-ins of one key evict
// that key's own oldest session past MaxSessionsPerKey, never another
// key's; at MaxSessions a key without a session of its own is refused
// (503, Retry-After) instead of evicting someone else.
func TestBoardSignInNeverEvictsAnotherKeysSession(t *testing.T) {
	clock := newFakeClock()
	srv := httptest.NewServer(newHandler(t, board.Config{MaxSessions: 3, MaxSessionsPerKey: 2, LoginBurst: 100, Now: clock.Now},
		"viewer", "other", "third"))
	t.Cleanup(srv.Close)
	v1 := signIn(t, srv, "viewer", nil)
	var others []*http.Cookie
	for i := 0; i < 5; i++ {
		clock.Add(time.Minute)
		others = append(others, signIn(t, srv, "other", nil))
	}
	for i, c := range others {
		want := http.StatusSeeOther
		if i >= 3 {
			want = http.StatusOK
		}
		if code := get(t, srv, "/", c); code != want {
			t.Errorf("other's session %d of 5 (2 per key): %d, want %d", i+1, code, want)
		}
	}
	if code := get(t, srv, "/", v1); code != http.StatusOK {
		t.Fatalf("viewer's session after 5 sign-ins of another key: %d, want 200", code)
	}
	resp := login(t, srv, keySecret("third"))
	if resp.StatusCode != http.StatusServiceUnavailable || len(resp.Cookies()) != 0 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a new key at the cap of 3 sessions: %d, %d cookies, Retry-After %q; want 503 with Retry-After and no cookie",
			resp.StatusCode, len(resp.Cookies()), resp.Header.Get("Retry-After"))
	}
	for _, c := range []*http.Cookie{v1, others[3], others[4]} {
		if code := get(t, srv, "/", c); code != http.StatusOK {
			t.Errorf("a session after the refused sign-in: %d, want 200", code)
		}
	}
	clock.Add(time.Minute)
	v2 := signIn(t, srv, "viewer", nil)
	if get(t, srv, "/", v1) != http.StatusSeeOther || get(t, srv, "/", v2) != http.StatusOK || get(t, srv, "/", others[4]) != http.StatusOK {
		t.Errorf("at the cap, viewer's second sign-in should replace viewer's first session only")
	}
}

// postLogin posts a sign-in from the client address addr straight to the
// handler.
func postLogin(h http.Handler, addr, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://board.example/login", strings.NewReader(url.Values{"key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = addr
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestBoardSignInIsRateLimited: sign-in attempts, failed ones included,
// are limited per client address (IPv6 by /64) and per key: beyond the
// burst 429 with Retry-After and no session; the buckets refill at the
// rate.
func TestBoardSignInIsRateLimited(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, board.Config{LoginRate: 0.5, LoginBurst: 2, Now: clock.Now}, "viewer")
	refused := func(w *httptest.ResponseRecorder, what string) {
		t.Helper()
		after, _ := strconv.Atoi(w.Header().Get("Retry-After"))
		if w.Code != http.StatusTooManyRequests || after < 1 || len(w.Result().Cookies()) != 0 {
			t.Errorf("%s: %d, Retry-After %q, %d cookies; want 429 with Retry-After ≥ 1 and no cookie",
				what, w.Code, w.Header().Get("Retry-After"), len(w.Result().Cookies()))
		}
	}
	for i := 0; i < 2; i++ {
		if w := postLogin(h, "192.0.2.1:1000", "specd_wrong"); w.Code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d, want 401", i+1, w.Code)
		}
	}
	refused(postLogin(h, "192.0.2.1:1001", secret), "the right key after two failures from one address")
	for i, addr := range []string{"192.0.2.10:1", "192.0.2.11:1"} {
		if w := postLogin(h, addr, secret); w.Code != http.StatusSeeOther {
			t.Fatalf("sign-in %d of the key: %d, want 303", i+1, w.Code)
		}
	}
	refused(postLogin(h, "192.0.2.12:1", secret), "a third sign-in of one key from a fresh address")
	if w := postLogin(h, "[2001:db8::1]:1", "specd_wrong"); w.Code != http.StatusUnauthorized {
		t.Fatalf("wrong key from 2001:db8::1: %d", w.Code)
	}
	if w := postLogin(h, "[2001:db8::2]:1", "specd_wrong"); w.Code != http.StatusUnauthorized {
		t.Fatalf("wrong key from 2001:db8::2: %d", w.Code)
	}
	refused(postLogin(h, "[2001:db8::3]:1", "specd_wrong"), "a third attempt from the same IPv6 /64")
	clock.Add(2 * time.Second) // one attempt at 0.5 a second
	if w := postLogin(h, "192.0.2.1:1002", secret); w.Code != http.StatusSeeOther {
		t.Errorf("after the buckets refilled: %d, want 303", w.Code)
	}
}

// TestBoardSignInRotatesTheCookie: a sign-in always issues a new token and
// ends the session the browser's previous cookie named, so a token planted
// or seen before the sign-in is worth nothing after it.
func TestBoardSignInRotatesTheCookie(t *testing.T) {
	srv := newBoard(t, true, board.Config{})
	c1 := signIn(t, srv, "viewer", nil)
	c2 := signIn(t, srv, "viewer", c1)
	if c2.Value == c1.Value {
		t.Fatal("the sign-in kept the previous token")
	}
	if code := get(t, srv, "/", c1); code != http.StatusSeeOther {
		t.Errorf("the previous token after a new sign-in: %d, want 303", code)
	}
	if code := get(t, srv, "/", c2); code != http.StatusOK {
		t.Errorf("the new token: %d, want 200", code)
	}
	planted := &http.Cookie{Name: board.CookieName, Value: "chosen-by-someone-else-0123456789abcdefghijklmn"}
	if c3 := signIn(t, srv, "viewer", planted); c3.Value == planted.Value {
		t.Error("the sign-in adopted a planted token")
	}
}

// TestBoardFormPostsRefuseCrossSite: sign-in and sign-out refuse what a
// browser marks as sent from another site (Sec-Fetch-Site), even without
// an Origin header, and another origin; the board's own pages (same-origin,
// also with Origin null) and clients that are no browser pass. A refused
// sign-out leaves the session alive.
func TestBoardFormPostsRefuseCrossSite(t *testing.T) {
	srv := newBoard(t, true, board.Config{LoginBurst: 100})
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Sec-Fetch-Site", "same-site"}, {"Origin", "http://evil.example"},
		{"Sec-Fetch-Site", "cross-site", "Origin", srv.URL}} {
		if resp := login(t, srv, secret, hdr...); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("sign-in with %v: %d, want 403", hdr, resp.StatusCode)
		}
	}
	for _, hdr := range [][]string{nil, {"Sec-Fetch-Site", "same-origin", "Origin", "null"}, {"Origin", srv.URL}} {
		if resp := login(t, srv, secret, hdr...); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("sign-in with %v: %d, want 303", hdr, resp.StatusCode)
		}
	}
	c := signIn(t, srv, "viewer", nil)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/logout", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.AddCookie(c)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || get(t, srv, "/", c) != http.StatusOK {
		t.Errorf("cross-site sign-out: %d, and the session should stay", resp.StatusCode)
	}
}

// TestBoardCookieIsSecureBehindTLS: behind a proxy that terminates TLS
// (X-Forwarded-Proto: https) the session cookie is Secure, so the browser
// never sends it over plain HTTP.
func TestBoardCookieIsSecureBehindTLS(t *testing.T) {
	srv := newBoard(t, true, board.Config{})
	resp := login(t, srv, secret, "X-Forwarded-Proto", "https")
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 || !resp.Cookies()[0].Secure {
		t.Fatalf("sign-in behind TLS: %d, cookies %v; want one Secure cookie", resp.StatusCode, resp.Cookies())
	}
}

// TestBoardSignInFormPassesALiveSession: the sign-in form of a browser
// that holds a live session (another tab signed in again while this one's
// stream said signed-out) goes straight to its next page.
func TestBoardSignInFormPassesALiveSession(t *testing.T) {
	srv := newBoard(t, true, board.Config{})
	c := signIn(t, srv, "viewer", nil)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/login?next=%2Fspecs%2Fx", nil)
	req.AddCookie(c)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/specs/x" {
		t.Errorf("the form with a live session: %d to %q, want 303 to /specs/x", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code := get(t, srv, "/login", nil); code != http.StatusOK {
		t.Errorf("the form without a session: %d, want 200", code)
	}
}
