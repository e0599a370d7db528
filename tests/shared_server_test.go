package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// sharedServer is one `specd serve --transport http` process on a loopback
// port chosen by the kernel, with its keys and its JSON log.
type sharedServer struct {
	URL  string // http://127.0.0.1:port
	Addr string // 127.0.0.1:port
	Keys map[string]string
	Dir  string // the workspace (SPECD_WORKSPACE); the store is Dir/specd.db
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder
	done chan error
}

// startShared creates one key per id:role in keys (with specd keys add) and
// starts the server with them (none: a keyless loopback server) and args.
func startShared(t testing.TB, keys []string, args ...string) *sharedServer {
	t.Helper()
	dir := t.TempDir()
	s := &sharedServer{Keys: map[string]string{}, Dir: dir, done: make(chan error, 1)}
	all := []string{"serve", "--transport", "http", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "specd.db"), "--log-format", "json"}
	if len(keys) > 0 {
		file := filepath.Join(dir, "keys")
		for _, k := range keys {
			id, role, _ := strings.Cut(k, ":")
			out, err := exec.Command(specdBinary(t), "keys", "add", id, "--role", role, "--file", file).Output()
			if err != nil {
				t.Fatalf("keys add %s: %v", k, err)
			}
			s.Keys[id] = strings.TrimSpace(string(out))
		}
		all = append(all, "--api-keys", file)
	}
	s.cmd = exec.Command(specdBinary(t), append(all, args...)...)
	s.cmd.Env = append(os.Environ(), "SPECD_WORKSPACE="+dir)
	stderr, err := s.cmd.StderrPipe()
	must(t, err)
	must(t, s.cmd.Start())
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			s.mu.Unlock()
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "serving MCP over streamable HTTP" {
				addr <- m["addr"].(string)
			}
		}
		s.done <- s.cmd.Wait()
	}()
	select {
	case s.Addr = <-addr:
	case err := <-s.done:
		t.Fatalf("specd serve exited: %v\n%s", err, s.Log())
	case <-time.After(30 * time.Second):
		t.Fatalf("specd serve did not start:\n%s", s.Log())
	}
	s.URL = "http://" + s.Addr
	t.Cleanup(func() { s.stop(t) })
	return s
}

// Log is what the server wrote on stderr so far.
func (s *sharedServer) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// stop sends SIGTERM and waits for the exit status.
func (s *sharedServer) stop(t testing.TB) error {
	if s.cmd.ProcessState != nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		t.Errorf("specd serve ignored SIGTERM")
		return fmt.Errorf("killed")
	}
}

// client connects an mcp-go streamable-HTTP client with key id's key. The
// key rides on every request of its http.Client, the closing DELETE
// included (mcp-go sends that one without the headers of WithHTTPHeaders,
// and a keyed server refuses a DELETE without a key).
func (s *sharedServer) client(t testing.TB, keyID string) *client.Client {
	t.Helper()
	var opts []transport.StreamableHTTPCOption
	if keyID != "" {
		opts = append(opts, transport.WithHTTPBasicClient(&http.Client{Transport: bearerTransport{key: s.Keys[keyID]}}))
	}
	tr, err := transport.NewStreamableHTTP(s.URL+"/mcp", opts...)
	must(t, err)
	c := client.NewClient(tr, client.WithProtocolVersion(protocols[0]))
	initialize(t, c, protocols[0])
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// bearerTransport sends every request with Authorization: Bearer key.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// post sends one raw JSON-RPC POST to /mcp.
func (s *sharedServer) post(t testing.TB, keyID, session, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", strings.NewReader(body))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if keyID != "" {
		req.Header.Set("Authorization", "Bearer "+s.Keys[keyID])
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// refusal checks a JSON refusal body's error code.
func refusal(t testing.TB, resp *http.Response, body string, status int, code string) {
	t.Helper()
	var m map[string]any
	if resp.StatusCode != status || json.Unmarshal([]byte(body), &m) != nil || m["error"] != code {
		t.Fatalf("want %d %s with a JSON body, got %d %q", status, code, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("refusal content type %q", ct)
	}
}

func TestSharedServerKeysAndRoles(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:observer", "max:maintainer", "root:admin"})
	t.Run("no key", func(t *testing.T) {
		resp, body := s.post(t, "", "", initBody)
		refusal(t, resp, body, http.StatusUnauthorized, "UNAUTHORIZED")
		if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		resp, body := s.post(t, "", "", initBody, "Authorization", "Bearer "+s.Keys["ann"]+"x")
		refusal(t, resp, body, http.StatusUnauthorized, "UNAUTHORIZED")
	})
	obs := s.client(t, "ann")
	env := call(t, obs, "health", map[string]any{"action": "readiness"})
	rl, _ := env["meta"].(map[string]any)["rate_limit"].(map[string]any)
	if env["success"] != true || rl["limit"] == nil || rl["remaining"] == nil || rl["reset_seconds"] == nil {
		t.Fatalf("observer read: %v", env)
	}
	env = call(t, obs, "authoring", map[string]any{"action": "spec-create", "name": "not allowed"})
	if errorCode(env) != "FORBIDDEN" || !strings.Contains(*ptr(env["error"]), "observer") {
		t.Fatalf("observer write: %v", env)
	}
	if env["meta"].(map[string]any)["rate_limit"] == nil {
		t.Fatalf("a refusal carries meta.rate_limit too: %v", env)
	}
	if env := call(t, s.client(t, "max"), "authoring", map[string]any{"action": "spec-create", "name": "allowed"}); env["success"] != true {
		t.Fatalf("maintainer write: %v", env)
	}
	t.Run("metrics", func(t *testing.T) {
		get := func(key string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/metrics", nil)
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+s.Keys[key])
			}
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		if code, _ := get("max"); code != http.StatusForbidden {
			t.Fatalf("/metrics with a maintainer key: %d", code)
		}
		code, text := get("root")
		if strings.Contains(text, "specd_store_lock_wait_seconds_count 0\n") {
			t.Fatalf("no store lock wait recorded:\n%s", text)
		}
		for _, want := range []string{`specd_calls_total{action="readiness",outcome="ok",tool="health"} 1`,
			`specd_calls_total{action="spec-create",outcome="FORBIDDEN",tool="authoring"} 1`,
			"specd_sessions 2", "specd_call_duration_seconds_bucket", "specd_store_lock_wait_seconds"} {
			if code != http.StatusOK || !strings.Contains(text, want) {
				t.Fatalf("/metrics: %d, no %q in\n%s", code, want, text)
			}
		}
	})
	t.Run("healthz", func(t *testing.T) {
		resp, err := http.Get(s.URL + "/healthz")
		must(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "ok\n" {
			t.Fatalf("/healthz: %d %q", resp.StatusCode, b)
		}
	})
	t.Run("logs", func(t *testing.T) {
		log := s.Log()
		if !strings.Contains(log, `"key_id":"ann"`) || !strings.Contains(log, `"outcome":"FORBIDDEN"`) {
			t.Fatalf("call log without key id or outcome:\n%s", log)
		}
		for id, k := range s.Keys {
			if strings.Contains(log, k) {
				t.Fatalf("the log shows key %s", id)
			}
		}
	})
}

func ptr(v any) *string { s, _ := v.(string); return &s }

func TestSharedServerRefusesOpenBind(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, specdBinary(t), "serve", "--transport", "http", "--addr", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "s.db")).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--api-keys") {
		t.Fatalf("non-loopback bind without keys: %v\n%s", err, out)
	}
}

func TestSharedServerSessionsAndOrigin(t *testing.T) {
	t.Parallel()
	s := startShared(t, nil, "--max-sessions-per-key", "2", "--allowed-origins", "https://ok.example")
	t.Run("unknown session id", func(t *testing.T) {
		resp, _ := s.post(t, "", "mcp-session-3f0d4a43-5d0e-4a37-9f53-9e3a1f1b2c3d", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("made-up session id: %d, want 404", resp.StatusCode)
		}
	})
	t.Run("origin", func(t *testing.T) {
		resp, body := s.post(t, "", "", initBody, "Origin", "https://evil.example")
		refusal(t, resp, body, http.StatusForbidden, "FORBIDDEN")
		if resp, _ := s.post(t, "", "", initBody, "Origin", "https://ok.example"); resp.StatusCode != http.StatusOK {
			t.Fatalf("allowed origin: %d", resp.StatusCode)
		}
		if resp, _ := s.post(t, "", "", initBody, "Origin", "http://"+s.Addr); resp.StatusCode != http.StatusOK {
			t.Fatalf("same origin: %d", resp.StatusCode)
		}
	})
	t.Run("sessions per key", func(t *testing.T) {
		// The two above hold the cap of 2.
		resp, body := s.post(t, "", "", initBody)
		refusal(t, resp, body, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	})
}

// TestSharedServerClientCloseEndsSession: a client whose DELETE carries its
// key ends its session, so reconnecting agents do not use up the key's
// session cap (see TestSharedServerSessionBelongsToItsKey for a DELETE
// without the key).
func TestSharedServerClientCloseEndsSession(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:maintainer"}, "--max-sessions-per-key", "1")
	for i := 0; i < 3; i++ {
		c := s.client(t, "ann")
		if env := call(t, c, "health", map[string]any{"action": "liveness"}); env["success"] != true {
			t.Fatalf("client %d: %v", i, env)
		}
		must(t, c.Close())
	}
	resp, _ := s.post(t, "", "", "", "Mcp-Session-Id", "mcp-session-3f0d4a43-5d0e-4a37-9f53-9e3a1f1b2c3d")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a keyless POST with a made-up session: %d, want 401", resp.StatusCode)
	}
}

func TestSharedServerSessionIdleExpiry(t *testing.T) {
	t.Parallel()
	s := startShared(t, nil, "--session-idle-ttl", "1s")
	resp, _ := s.post(t, "", "", initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if r, _ := s.post(t, "", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusOK {
		t.Fatalf("fresh session: %d", r.StatusCode)
	}
	// The sweeper runs every max(ttl/2, 1s): the session ends 1–2 s from
	// now. Wait for that on /metrics (keyless: the caller is admin), which
	// does not touch the session as a ping would.
	waitUntil(t, "the idle session to end", func() bool {
		resp, err := http.Get(s.URL + "/metrics")
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), "\nspecd_sessions 0\n")
	})
	if r, _ := s.post(t, "", sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Fatalf("idle session after its TTL: %d, want 404", r.StatusCode)
	}
}

func TestSharedServerRateLimit(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:maintainer"}, "--rate", "0.01", "--rate-burst", "3")
	c := s.client(t, "ann")
	var last map[string]any
	for i := 0; i < 3; i++ {
		last = call(t, c, "health", map[string]any{"action": "liveness"})
		if last["success"] != true {
			t.Fatalf("call %d within the burst: %v", i, last)
		}
	}
	meta := last["meta"].(map[string]any)
	if rl := meta["rate_limit"].(map[string]any); rl["remaining"] != 0.0 || rl["limit"] != 3.0 {
		t.Fatalf("rate_limit after the burst: %v", rl)
	}
	if d, _ := meta["warning_details"].([]any); len(d) == 0 || d[0].(map[string]any)["code"] != "RATE_LIMIT_APPROACHING" {
		t.Fatalf("no RATE_LIMIT_APPROACHING under 10%% left: %v", meta)
	}
	env := call(t, c, "health", map[string]any{"action": "liveness"})
	det, _ := data(env)["details"].(map[string]any)
	if errorCode(env) != "RATE_LIMIT_EXCEEDED" || det["retry_after_seconds"] == nil || det["retry_after_seconds"].(float64) < 1 || data(env)["retry_after_seconds"] != det["retry_after_seconds"] {
		t.Fatalf("empty bucket: %v", env)
	}
}

// TestSharedServerRateLimitCountsResourceReads: resources/read spends the
// key's one bucket like a tool call: reads exhaust it (then a read is
// refused RATE_LIMIT_EXCEEDED and its handler does not run), and a tool call
// after them is refused as well.
func TestSharedServerRateLimitCountsResourceReads(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:maintainer"}, "--rate", "0.01", "--rate-burst", "3")
	c := s.client(t, "ann")
	read := func() error {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = "specd://specs"
		_, err := c.ReadResource(context.Background(), req)
		return err
	}
	for i := 0; i < 3; i++ {
		if err := read(); err != nil {
			t.Fatalf("read %d within the burst: %v", i, err)
		}
	}
	if err := read(); err == nil || !strings.Contains(err.Error(), "RATE_LIMIT_EXCEEDED") {
		t.Fatalf("read over the burst: %v, want RATE_LIMIT_EXCEEDED", err)
	}
	if env := call(t, c, "health", map[string]any{"action": "liveness"}); errorCode(env) != "RATE_LIMIT_EXCEEDED" {
		t.Fatalf("a tool call after the reads spent the bucket: %v", env)
	}
}

func TestSharedServerBodyAndHeaderCaps(t *testing.T) {
	t.Parallel()
	s := startShared(t, nil, "--max-body", "4096", "--max-header-bytes", "4096")
	t.Run("announced body over the cap", func(t *testing.T) {
		conn, err := net.Dial("tcp", s.Addr)
		must(t, err)
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", s.Addr, 300<<20)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		must(t, err)
		b, _ := io.ReadAll(resp.Body)
		refusal(t, resp, string(b), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	})
	t.Run("chunked body growing over the cap", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			fmt.Fprint(pw, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`)
			for i := 0; i < 64; i++ {
				if _, err := pw.Write([]byte(strings.Repeat("x", 1024))); err != nil {
					return
				}
			}
			fmt.Fprint(pw, `"}}`)
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/mcp", pr)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("chunked body over the cap: %d", resp.StatusCode)
		}
	})
	t.Run("header over the cap", func(t *testing.T) {
		resp, _ := s.post(t, "", "", initBody, "X-Pad", strings.Repeat("p", 8192))
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("8 KB header with a 4 KB cap: %d", resp.StatusCode)
		}
	})
}

// TestSharedServerSlowAndIdleConnections: a connection that never finishes
// its headers is closed after --read-header-timeout, and at --max-conns the
// idle connections give way to new ones. It stays sequential (before the
// parallel tests start): the connection cap's 1 s read deadline must not
// compete with them for the CPU. Its two subtests overlap: both mostly
// wait on timers.
func TestSharedServerSlowAndIdleConnections(t *testing.T) {
	s := startShared(t, nil, "--read-header-timeout", "1s", "--max-conns", "16")
	t.Run("slow headers", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", s.Addr)
		must(t, err)
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\n", s.Addr)
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.ReadAll(conn); err != nil {
			t.Fatalf("the server kept a slow-header connection open: %v", err)
		}
	})
	t.Run("connection cap", func(t *testing.T) {
		t.Parallel()
		s := startShared(t, nil, "--max-conns", "16") // headers may take 5 s here
		var conns []net.Conn
		for i := 0; i < 48; i++ {
			c, err := net.Dial("tcp", s.Addr)
			must(t, err)
			defer c.Close()
			conns = append(conns, c)
		}
		resp, err := http.Get(s.URL + "/healthz") // a fresh client still gets in
		must(t, err)
		resp.Body.Close()
		var closed atomic.Int64
		var wg sync.WaitGroup
		deadline := time.Now().Add(time.Second) // well under the 5 s header timeout
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.SetReadDeadline(deadline)
				if _, err := c.Read(make([]byte, 1)); err == io.EOF {
					closed.Add(1)
				}
			}()
		}
		wg.Wait()
		if closed.Load() < 48-16 {
			t.Fatalf("%d of 48 idle connections closed with a cap of 16", closed.Load())
		}
	})
}

func TestSharedServerGracefulShutdown(t *testing.T) {
	t.Parallel()
	s := startShared(t, nil)
	c := s.client(t, "")
	if env := call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "kept"}); env["success"] != true {
		t.Fatal(env)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.Log())
	}
	if !strings.Contains(s.Log(), "shutting down") {
		t.Fatalf("no shutdown line:\n%s", s.Log())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.Addr); err == nil {
		t.Fatal("still accepting after SIGTERM")
	}
}
