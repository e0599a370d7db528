package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/cmd/specd/board"
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/httpguard"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/flags/registry"
	"github.com/specd/specd/tools"
)

// mcpEndpoint is the path of the streamable HTTP MCP endpoint.
const mcpEndpoint = "/mcp"

// httpConfig is the shared server's part of config (settings.go fills it).
type httpConfig struct {
	KeysFile          string
	Keys              *httpguard.Keys
	AllowedOrigins    []string
	MaxBody           int
	MaxHeaderBytes    int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxConns          int
	MaxSessionsPerKey int
	SessionIdleTTL    time.Duration
	RatePerSecond     float64
	RateBurst         int
	ShutdownTimeout   time.Duration
	Metrics           *httpguard.Metrics // made by lockWait for --transport http
	serving           bool               // --transport http
	// mount wraps the front door with the board (boardcmd.go); listening
	// hears the address once the server listens. Both may be nil.
	mount     func(http.Handler) http.Handler
	listening func(addr string)
	// Board holds the board's limits (its sessions, streams and sign-in
	// rate); attachBoard adds what it reads through.
	Board board.Config
}

// lockWait is the store's lock-wait hook: the metric of an HTTP server (it
// makes the registry), nil otherwise.
func (h *httpConfig) lockWait() func(time.Duration) {
	if h == nil || !h.serving {
		return nil
	}
	h.Metrics = httpguard.NewMetrics()
	return h.Metrics.LockWait
}

// checkBind refuses a listen address off loopback unless API keys are
// configured: an open port on a network must not serve everyone.
func checkBind(c *config) error {
	if c.Transport != "http" || httpguard.IsLoopback(c.Addr) || c.HTTP.Keys.Len() > 0 {
		return nil
	}
	return fmt.Errorf("--addr %s is not a loopback address: configure API keys first (--api-keys FILE or SPECD_API_KEYS; create one with: specd keys add ID --role maintainer)", c.Addr)
}

// serveHTTP serves MCP over streamable HTTP behind the front door
// (core/httpguard) until ctx ends (SIGINT/SIGTERM), then shuts down
// gracefully: stop accepting, let in-flight calls finish within
// --shutdown-timeout, then close what is left. The caller closes the store.
func serveHTTP(ctx context.Context, c *config, deps *tools.Deps, srv *server.MCPServer, logger *slog.Logger, access *httpguard.Access) int {
	h := c.HTTP
	if err := checkBind(c); err != nil {
		logger.Error("refusing to serve", "err", err)
		return 2
	}
	gc, fromEnv := setServerGC(os.Getenv)
	logger.Debug("garbage collector", "gogc", gc, "from_env", fromEnv)
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		logger.Error("listen", "addr", c.Addr, "err", err)
		return 1
	}
	conns := httpguard.NewConnLimiter(h.MaxConns)
	hs := &http.Server{
		MaxHeaderBytes:    h.MaxHeaderBytes,
		ReadHeaderTimeout: h.ReadHeaderTimeout,
		ReadTimeout:       h.ReadTimeout,
		WriteTimeout:      h.WriteTimeout,
		IdleTimeout:       h.IdleTimeout,
		ConnState:         conns.ConnState,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	sessions := httpguard.NewSessions(access.Metrics.Sessions)
	mcpHTTP := server.NewStreamableHTTPServer(srv,
		server.WithEndpointPath(mcpEndpoint),
		server.WithStreamableHTTPServer(hs),
		server.WithSessionIdManagerResolver(sessions),
		server.WithSessionIdleTTL(h.SessionIdleTTL),
		server.WithStreamableHTTPLogger(logger),
	)
	hs.Handler = httpguard.Handler(httpguard.Config{
		Keys:              h.Keys,
		AllowedOrigins:    h.AllowedOrigins,
		MaxBodyBytes:      int64(h.MaxBody),
		MaxSessionsPerKey: h.MaxSessionsPerKey,
		Endpoint:          mcpEndpoint,
		Sessions:          sessions,
		Metrics:           access.Metrics,
		Logger:            logger,
	}, mcptool.HTTPInput(mcpHTTP, core.MaxMessageBytes))
	if h.mount != nil {
		// the board routes every path it does not serve, the endpoint's
		// included, to the front door
		hs.Handler = httpguard.ExactPath(mcpEndpoint, hs.Handler, h.mount(hs.Handler))
	}
	logger.Info("serving MCP over streamable HTTP", "addr", ln.Addr().String(), "endpoint", mcpEndpoint, "store", c.DB,
		"version", deps.Version, "keys", h.Keys.Len(), "max_conns", h.MaxConns, "rate", h.RatePerSecond, "burst", h.RateBurst)
	if h.listening != nil {
		h.listening(ln.Addr().String())
	}
	return serveUntilDone(ctx, hs, mcpHTTP, conns.Listener(ln), h.ShutdownTimeout, logger)
}

// serveUntilDone serves hs on ln until ctx ends, then shuts mcpHTTP down
// gracefully: no new connections, calls in flight get shutdownTimeout to
// finish, then what is left is closed (exit status 0). A server that stops
// on its own with an error is logged and gives 1.
func serveUntilDone(ctx context.Context, hs *http.Server, mcpHTTP *server.StreamableHTTPServer, ln net.Listener, shutdownTimeout time.Duration, logger *slog.Logger) int {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http server stopped", "err", err)
			return 1
		}
	case <-ctx.Done():
		logger.Info("shutting down: no new connections; waiting for calls in flight", "timeout", shutdownTimeout.String())
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := mcpHTTP.Shutdown(sctx); err != nil {
			logger.Warn("shutdown timed out; closing the remaining connections", "err", err)
			_ = hs.Close()
		}
	}
	return 0
}

// newAccess is the per-call hook of the HTTP server: rate limit, roles and
// metrics.
func newAccess(c *config, m *httpguard.Metrics) *httpguard.Access {
	return &httpguard.Access{
		Rate:    httpguard.NewRateLimiter(c.HTTP.RatePerSecond, c.HTTP.RateBurst, nil),
		Metrics: m,
		Admin:   adminAction,
	}
}

// adminAction reports server administration: the write actions of the
// server and health tools (none today; the role is kept for them and for
// /metrics).
func adminAction(tool, _ string, sideEffects string) bool {
	return (tool == "server" || tool == "health") && sideEffects == mcptool.EffectWrite
}

// splitList is a comma list without blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// httpAccess wires the per-call hook for --transport http (nil otherwise):
// deps.Runtime.Access must be set before the MCP server installs the tools.
func httpAccess(c *config, deps *tools.Deps) *httpguard.Access {
	if c.Transport != "http" {
		return nil
	}
	a := newAccess(c, c.HTTP.Metrics)
	var variants [][2]string
	for _, f := range registry.Flags {
		variants = append(variants, [2]string{f.Name, "on"}, [2]string{f.Name, "off"})
	}
	c.HTTP.Metrics.Declare(c.HTTP.Keys.IDs(), variants)
	deps.Runtime.Access = a
	return a
}
