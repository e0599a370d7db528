package mcptool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/specd/specd/core"
)

// BenchmarkBudgetStepSmall isolates the budget step on a small answer:
// "encode" is what the answer path did before it (build the envelope,
// encode it once), "fit" is fitAnswer (build, encode once, check the size).
func BenchmarkBudgetStepSmall(b *testing.B) {
	tool := testTool(func(context.Context, *Request) Result { return OK(nil) })
	reg := &Registry{}
	reg.Add(tool)
	a, _ := tool.Action("do-it")
	data := map[string]any{"status": "alive", "version": "test", "uptime_seconds": 12.5}
	newCall := func() *core.Call { return core.NewCall("t", "do-it", nil, core.NewUUID) }
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
			if env := reg.fitAnswer(newCall(), tool, a, args, OK(data), func() bool { return true }); env.Encoded() == nil {
				b.Fatal("not encoded")
			}
		}
	})
}
