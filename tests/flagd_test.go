package tests

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
)

// flagdSync serves flagd's sync protocol (flagd.sync.v1.FlagSyncService,
// the gRPC service a flagd daemon offers on its sync port and the flagd
// provider's in-process resolver reads) with one configuration, so the
// tests can run specd against a flagd that is slow to sync, that never
// syncs, or that goes away and comes back. Each SyncFlags stream sends the
// configuration once the hold (if any) is released, then stays open.
type flagdSync struct {
	syncv1grpc.UnimplementedFlagSyncServiceServer
	config string

	mu        sync.Mutex
	hold      chan struct{} // the first response waits for it to close (nil: none)
	connected chan struct{} // closed at the first SyncFlags request
	once      sync.Once

	srv  *grpc.Server
	port int
}

// startFlagdSync listens on 127.0.0.1:port (0: a free one).
func startFlagdSync(t testing.TB, config string, hold chan struct{}, port int) *flagdSync {
	t.Helper()
	f := &flagdSync{config: config, hold: hold, connected: make(chan struct{})}
	f.listen(t, port)
	return f
}

func (f *flagdSync) listen(t testing.TB, port int) {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	must(t, err)
	f.port = l.Addr().(*net.TCPAddr).Port
	f.srv = grpc.NewServer()
	syncv1grpc.RegisterFlagSyncServiceServer(f.srv, f)
	go func() { _ = f.srv.Serve(l) }()
	t.Cleanup(f.srv.Stop)
}

// stop ends every stream and closes the port (flagd going away).
func (f *flagdSync) stop() { f.srv.Stop() }

// restart serves again on the same port (flagd coming back).
func (f *flagdSync) restart(t testing.TB) { f.listen(t, f.port) }

func (f *flagdSync) SyncFlags(_ *syncv1.SyncFlagsRequest, stream grpc.ServerStreamingServer[syncv1.SyncFlagsResponse]) error {
	f.once.Do(func() { close(f.connected) })
	f.mu.Lock()
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-stream.Context().Done():
			return nil
		}
	}
	if err := stream.Send(&syncv1.SyncFlagsResponse{FlagConfiguration: f.config}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

func (f *flagdSync) FetchAllFlags(context.Context, *syncv1.FetchAllFlagsRequest) (*syncv1.FetchAllFlagsResponse, error) {
	return &syncv1.FetchAllFlagsResponse{FlagConfiguration: f.config}, nil
}

// flagdArgs are serve's options for the flagd provider on port.
func flagdArgs(port int) []string {
	return []string{"--flags-provider", "flagd", "--flagd-host", "127.0.0.1", "--flagd-port", fmt.Sprint(port)}
}

// TestFlagdFirstSyncBeforeServing: a new process does not answer before
// flagd's first sync arrives (up to 2 s): with the rollout at 0% and the
// first sync 800 ms after the provider connects, the first session is v1.
// A flagd that never syncs lets the process serve after 2 s, with the
// registry defaults and a FALLBACK_USED warning on the answers; a session
// begun after the sync arrives has neither.
func TestFlagdFirstSyncBeforeServing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	config := flagFile(map[string]string{"response_contract_v2": "off"}, nil)
	t.Run("slow first sync", func(t *testing.T) {
		t.Parallel()
		hold := make(chan struct{})
		fd := startFlagdSync(t, config, hold, 0)
		go func() {
			<-fd.connected
			<-timeAfter(800)
			close(hold)
		}()
		p := startStdio(t, t.TempDir(), flagdArgs(fd.port)...)
		if isV2(t, p.c) {
			t.Fatalf("served v2 before flagd's first sync (rollout at 0%%):\n%s", p.stderr)
		}
		if strings.Contains(p.stderr.String(), "not ready") {
			t.Fatalf("a sync within 2 s was reported as not ready:\n%s", p.stderr)
		}
	})
	t.Run("no sync", func(t *testing.T) {
		t.Parallel()
		hold := make(chan struct{})
		fd := startFlagdSync(t, config, hold, 0)
		p := startStdio(t, t.TempDir(), flagdArgs(fd.port)...)
		env := call(t, p.c, "health", map[string]any{"action": "readiness"}) // v2: the registry default
		if !strings.Contains(strings.Join(warningCodes(env), ","), "FALLBACK_USED") {
			t.Fatalf("an answer under the registry default carries no FALLBACK_USED: %v", env["meta"])
		}
		if n := strings.Count(p.stderr.String(), "flag provider not ready"); n != 1 {
			t.Fatalf("%d not-ready warnings:\n%s", n, p.stderr)
		}
		hc := data(call(t, p.c, "health", map[string]any{"action": "check"}))["flags"].(map[string]any)
		if hc["provider"] != "flagd" || hc["state"] == "ready" {
			t.Fatalf("health check flags before the first sync: %v", hc)
		}
		close(hold)
		waitUntil(t, "the sync to arrive", func() bool {
			return data(call(t, p.c, "health", map[string]any{"action": "check"}))["flags"].(map[string]any)["state"] == "ready"
		})
	})
}

// TestFlagdLossAndRecovery: flagd going away is logged once and health
// check reports the provider's state; its return is logged once and health
// check reports ready again. The configuration synced before the loss
// stays in force meanwhile.
func TestFlagdLossAndRecovery(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	fd := startFlagdSync(t, flagFile(map[string]string{"task_batch_operations": "off"}, nil), nil, 0)
	p := startStdioEnv(t, t.TempDir(), []string{"FLAGD_RETRY_BACKOFF_MS=100", "FLAGD_RETRY_BACKOFF_MAX_MS=300"}, flagdArgs(fd.port)...)
	check := func() (map[string]any, map[string]any) {
		env := call(t, p.c, "health", map[string]any{"action": "check"})
		return data(env)["flags"].(map[string]any), env
	}
	if fl, env := check(); fl["provider"] != "flagd" || fl["state"] != "ready" || len(warningCodes(env)) != 0 {
		t.Fatalf("health check with flagd up: %v %v", fl, env["meta"])
	}
	gate := func() string {
		return errorCode(call(t, p.c, "task", map[string]any{"action": "reset-batch", "spec_id": "x"}))
	}
	if gate() != "FEATURE_DISABLED" {
		t.Fatal("flagd's configuration is not applied")
	}
	fd.stop()
	waitUntil(t, "the loss to be logged", func() bool { return strings.Contains(p.stderr.String(), "flag provider lost") })
	fl, env := check()
	if fl["state"] == "ready" || !strings.Contains(fmt.Sprint(env["meta"].(map[string]any)["warnings"]), "flagd at 127.0.0.1") ||
		!strings.Contains(strings.Join(warningCodes(env), ","), "FLAG_PROVIDER_UNAVAILABLE") {
		t.Fatalf("health check with flagd gone: %v %v", fl, env["meta"])
	}
	if gate() != "FEATURE_DISABLED" {
		t.Fatal("the configuration synced before the loss was dropped")
	}
	<-timeAfter(1500) // several reconnect attempts fail meanwhile
	fd.restart(t)
	waitUntil(t, "the recovery to be logged", func() bool { return strings.Contains(p.stderr.String(), "flag provider recovered") })
	if fl, env := check(); fl["state"] != "ready" || len(warningCodes(env)) != 0 {
		t.Fatalf("health check after flagd came back: %v %v", fl, env["meta"])
	}
	if lost, back := strings.Count(p.stderr.String(), "flag provider lost"), strings.Count(p.stderr.String(), "flag provider recovered"); lost != 1 || back != 1 {
		t.Fatalf("logged %d losses and %d recoveries, want one each:\n%s", lost, back, p.stderr)
	}
}
