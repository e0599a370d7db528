package tests

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkInProcessLiveness is one health liveness round trip through a real
// mcp-go client and the in-process transport, envelope decoding included.
func BenchmarkInProcessLiveness(b *testing.B) {
	for _, p := range protocols {
		b.Run(p, func(b *testing.B) {
			c, _ := inProcess(b, newDeps(b, false), p)
			req := mcp.CallToolRequest{}
			req.Params.Name = "health"
			req.Params.Arguments = map[string]any{"action": "liveness"}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.CallTool(ctx, req)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkColdStart spawns `specd serve` and waits for its answer to
// initialize (2025-11-25), the way a client starts it. It reports the median
// of the iterations as median-ms (the machines are noisy; the mean is not
// the figure to quote).
func BenchmarkColdStart(b *testing.B) {
	bin := specdBinary(b)
	db := filepath.Join(b.TempDir(), "specd.db")
	const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	var samples []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(bin, "serve", "--db", db)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := io.WriteString(stdin, initMsg); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || len(line) == 0 {
			b.Fatalf("no initialize answer: %v", err)
		}
		samples = append(samples, time.Since(start))
		_ = stdin.Close()
		_ = cmd.Wait()
	}
	slices.Sort(samples)
	if len(samples) > 0 {
		b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "median-ms")
		b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "p99-ms")
	}
}
