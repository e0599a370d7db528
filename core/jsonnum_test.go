package core

import (
	"strings"
	"testing"
)

// BenchmarkMarkUnrepresentableNumbers measures the pass every incoming
// message gets: a typical call and a 5 MB research text.
func BenchmarkMarkUnrepresentableNumbers(b *testing.B) {
	for _, bc := range []struct{ name, msg string }{
		{"call", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"task","arguments":{"action":"complete","spec_id":"auth-2026","task_id":"task-1-2","actual_hours":1.5,"note":"done"}}}`},
		{"5MB-text", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research","arguments":{"action":"digest-create","text":"` +
			strings.Repeat(`lorem ipsum 12345 \"quoted\" 1e309 `, 5<<20/34) + `"}}}`},
		{"5MB-plain", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research","arguments":{"action":"digest-create","text":"` +
			strings.Repeat(`lorem ipsum dolor sit amet 12345 `, 5<<20/33) + `"}}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			msg := []byte(bc.msg)
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if out := MarkUnrepresentableNumbers(msg); len(out) != len(msg) {
					b.Fatal("changed a valid message")
				}
			}
		})
	}
}
