package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
)

// benchResearchText is a fixed ~12 KB HTML source for the digest benchmarks.
var benchResearchText = func() string {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "<p>Paragraph %d: bbolt keeps one writer & many readers; a transaction sees a consistent snapshot. "+
			"Compaction needs the write lock, and cursors seek in O(log n) over the B+tree pages.</p>", i)
	}
	return b.String()
}()

// benchResearch dispatches research calls the way a transport does
// (Registry.Dispatch, then ToResult, which encodes the envelope) over a real
// store in a temporary directory.
func benchResearch(b *testing.B) func(args map[string]any) {
	d := testDeps()
	d.OverStore(storetest.Open(b))
	d.Research = &storeResearch{ResearchStore: d.Research}
	reg := New(d)
	tool, _ := reg.Tool("research")
	rt := d.Runtime
	rt.Logger = slog.New(slog.DiscardHandler)
	rt.Defaults()
	ctx := context.Background()
	return func(args map[string]any) {
		env := reg.Dispatch(ctx, tool, args, mcptool.Session{ID: "b"}, rt)
		if !env.Success {
			b.Fatal(env)
		}
		if res := mcptool.ToResult(env); res.IsError {
			b.Fatal(res)
		}
	}
}

// benchPayload is the decoded payload of the benchmark source (what a
// client sends).
func benchPayload(b *testing.B) map[string]any {
	p, _, err := research.CreateDigest(research.CreateInput{Text: benchResearchText, Query: "write lock snapshot", MaxSnippets: 10})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkResearchDigestCreate(b *testing.B) {
	call := benchResearch(b)
	args := map[string]any{"action": "digest-create", "text": benchResearchText, "query": "write lock snapshot", "max_snippets": 10.0}
	b.ReportAllocs()
	for b.Loop() {
		call(args)
	}
}

func BenchmarkResearchDigestPut(b *testing.B) {
	call := benchResearch(b)
	args := map[string]any{"action": "digest-put", "source_id": "bench", "payload": benchPayload(b)}
	b.ReportAllocs()
	for b.Loop() {
		call(args)
	}
}

func BenchmarkResearchDigestGet(b *testing.B) {
	call := benchResearch(b)
	p := benchPayload(b)
	call(map[string]any{"action": "digest-put", "source_id": "bench", "payload": p, "text": benchResearchText})
	args := map[string]any{"action": "digest-get", "source_id": "bench", "query_hash": p["query_hash"]}
	b.ReportAllocs()
	for b.Loop() {
		call(args)
	}
}
