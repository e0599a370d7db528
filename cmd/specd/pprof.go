//go:build pprof

package main

// A build with -tags pprof (never the shipped one) serves net/http/pprof on
// the loopback address in SPECD_PPROF (e.g. 127.0.0.1:6060), for profiling
// the server under load (make load; see README, "Write throughput").

import (
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("SPECD_PPROF")
	if addr == "" {
		return
	}
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			slog.Warn("pprof listener", "err", err)
		}
	}()
}
