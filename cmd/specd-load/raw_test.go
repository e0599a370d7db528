package main

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Answers as specd serve --transport http sends them (tools/call task add,
// request id 4), shortened where the driver reads nothing.
const (
	addOK      = `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"success\":true,\"data\":{\"task_id\":\"task-1-1\"}}"}],"structuredContent":{"success":true,"data":{"spec_id":"a-2026-11-27-001","version":3,"task_id":"task-1-1","parent":"phase-1","type":"task","title":"load task 0","position":0,"task":{"task_id":"task-1-1","type":"task"}},"error":null,"meta":{"version":"response-v2"}}}}`
	addRefused = `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{}"}],"isError":true,"structuredContent":{"success":false,"data":{"error_code":"SPEC_NOT_FOUND","remediation":"Use a spec_id from spec(action=\"list\")."},"error":"No spec \"nope\".","meta":{"version":"response-v2"}}}}`
	addNoID    = `{"jsonrpc":"2.0","id":4,"result":{"structuredContent":{"success":true,"data":{"spec_id":"a"},"error":null}}}`
	rpcFailed  = `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"tool 'nosuch' not found: tool not found"}}`
	progress   = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	serverReq  = `{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{}}`
)

// sse is an event stream of the given events, each "event: message" and
// one data line, as mcp-go's server writes them.
func sse(msgs ...string) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("event: message\ndata: " + m + "\n\n")
	}
	return b.String()
}

func TestReadReplyTaskAdd(t *testing.T) {
	const json, stream = "application/json", "text/event-stream"
	split := strings.Index(addOK, `"result"`) // between two tokens
	for _, tc := range []struct {
		name, contentType, body string
		wantID                  string
		wantErr                 string // a part of the error text
		wantRPC                 int    // the JSON-RPC error code, when one
	}{
		{name: "json", contentType: json, body: addOK + "\n", wantID: "task-1-1"},
		{name: "json with charset", contentType: "application/json; charset=utf-8", body: addOK, wantID: "task-1-1"},
		{name: "sse", contentType: stream, body: sse(addOK), wantID: "task-1-1"},
		{name: "sse after a notification and a server request", contentType: stream, body: sse(progress, serverReq, addOK), wantID: "task-1-1"},
		{name: "sse crlf, split data, comment, id, no event type", contentType: stream,
			body: ": hello\r\nid: 7\r\n" + "data: " + addOK[:split] + "\r\ndata:" + addOK[split:] + "\r\n\r\n", wantID: "task-1-1"},
		{name: "sse cr line ends", contentType: stream, body: "event: message\rdata: " + addOK + "\r\r", wantID: "task-1-1"},
		{name: "sse other event types skipped", contentType: stream, body: "event: ping\ndata: " + rpcFailed + "\n\n" + sse(addOK), wantID: "task-1-1"},
		{name: "sse without the response", contentType: stream, body: sse(progress), wantErr: "event stream ended without the response to request 4"},
		{name: "sse response event cut off", contentType: stream, body: "event: message\ndata: " + addOK + "\n", wantErr: "event stream ended without the response"},
		{name: "envelope failure", contentType: json, body: addRefused, wantErr: `task add: No spec "nope".`},
		{name: "envelope failure in sse", contentType: stream, body: sse(progress, addRefused), wantErr: `task add: No spec "nope".`},
		{name: "success without a task id", contentType: json, body: addNoID, wantErr: "task add answered no task_id"},
		{name: "json-rpc error", contentType: json, body: rpcFailed, wantErr: "JSON-RPC error -32602: tool 'nosuch' not found", wantRPC: -32602},
		{name: "json-rpc error in sse", contentType: stream, body: sse(rpcFailed), wantErr: "JSON-RPC error -32602", wantRPC: -32602},
		{name: "another request's response", contentType: json, body: strings.Replace(addOK, `"id":4`, `"id":3`, 1), wantErr: "not the response to request 4"},
		{name: "a notification instead", contentType: json, body: progress, wantErr: "not the response to request 4"},
		{name: "not json", contentType: json, body: `{"jsonrpc":"2.0","id":4,`, wantErr: "failed to decode response"},
		{name: "not json in sse", contentType: stream, body: sse(`{"id":4`), wantErr: "failed to decode response"},
		{name: "other content type", contentType: "text/html", body: addOK, wantErr: `unexpected content type: "text/html"`},
		{name: "no content type", contentType: "", body: addOK, wantErr: `unexpected content type: ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res addAnswer
			err := readReply(tc.contentType, []byte(tc.body), 4, &res)
			var rpc *rpcError
			if errors.As(err, &rpc) != (tc.wantRPC != 0) || (rpc != nil && rpc.Code != tc.wantRPC) {
				t.Fatalf("JSON-RPC error %v, want code %d", err, tc.wantRPC)
			}
			id := ""
			if err == nil {
				id, err = res.id("task", "add")
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one with %q", err, tc.wantErr)
			}
			if id != tc.wantID {
				t.Fatalf("task id %q, want %q", id, tc.wantID)
			}
		})
	}
}

func TestReadReplyInitialize(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"specd","version":"x"}}}`
	for _, ct := range []string{"application/json", "text/event-stream"} {
		b := body
		if ct == "text/event-stream" {
			b = sse(body)
		}
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if err := readReply(ct, []byte(b), 1, jsonResult{&res}); err != nil || res.ProtocolVersion != rawProtocol {
			t.Fatalf("%s: %v, protocol %q", ct, err, res.ProtocolVersion)
		}
	}
}

func TestSSEMessages(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		want         []string
	}{
		{"two events", "event: message\ndata: a\n\nevent: message\ndata: b\n\n", []string{"a", "b"}},
		{"data lines join with LF", "data: a\ndata:  b\ndata\n\n", []string{"a\n b\n"}},
		{"crlf and cr", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []string{"a", "b", "c"}},
		{"typed events other than message dropped", "event: ping\ndata: a\n\nevent:\ndata: b\n\n", []string{"b"}},
		{"the type lasts one event", "event: ping\ndata: a\n\ndata: b\n\n", []string{"b"}},
		{"comments and other fields ignored", ": x\nid: 3\nretry: 10\ndata: a\n\n", []string{"a"}},
		{"an event without data not dispatched", "event: message\n\ndata: a\n\n", []string{"a"}},
		{"an empty data line is data", "data:\n\n", []string{""}},
		{"blank lines alone", "\n\n\n", nil},
		{"cut off event dropped", "data: a\n\ndata: b\n", []string{"a"}},
		{"cut off line dropped", "data: a\n\ndata: b", []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for d := range sseMessages([]byte(tc.stream)) {
				got = append(got, string(d))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("events %q, want %q", got, tc.want)
			}
		})
	}
}

// The request bodies built into the reused buffer are the tools/call
// requests of the mcp-go driver's arguments (addArgs), with fresh ids,
// whatever the spec id holds.
func TestAddBody(t *testing.T) {
	c := &rawConn{nextID: 1}
	specs := []spec{{id: "a-2026-11-27-001", phase: "phase-1"}, {id: `odd "id" \ é`, phase: "phase-22"}}
	for k, n := range []int{0, 7, 12345, 3} {
		s := specs[k%2]
		c.addBody(addPrefix(s), n)
		var got map[string]any
		if err := json.Unmarshal(c.body, &got); err != nil {
			t.Fatalf("body %s: %v", c.body, err)
		}
		want := map[string]any{"jsonrpc": "2.0", "id": float64(2 + k), "method": "tools/call",
			"params": map[string]any{"name": "task", "arguments": addArgs(s, n)}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("body %s\ngot  %v\nwant %v", c.body, got, want)
		}
	}
}

func TestPickDriver(t *testing.T) {
	for _, tc := range []struct {
		asked, mode string
		stdio       bool
		want        string // "" when refused
	}{
		{"", "writes", false, "raw"},
		{"", "writes", true, "mcp-go"},
		{"", "mixed", false, "mcp-go"},
		{"", "abuse", false, "mcp-go"},
		{"raw", "writes", false, "raw"},
		{"mcp-go", "writes", false, "mcp-go"},
		{"mcp-go", "writes", true, "mcp-go"},
		{"mcp-go", "mixed", false, "mcp-go"},
		{"raw", "writes", true, ""},
		{"raw", "mixed", false, ""},
		{"fast", "writes", false, ""},
	} {
		got, err := pickDriver(tc.asked, tc.mode, tc.stdio)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("pickDriver(%q, %q, %v) = %q, %v; want %q", tc.asked, tc.mode, tc.stdio, got, err, tc.want)
		}
	}
}

// The raw read-back reads a real task list page as the mcp-go one does
// (addTaskIDs, nextCursor): every task id, the number of tasks, the next
// cursor, a refusal as an error.
func TestListAnswer(t *testing.T) {
	list := answerFile(t, "list.json")
	for _, tc := range []struct {
		name, contentType, body string
		wantIDs                 []string
		wantNext, wantErr       string
	}{
		{name: "last page", contentType: "application/json", body: list, wantIDs: []string{"task-1-1", "verify-1-1", "verify-1-2"}},
		{name: "a page with a cursor, in sse", contentType: "text/event-stream",
			body: sse(progress, strings.TrimSpace(strings.Replace(list, `"cursor":null`, `"cursor":"c2"`, 1))), wantIDs: []string{"task-1-1", "verify-1-1", "verify-1-2"}, wantNext: "c2"},
		{name: "refused", contentType: "application/json", body: answerFile(t, "add-refused.json"), wantErr: `task list: No spec "nope".`},
		{name: "cut short", contentType: "application/json", body: list[:len(list)/2], wantErr: "failed to decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var page listAnswer
			out := map[string]bool{}
			n, next := 0, ""
			err := readReply(tc.contentType, []byte(tc.body), 4, jsonResult{&page})
			if err == nil {
				n, next, err = page.read(out)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one with %q", err, tc.wantErr)
			}
			ids := slices.Sorted(maps.Keys(out))
			if n != len(tc.wantIDs) || next != tc.wantNext || !slices.Equal(ids, tc.wantIDs) {
				t.Fatalf("%d tasks %q, next %q; want %q, next %q", n, ids, next, tc.wantIDs, tc.wantNext)
			}
			// the mcp-go read-back reads the same page the same
			if tc.wantErr == "" {
				var msg struct {
					Result struct {
						StructuredContent map[string]any `json:"structuredContent"`
					} `json:"result"`
				}
				body := tc.body
				if tc.contentType == "text/event-stream" {
					body = strings.TrimSpace(strings.Replace(list, `"cursor":null`, `"cursor":"c2"`, 1))
				}
				if err := json.Unmarshal([]byte(body), &msg); err != nil {
					t.Fatal(err)
				}
				ref := map[string]bool{}
				if addTaskIDs(ref, msg.Result.StructuredContent) != n || nextCursor(msg.Result.StructuredContent) != next || !maps.Equal(ref, out) {
					t.Fatalf("the mcp-go read-back reads %v, next %q", ref, nextCursor(msg.Result.StructuredContent))
				}
			}
		})
	}
}
