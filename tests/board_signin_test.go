package tests

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBoardSignInLimitsFromSettings: the --board-* settings reach the
// shared server's board: with two sessions per key a third sign-in ends
// the key's first session and leaves another key's alone, and with a
// burst of four sign-in attempts per client address the fifth is 429 with
// Retry-After; no key reaches the log.
func TestBoardSignInLimitsFromSettings(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"viewer:observer", "dev:maintainer"},
		"--board-max-sessions-per-key", "2", "--board-login-rate-burst", "4", "--board-login-rate", "0.001")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIn := func(id string) *http.Response {
		t.Helper()
		resp, err := noRedirect.PostForm(s.URL+"/login", url.Values{"key": {s.Keys[id]}})
		must(t, err)
		resp.Body.Close()
		return resp
	}
	page := func(c *http.Cookie) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/", nil)
		req.AddCookie(c)
		resp, err := noRedirect.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	dev := signIn("dev").Cookies()
	var viewer [][]*http.Cookie
	for i := 0; i < 3; i++ {
		viewer = append(viewer, signIn("viewer").Cookies())
	}
	if len(dev) != 1 || len(viewer[0]) != 1 || len(viewer[2]) != 1 {
		t.Fatalf("sign-ins gave cookies %v %v", dev, viewer)
	}
	if page(viewer[0][0]) != http.StatusSeeOther || page(viewer[2][0]) != http.StatusOK || page(dev[0]) != http.StatusOK {
		t.Errorf("with 2 sessions per key, viewer's third sign-in should end viewer's first session only")
	}
	resp := signIn("viewer")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || len(resp.Cookies()) != 0 {
		t.Errorf("the fifth sign-in from one address at a burst of 4: %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if strings.Contains(s.Log(), s.Keys["viewer"]) {
		t.Error("the log carries a key")
	}
}
