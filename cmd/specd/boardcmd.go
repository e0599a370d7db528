package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/specd/specd/cmd/specd/board"
	"github.com/specd/specd/core/httpguard"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/tools"
)

// attachBoard makes `specd serve --transport http` serve the board at /
// (cmd/specd/board) beside /mcp: it reads through the MCP server's own
// registry and runtime (roles, rate limits) and follows changes through its
// subscription registry; the API keys are the server's, its limits the
// --board-* settings.
func attachBoard(c *config, deps *tools.Deps, reg *mcptool.Registry, logger *slog.Logger) {
	c.HTTP.mount = func(next http.Handler) http.Handler {
		cfg := c.HTTP.Board
		cfg.Registry, cfg.Runtime, cfg.Subscriptions = reg, deps.Runtime, deps.Subscriptions
		cfg.Keys, cfg.Logger = c.HTTP.Keys, logger
		return board.New(cfg, next)
	}
}

// boardCmd is "specd board [--addr HOST:PORT] [flags]": a shared HTTP server
// (MCP at /mcp, the board at /) on loopback — by default on a port the
// kernel picks — that prints the board's URL on stdout once it listens and
// serves until SIGINT/SIGTERM. An address off loopback is a usage error:
// to share a board on a network, run `specd serve --transport http` with
// API keys.
func boardCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	addr, given := flagValue(args, "addr")
	if !given {
		addr = "127.0.0.1:0"
		args = append([]string{"--addr=" + addr}, args...)
	}
	if !httpguard.IsLoopback(addr) {
		fmt.Fprintf(stderr, "specd board: --addr %s is not a loopback address; share a board with specd serve --transport http and API keys\n", addr)
		return 2
	}
	args = append(args, "--transport=http")
	return serveWith(args, stdin, stdout, stderr, func(listening string) {
		fmt.Fprintf(stdout, "specd board: http://%s/\n", listening)
	})
}

// flagValue is the value of --name (or -name) in args, in either the
// "--name v" or the "--name=v" form.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		n, v, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || n != name {
			continue
		}
		if hasVal {
			return v, true
		}
		if i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}
