package httpguard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
)

func writeKeys(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadKeys(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	good, _ := KeyLine("ann", Observer, secret)
	other, _ := KeyLine("bob", Admin, secret+"x")
	hash := strings.Fields(good)[2]
	for _, tc := range []struct {
		name  string
		lines []string
		err   string
	}{
		{"good", []string{"# team keys", "", good, other}, ""},
		{"bad role", []string{"ann owner " + hash}, "role"},
		{"short hash", []string{"ann observer abc"}, "64 hex"},
		{"fields", []string{"ann observer"}, "want"},
		{"bad id", []string{"../ann observer " + hash}, "key id"},
		{"twice", []string{good, good}, "twice"},
		{"empty", []string{"# nothing"}, "no keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := LoadKeys(writeKeys(t, tc.lines...))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one mentioning %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k, ok := ks.Lookup(secret); !ok || k.ID != "ann" || k.Role != Observer {
				t.Fatalf("lookup of ann's key: %v %v", k, ok)
			}
			if k, ok := ks.Lookup(secret + "x"); !ok || k.ID != "bob" {
				t.Fatalf("lookup of bob's key: %v %v", k, ok)
			}
			for _, wrong := range []string{"", "specd_", secret[:len(secret)-1], hash} {
				if _, ok := ks.Lookup(wrong); ok {
					t.Fatalf("%q accepted", wrong)
				}
			}
		})
	}
}

func TestRateLimiterQuota(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewRateLimiter(2, 10, func() time.Time { return now })
	for i := 9; i >= 0; i-- {
		q := l.Take("ann")
		if !q.Allowed || q.Remaining != i || q.Limit != 10 {
			t.Fatalf("call %d: %+v", 10-i, q)
		}
	}
	q := l.Take("ann")
	if q.Allowed || q.RetryAfterSeconds != 1 || q.ResetSeconds != 5 {
		t.Fatalf("empty bucket: %+v", q)
	}
	if q := l.Take("bob"); !q.Allowed || q.Remaining != 9 {
		t.Fatalf("another key has its own bucket: %+v", q)
	}
	now = now.Add(time.Second)
	if q := l.Take("ann"); !q.Allowed || q.Remaining != 1 {
		t.Fatalf("after 1 s at 2/s: %+v", q)
	}
}

func TestAccessCharge(t *testing.T) {
	now := time.Unix(1000, 0)
	a := &Access{Rate: NewRateLimiter(0.01, 20, func() time.Time { return now })}
	ctx := WithIdentity(context.Background(), Identity{KeyID: "ann", Role: Maintainer})
	warned := 0
	for i := 1; i <= 20; i++ {
		opts, err := a.Charge(ctx)
		if err != nil {
			t.Fatalf("call %d refused: %v", i, err)
		}
		var m core.Meta
		for _, o := range opts {
			o(&m)
		}
		if m.RateLimit == nil || m.RateLimit.Remaining != 20-i {
			t.Fatalf("call %d: rate_limit %+v", i, m.RateLimit)
		}
		if len(m.WarningDetails) > 0 && m.WarningDetails[0].Code == core.WarnRateLimitApproaching {
			warned++
		}
	}
	if warned != 2 { // remaining 1 and 0 are under 10% of 20
		t.Fatalf("RATE_LIMIT_APPROACHING on %d answers, want 2", warned)
	}
	opts, err := a.Charge(ctx)
	if err == nil || err.Code != "RATE_LIMIT_EXCEEDED" || err.Details["retry_after_seconds"] != 100 || err.Extra["retry_after_seconds"] != 100 || len(opts) == 0 {
		t.Fatalf("empty bucket: %v %v", err, opts)
	}
	if opts, err := a.Charge(context.Background()); err != nil || opts != nil {
		t.Fatal("a call without identity (stdio, CLI) is not charged")
	}
}

func TestAccessPermit(t *testing.T) {
	a := &Access{Admin: func(tool, _, se string) bool { return tool == "server" && se == "write" }}
	for _, tc := range []struct {
		role        Role
		tool, se    string
		allowed     bool
		mustMention string
	}{
		{Observer, "task", "none", true, ""},
		{Observer, "task", "read", true, ""},
		{Observer, "task", "write", false, "observer"},
		{Maintainer, "task", "write", true, ""},
		{Maintainer, "server", "write", false, "admin"},
		{Observer, "server", "write", false, "admin"},
		{Admin, "server", "write", true, ""},
	} {
		ctx := WithIdentity(context.Background(), Identity{KeyID: "k", Role: tc.role})
		err := a.Permit(ctx, tc.tool, "act", tc.se)
		if (err == nil) != tc.allowed {
			t.Fatalf("%s %s/%s: %v", tc.role, tc.tool, tc.se, err)
		}
		if err != nil && (err.Code != "FORBIDDEN" || !strings.Contains(err.Message, string(tc.role)) || !strings.Contains(err.Message, tc.mustMention)) {
			t.Fatalf("%s %s/%s: %v", tc.role, tc.tool, tc.se, err)
		}
	}
}

// TestEndpointSkipsTheMux: with Endpoint set, a request for exactly that
// path reaches the MCP handler through the front door's checks (an origin
// it does not allow is still refused) without the mux's routing (r.Pattern
// stays unset); /healthz and every other path are routed as before, other
// paths to the MCP handler too.
func TestEndpointSkipsTheMux(t *testing.T) {
	var patterns []string
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		patterns = append(patterns, r.URL.Path+"="+r.Pattern)
		w.WriteHeader(http.StatusAccepted)
	})
	h := Handler(Config{Endpoint: "/mcp", Metrics: NewMetrics()}, mcp)
	for _, tc := range []struct {
		path, origin string
		status       int
	}{
		{"/mcp", "", http.StatusAccepted},
		{"/mcp", "https://evil.example", http.StatusForbidden},
		{"/other", "", http.StatusAccepted},
		{"/mcp/", "", http.StatusAccepted},
		{"/healthz", "", http.StatusOK},
	} {
		r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader("{}"))
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Fatalf("%s (origin %q): %d, want %d", tc.path, tc.origin, w.Code, tc.status)
		}
	}
	if want := []string{"/mcp=", "/other=/", "/mcp/=/"}; !slices.Equal(patterns, want) {
		t.Fatalf("the MCP handler saw %v, want %v", patterns, want)
	}
}
