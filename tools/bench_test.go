package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/specd/specd/core"
)

// BenchmarkDispatchValidate measures one call through the shared validator
// and dispatcher up to the envelope (no transport).
func BenchmarkDispatchValidate(b *testing.B) {
	d := testDeps()
	reg := New(d)
	tool, _ := reg.Tool("server")
	args := map[string]any{"action": "schema", "tool_name": "health"}
	rt := d.Runtime
	rt.defaults()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if env := reg.Dispatch(ctx, tool, args, Session{ID: "b"}, rt); !env.Success {
			b.Fatal(env)
		}
	}
}

// BenchmarkValidateOnly isolates the argument validator.
func BenchmarkValidateOnly(b *testing.B) {
	reg := New(testDeps())
	tool, _ := reg.Tool("server")
	args := map[string]any{"action": "tools", "limit": 10.0, "cursor": "eyJ2IjoxLCJrIjoiYSIsImYiOiIwMDAwMDAwMCJ9"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := validate(tool, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnswerPathSmall measures a small answer from dispatch to the
// transport result (Dispatch, then ToResult): the token-budget step encodes
// the envelope once to measure it and ToResult sends those same bytes, so
// the step costs a size check, not a second encoding.
func BenchmarkAnswerPathSmall(b *testing.B) {
	d := testDeps()
	reg := New(d)
	tool, _ := reg.Tool("health")
	args := map[string]any{"action": "liveness"}
	rt := d.Runtime
	rt.defaults()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := ToResult(reg.Dispatch(ctx, tool, args, Session{ID: "b"}, rt)); res.IsError {
			b.Fatal(res)
		}
	}
}

// BenchmarkBudgetStepSmall isolates the budget step on a small answer:
// "encode" is what the answer path did before it (build the envelope,
// encode it once), "fit" is fitAnswer (build, encode once, check the size).
func BenchmarkBudgetStepSmall(b *testing.B) {
	reg := New(testDeps())
	tool, _ := reg.Tool("health")
	a, _ := tool.action("liveness")
	data := map[string]any{"status": "alive", "version": "test", "uptime_seconds": 12.5}
	newCall := func() *core.Call { return core.NewCall("health", "liveness", nil, core.NewUUID) }
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(newCall().Success(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
	args := Args{}
	b.Run("fit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if env := reg.fitAnswer(newCall(), tool, a, args, OK(data)); env.Encoded() == nil {
				b.Fatal("not encoded")
			}
		}
	})
}
