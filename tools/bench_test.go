package tools

import (
	"context"
	"testing"

	"github.com/specd/specd/core/mcptool"
)

// BenchmarkDispatchValidate measures one call through the shared validator
// and dispatcher up to the envelope (no transport).
func BenchmarkDispatchValidate(b *testing.B) {
	d := testDeps()
	reg := New(d)
	tool, _ := reg.Tool("server")
	args := map[string]any{"action": "schema", "tool_name": "health"}
	rt := d.Runtime
	rt.Defaults()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if env := reg.Dispatch(ctx, tool, args, mcptool.Session{ID: "b"}, rt); !env.Success {
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
		if _, _, err := mcptool.Validate(tool, args); err != nil {
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
	rt.Defaults()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := mcptool.ToResult(reg.Dispatch(ctx, tool, args, mcptool.Session{ID: "b"}, rt)); res.IsError {
			b.Fatal(res)
		}
	}
}
