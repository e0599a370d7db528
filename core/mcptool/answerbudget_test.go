package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// TestAnswerBudgetStep covers the budget step's outcomes on a tool declared
// here: a small answer goes out as encoded once; an over-budget read with
// no Degrader is PAYLOAD_TOO_LARGE with a smaller limit to call; an
// over-budget write stays a success cut to reference_only; a list answer
// keeps a prefix with a cursor.
func TestAnswerBudgetStep(t *testing.T) {
	const budget = 1000
	big := strings.Repeat("z", 6000)
	rows := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"id": i, "text": strings.Repeat("r", 300)}
		}
		return out
	}
	limit := Param{Name: "limit", Type: Integer, Description: "page size"}
	tool := &Tool{Name: "t", Description: "Use this when testing.", Params: []Param{limit}, Actions: []Action{
		{Name: "small", Summary: "s", SideEffects: EffectRead, Latency: LatencyFast,
			Handler: func(context.Context, *Request) Result { return OK(map[string]any{"ok": true}) }},
		{Name: "read-big", Summary: "s", Optional: []string{"limit"}, SideEffects: EffectRead, Latency: LatencyFast,
			Handler: func(_ context.Context, r *Request) Result {
				return OK(map[string]any{"rows": rows(r.Args.IntOr("limit", 40))}, core.WithPagination("", r.Args.IntOr("limit", 40), nil))
			}},
		{Name: "write-big", Summary: "s", SideEffects: EffectWrite, Latency: LatencyFast,
			Handler: func(context.Context, *Request) Result {
				return OK(map[string]any{"spec_id": "s-1", "version": 7, "document": big})
			}},
		{Name: "list", Summary: "s", Optional: []string{"limit"}, SideEffects: EffectRead, Latency: LatencyFast,
			Handler: func(context.Context, *Request) Result {
				items := rows(40)
				data := map[string]any{"rows": items, "count": len(items)}
				return Result{Data: data, Degrade: &ListAnswer[map[string]any]{Data: data, Key: "rows", Items: items, CountKey: "count", PageSize: 40,
					ID:   func(i int) string { return "item:r" + strings.Repeat("1", i%3) },
					Next: func(kept int) string { return "after-" + strings.Repeat("x", kept%2+1) }}}
			}},
	}}
	reg := &Registry{budget: budget}
	reg.Add(tool)
	run := func(action string, args map[string]any) (core.Envelope, []byte) {
		t.Helper()
		raw := map[string]any{"action": action}
		for k, v := range args {
			raw[k] = v
		}
		env := reg.Dispatch(context.Background(), tool, raw, Session{ID: "s"}, Runtime{})
		res := ToResult(env)
		b := []byte(res.Content[0].(mcp.TextContent).Text)
		if len(b) > budget*4 {
			t.Fatalf("%s: %d bytes over %d tokens", action, len(b), budget)
		}
		return env, b
	}

	env, b := run("small", nil)
	fresh, _ := json.Marshal(env)
	if env.Encoded() == nil || !bytes.Equal(b, fresh) || !bytes.Equal(b, env.Encoded()) {
		t.Fatalf("small answer not sent as encoded once: %s vs %s", b, fresh)
	}

	env, _ = run("read-big", nil)
	d := env.Data.(map[string]any)
	if env.Success || d["error_code"] != errcode.PayloadTooLarge {
		t.Fatalf("read over budget: %v", d)
	}
	rec := d["recovery"].(map[string]any)
	next := rec["suggested_args"].(map[string]any)
	if rec["suggested_tool"] != "t" || next["action"] != "read-big" || next["limit"].(int) >= 40 {
		t.Fatalf("recovery: %v", rec)
	}
	if again, _ := run("read-big", map[string]any{"limit": float64(next["limit"].(int))}); !again.Success {
		t.Fatalf("the recovery call (limit %v) still fails: %v", next["limit"], again.Data)
	}

	env, _ = run("write-big", nil)
	d = env.Data.(map[string]any)
	if !env.Success || env.Meta.ContentFidelity != core.FidelityReferenceOnly || d["spec_id"] != "s-1" || d["document"] != nil ||
		len(env.Meta.DroppedContentIDs) != 1 || env.Meta.DroppedContentIDs[0] != "item:document" {
		t.Fatalf("write over budget: %+v %v", env.Meta, d)
	}

	env, _ = run("list", nil)
	d = env.Data.(map[string]any)
	kept := len(d["rows"].([]map[string]any))
	if !env.Success || env.Meta.ContentFidelity != core.FidelityPartial || kept == 0 || kept >= 40 || d["count"] != kept ||
		env.Meta.Pagination == nil || env.Meta.Pagination.Cursor == nil || len(env.Meta.WarningDetails) != 1 {
		t.Fatalf("list over budget: kept %d, meta %+v", kept, env.Meta)
	}
	ctx := env.Meta.WarningDetails[0].Context
	if env.Meta.WarningDetails[0].Code != core.WarnContentTruncated || ctx["dropped_count"] != 40-kept || ctx["total_count"] != 40 || ctx["reason"] != "token_budget" {
		t.Fatalf("warning: %+v", env.Meta.WarningDetails[0])
	}
}

// TestListFitHoldsWhileTheCallRuns: the budget step measures each degraded
// form of an answer, and the answer sent is encoded again afterwards with
// the call's duration_ms at that moment; a longer number then (9.99 →
// 10.01 ms) must not push a page that fit over the budget.
// TestBudgetOtherLists failed that way under -race -parallel 4: page 3 of
// task list answered PAYLOAD_TOO_LARGE where the page should have shrunk.
// Here the clock reads 1.11 ms while the forms are measured and 11111111.11
// ms (seven characters longer) once they are; across 80 paddings of the
// answer some forms fit within those seven bytes.
func TestListFitHoldsWhileTheCallRuns(t *testing.T) {
	const budget = 1000
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for pad := 0; pad < 80; pad++ {
		items := make([]map[string]any, 300)
		for i := range items {
			items[i] = map[string]any{"id": i, "text": "rr"}
		}
		var started, measured atomic.Bool
		clock := func() time.Time {
			switch {
			case !started.Swap(true):
				return t0
			case measured.Load():
				return t0.Add(11111111110 * time.Microsecond)
			}
			return t0.Add(1110 * time.Microsecond)
		}
		tool := &Tool{Name: "t", Description: "Use this when testing.", Actions: []Action{
			{Name: "list", Summary: "s", SideEffects: EffectRead, Latency: LatencyFast,
				Handler: func(context.Context, *Request) Result {
					data := map[string]any{"rows": items, "pad": strings.Repeat("p", pad)}
					list := &ListAnswer[map[string]any]{Data: data, Key: "rows", Items: items, PageSize: 300,
						ID:   func(i int) string { return "item:r" },
						Next: func(kept int) string { return "after" }}
					return Result{Data: data, Degrade: DegradeFunc(func(f Fit) (any, []core.MetaOption, bool, error) {
						defer measured.Store(true)
						return list.Degrade(f)
					})}
				}},
		}}
		reg := &Registry{budget: budget}
		reg.Add(tool)
		env := reg.Dispatch(context.Background(), tool, map[string]any{"action": "list"}, Session{ID: "s"}, Runtime{Now: clock})
		b := []byte(ToResult(env).Content[0].(mcp.TextContent).Text)
		if !env.Success || len(b) > budget*4 {
			t.Fatalf("pad %d: %d bytes, success %v: %.300s", pad, len(b), env.Success, b)
		}
	}
}
