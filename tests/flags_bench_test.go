package tests

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/flags"
	"github.com/specd/specd/flags/registry"
)

// benchFlags opens the flags service over a real flag file with a 50/50
// fractional rule on every flag (the costliest targeting a rollout uses).
func benchFlags(b *testing.B) *flags.Service {
	file := filepath.Join(b.TempDir(), "flags.json")
	frac := `{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"fractional":[["on",50],["off",50]]}}`
	raw := map[string]string{}
	for _, f := range registry.Flags {
		raw[f.Name] = frac
	}
	must(b, os.WriteFile(file, []byte(flagFile(nil, raw)), 0o644))
	svc, err := flags.Open(context.Background(), flags.Options{Path: file, InstallID: "bench", Transport: "stdio"})
	must(b, err)
	b.Cleanup(func() { svc.Close() })
	return svc
}

// BenchmarkFlagDecision is the flag work on one call's path: the session's
// contract decision (cached after the first call), one gate evaluation
// through OpenFeature and the flagd file provider (fractional rule), and
// the rollout health record.
func BenchmarkFlagDecision(b *testing.B) {
	fl := benchFlags(b)
	ctx := context.Background()
	fc := mcptool.FlagContext{SessionID: "s1", ClientName: "agent", ClientVersion: "1", Tool: "task", Action: "reset-batch"}
	b.Run("contract-cached", func(b *testing.B) {
		for b.Loop() {
			fl.Contract(ctx, fc)
		}
	})
	b.Run("gate-evaluate", func(b *testing.B) {
		for b.Loop() {
			fl.Gate(ctx, registry.TaskBatchOperations, fc)
		}
	})
	b.Run("observe", func(b *testing.B) {
		ds := []mcptool.FlagDecision{fl.Contract(ctx, fc), fl.Gate(ctx, registry.TaskBatchOperations, fc)}
		for b.Loop() {
			fl.Observe(ds, "", 40_000)
		}
	})
}

// BenchmarkTaskNextFlags is task next on 1,000 tasks without flags and with
// the flags service wired (contract lookup + health record per call; next
// itself is not gated), so the difference is the flags' cost on the
// hottest call.
func BenchmarkTaskNextFlags(b *testing.B) {
	for _, withFlags := range []bool{false, true} {
		name := "without"
		if withFlags {
			name = "with"
		}
		b.Run(name, func(b *testing.B) {
			e := newTaskBench(b)
			if withFlags {
				e.deps.Runtime.Flags = benchFlags(b)
			}
			id := e.seed(b, 1_000, false, 0)
			for b.Loop() {
				e.run(b, "task", map[string]any{"action": "next", "spec_id": id})
			}
		})
	}
}
