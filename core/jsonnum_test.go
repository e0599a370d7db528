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

func TestTopLevelMember(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{`{"jsonrpc":"2.0","id":1e23,"method":"ping"}`, "1e23"},
		{` { "params" : {"id":5, "s":"}\"{"} , "id" : -0 } `, "-0"},
		{`{"params":{"id":5},"method":"x"}`, ""},
		{`{"id":1,"ID":2}`, "2"},
		{`{"\u0069d":"x"}`, `"x"`},
		{`{"a":[{"id":1}],"id":[1,{"b":"]"}]}`, `[1,{"b":"]"}]`},
		{`[{"id":1}]`, ""},
		{`{"id":`, ""},
		{`{"id" 1}`, ""},
		{``, ""},
		{`{"id":true}`, "true"},
		{"{\"id\":1\t,\r\n\"x\":null\n}", "1"},
		{`{"id":null,"x":1}`, "null"},
		{`{"id":1,}`, "1"},
		{`{"id":1 "x":2}`, "1"},
		{`{"id":}`, ""},
		{`{"id":,"x":1}`, ""},
		{`{"id":[1,{"a":2`, ""},
		{`{"id":"open`, ""},
		{`{"id":1`, ""},
		{`{"x":1} "id"`, ""},
		{`{1:2}`, ""},
		{`{"id"`, ""},
		{`  `, ""},
	} {
		start, end, ok := TopLevelMember([]byte(tc.msg), "id")
		got := ""
		if ok {
			got = tc.msg[start:end]
		}
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: id %q (%v), want %q", tc.msg, got, ok, tc.want)
		}
	}
}

// BenchmarkTopLevelMember measures the id lookup every incoming message
// gets (core/mcptool's request id surrogates): a typical call and a 5 MB
// research text.
func BenchmarkTopLevelMember(b *testing.B) {
	for _, bc := range []struct{ name, msg string }{
		{"call", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"task","arguments":{"action":"complete","spec_id":"auth-2026","task_id":"task-1-2","actual_hours":1.5,"note":"done"}}}`},
		{"5MB-text", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research","arguments":{"action":"digest-create","text":"` +
			strings.Repeat(`lorem ipsum 12345 \"quoted\" 1e309 `, 5<<20/34) + `"}}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			msg := []byte(bc.msg)
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if _, _, ok := TopLevelMember(msg, "id"); !ok {
					b.Fatal("no id")
				}
			}
		})
	}
}
