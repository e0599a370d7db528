package mcptool

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// trickyText holds every kind of character encoding/json escapes in a
// string (quotes, backslashes, control characters, the HTML characters,
// U+2028/U+2029) and some it does not (non-ASCII letters, an emoji).
const trickyText = "a \"quoted\" \\path\\ <b>&amp;</b>\t\n\r\b\f\x01\x1f\x7f é → 😀 \u2028\u2029 end"

// echoServer is an MCP server with one tool, echo, whose action say
// answers its text argument (with a warning naming it) and whose action
// refuse fails with it; note=true makes the call send a log notification
// first, so that mcp-go answers it as an SSE stream. The clock and ids are
// fixed, so an answer's bytes depend on the call alone.
func echoServer(t *testing.T) *server.MCPServer {
	t.Helper()
	notify := func(ctx context.Context, r *Request) {
		if r.Args.Bool("note") {
			_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/message",
				map[string]any{"level": "info", "data": r.Args.String("text")})
		}
	}
	tool := &Tool{
		Name: "echo", Description: "Use this when testing answers on the wire.",
		Params: []Param{{Name: "text", Type: String}, {Name: "note", Type: Boolean}},
		Actions: []Action{
			{Name: "say", Summary: "answers text", Optional: []string{"text", "note"}, SideEffects: EffectRead, Latency: LatencyFast,
				Handler: func(ctx context.Context, r *Request) Result {
					notify(ctx, r)
					return OK(map[string]any{"text": r.Args.String("text"), "n": 1.5},
						core.WithWarning("ECHOED", core.SeverityInfo, r.Args.String("text"), nil))
				}},
			{Name: "refuse", Summary: "fails with text", Optional: []string{"text", "note"}, SideEffects: EffectRead, Latency: LatencyFast,
				Handler: func(ctx context.Context, r *Request) Result {
					notify(ctx, r)
					return Fail(core.NewError(errcode.NotFound, r.Args.String("text"), map[string]any{"given": r.Args.String("text")}))
				}},
		},
	}
	reg := &Registry{}
	reg.Add(tool)
	srv := server.NewMCPServer("t", "1", server.WithToolCapabilities(false), server.WithLogging())
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	reg.Install(srv, Runtime{Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return at }, NewID: func() string { return "req-1" }, ProcessSession: "proc-1"})
	return srv
}

// fixedSessions gives every session the same id, so that two servers'
// answers can be compared byte for byte.
type fixedSessions struct{}

func (fixedSessions) Generate() string               { return "mcp-session-fixed" }
func (fixedSessions) Validate(string) (bool, error)  { return false, nil }
func (fixedSessions) Terminate(string) (bool, error) { return false, nil }
func (fixedSessions) ResolveSessionIdManager(*http.Request) server.SessionIdManager {
	return fixedSessions{}
}

// post sends body to h as a client in session sid (none: initialize) with
// protocol version proto, and returns the response. A tools/call of
// protocol 2026-07-28 carries the Mcp-Method and Mcp-Name headers it needs.
func post(t *testing.T, h http.Handler, sid, proto, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	if proto != "" {
		r.Header.Set("Mcp-Protocol-Version", proto)
	}
	if proto == mcp.ProtocolVersion20260728 {
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "echo")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestHTTPAnswerBytes: a tool answer served through HTTPInput, which
// writes the envelope into the response itself (answerWriter), is byte for
// byte the answer mcp-go writes on its own (its encoding/json encoding of
// ToResult), for success and failure envelopes holding every character
// JSON escapes, as a JSON body and as an SSE event after a notification,
// on both protocol eras; with a numeric id mcp-go would not echo, only the
// id differs (it comes back as sent).
func TestHTTPAnswerBytes(t *testing.T) {
	srv := echoServer(t)
	opts := []server.StreamableHTTPOption{server.WithEndpointPath("/mcp"), server.WithSessionIdManagerResolver(fixedSessions{})}
	bare := server.NewStreamableHTTPServer(srv, opts...)
	wrapped := HTTPInput(server.NewStreamableHTTPServer(srv, opts...), core.MaxMessageBytes)
	text, _ := json.Marshal(trickyText)
	legacy := mcp.ProtocolVersion20251125
	for _, h := range []http.Handler{bare, wrapped} {
		init := post(t, h, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+legacy+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		if sid := init.Header().Get("Mcp-Session-Id"); sid != "mcp-session-fixed" {
			t.Fatalf("initialize: session %q, %d %s", sid, init.Code, init.Body)
		}
		post(t, h, "mcp-session-fixed", legacy, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	modernMeta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.ProtocolVersion20260728 + `","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, era := range []string{"legacy", "modern"} {
		for _, action := range []string{"say", "refuse"} {
			for _, note := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/note=%v", era, action, note), func(t *testing.T) {
					sid, proto, meta := "mcp-session-fixed", legacy, ""
					if era == "modern" {
						sid, proto, meta = "", mcp.ProtocolVersion20260728, modernMeta
					}
					call := func(id string) string {
						return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"action":%q,"text":%s,"note":%v}%s}}`, id, action, text, note, meta)
					}
					want := post(t, bare, sid, proto, call("7"))
					got := post(t, wrapped, sid, proto, call("7"))
					if want.Code != got.Code || want.Header().Get("Content-Type") != got.Header().Get("Content-Type") || answer(t, want) != answer(t, got) {
						t.Fatalf("through HTTPInput:\n%d %s %s\nmcp-go alone:\n%d %s %s", got.Code, got.Header().Get("Content-Type"), got.Body, want.Code, want.Header().Get("Content-Type"), want.Body)
					}
					if strings.Contains(got.Body.String(), "specd:answer") || !strings.Contains(answer(t, got), `\u003cb\u003e`) {
						t.Fatalf("answer without the envelope: %s", got.Body)
					}
					if note && got.Header().Get("Content-Type") != "text/event-stream" {
						t.Fatalf("note=%v: %s", note, got.Body)
					}
					odd := post(t, wrapped, sid, proto, call("7.0"))
					if w := strings.Replace(answer(t, want), `"id":7,`, `"id":7.0,`, 1); answer(t, odd) != w {
						t.Fatalf("id 7.0 through HTTPInput:\n%s\nwant:\n%s", odd.Body, w)
					}
				})
			}
		}
	}
}

// answer is the answer in w: its body, or for an SSE stream its last
// event; the events before it must be the echo tool's notification, as
// mcp-go writes it (it may deliver it or not: that is a race in mcp-go).
func answer(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if w.Header().Get("Content-Type") != "text/event-stream" {
		return w.Body.String()
	}
	events := strings.SplitAfter(w.Body.String(), "\n\n")
	if events[len(events)-1] == "" {
		events = events[:len(events)-1]
	}
	note, _ := json.Marshal(mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/message",
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"level": "info", "data": trickyText}}}})
	for _, e := range events[:len(events)-1] {
		if e != "event: message\ndata: "+string(note)+"\n\n" {
			t.Fatalf("event %q is not the notification %s", e, note)
		}
	}
	return events[len(events)-1]
}

// TestHTTPAnswerHeld: over HTTPInput, mcp-go is handed a placeholder
// result (the writer adds the envelope), so it does not encode the
// envelope's bytes again; without HTTPInput it gets the whole envelope.
func TestHTTPAnswerHeld(t *testing.T) {
	var seen []*mcp.CallToolResult
	hooks := &server.Hooks{}
	hooks.AddAfterCallTool(func(_ context.Context, _ any, _ *mcp.CallToolRequest, res any) {
		if r, ok := res.(*mcp.CallToolResult); ok {
			seen = append(seen, r)
		}
	})
	srv := echoServer(t)
	server.WithHooks(hooks)(srv)
	opts := []server.StreamableHTTPOption{server.WithEndpointPath("/mcp"), server.WithSessionIdManagerResolver(fixedSessions{})}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.ProtocolVersion20260728 + `","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"action":"say","text":"hi"},` + meta + `}}`
	post(t, server.NewStreamableHTTPServer(srv, opts...), "", mcp.ProtocolVersion20260728, body)
	post(t, HTTPInput(server.NewStreamableHTTPServer(srv, opts...), core.MaxMessageBytes), "", mcp.ProtocolVersion20260728, body)
	if len(seen) != 2 {
		t.Fatalf("%d tool results seen, want 2", len(seen))
	}
	if _, raw := seen[0].StructuredContent.(json.RawMessage); !raw || !strings.Contains(seen[0].Content[0].(mcp.TextContent).Text, `"hi"`) {
		t.Fatalf("without HTTPInput mcp-go got %#v, want the envelope", seen[0])
	}
	if seen[1].StructuredContent != answerDataToken || seen[1].Content[0].(mcp.TextContent).Text != answerTextToken {
		t.Fatalf("through HTTPInput mcp-go got %#v, want the placeholders", seen[1])
	}
}

// TestAnswerWriterPassesOtherWrites: a write without the placeholders (a
// notification's SSE event) goes out as it is, also after an answer is
// held, and the answer is spliced into one write only.
func TestAnswerWriterPassesOtherWrites(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &answerWriter{ResponseWriter: rec}
	if res := heldResult(withAnswerWriter(context.Background(), w), core.Envelope{Success: true, Data: map[string]any{"x": "<y>"}}); res == nil {
		t.Fatal("no placeholder result")
	}
	if res := heldResult(withAnswerWriter(context.Background(), w), core.Envelope{Success: true}); res != nil {
		t.Fatal("a second answer was held by the same writer")
	}
	note := []byte("event: message\ndata: {\"method\":\"notifications/message\"}\n\n")
	placeholders := append(append(append([]byte("{"), answerTextWire...), ':'), append(answerDataWire, '}')...)
	for _, p := range [][]byte{note, placeholders, placeholders} {
		if n, err := w.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	env, _ := json.Marshal(core.Envelope{Success: true, Data: map[string]any{"x": "<y>"}})
	text, _ := json.Marshal(string(env))
	want := string(note) + "{" + string(text) + ":" + string(env) + "}" + string(placeholders)
	if rec.Body.String() != want {
		t.Fatalf("written:\n%s\nwant:\n%s", rec.Body, want)
	}
}

// TestHTTPAnswerEveryIDType: over HTTPInput the answer to a tools/call is
// mcp-go's own answer for request ids of every JSON type a client may
// send (strings, one holding a placeholder of another nonce, negative,
// fractional, exponent and out-of-range numbers), as a JSON body and as
// an SSE stream after a notification; no placeholder ever reaches the
// client. Ids mcp-go echoes as it parsed them come back as sent.
func TestHTTPAnswerEveryIDType(t *testing.T) {
	srv := echoServer(t)
	opts := []server.StreamableHTTPOption{server.WithEndpointPath("/mcp"), server.WithSessionIdManagerResolver(fixedSessions{})}
	bare := server.NewStreamableHTTPServer(srv, opts...)
	wrapped := HTTPInput(server.NewStreamableHTTPServer(srv, opts...), core.MaxMessageBytes)
	legacy := mcp.ProtocolVersion20251125
	text, _ := json.Marshal(trickyText)
	for _, h := range []http.Handler{bare, wrapped} {
		post(t, h, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+legacy+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		post(t, h, "mcp-session-fixed", legacy, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	ids := []string{`"abc"`, `""`, `"\u0000specd:answer:0000000000000000:text"`, `"7"`, `0`, `-3`, `2.5`, `1e3`, `-0`,
		`12345678901234567890`, `9007199254740993`, `1E400`}
	for _, id := range ids {
		for _, note := range []bool{false, true} {
			call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"action":"say","text":%s,"note":%v}}}`, id, text, note)
			got := post(t, wrapped, "mcp-session-fixed", legacy, call)
			body := got.Body.String()
			if strings.Contains(body, answerNonce) || !strings.Contains(body, `\u003cb\u003e`) || !strings.Contains(body, `"structuredContent":{`) {
				t.Fatalf("id %s note=%v: %s", id, note, body)
			}
			if !strings.Contains(body, `"id":`+id+`,`) {
				t.Fatalf("id %s note=%v: the id does not come back as sent: %s", id, note, body)
			}
			want := post(t, bare, "mcp-session-fixed", legacy, call)
			wantAnswer, gotAnswer := answer(t, want), answer(t, got)
			// the wrapped answer differs from mcp-go's only in the id it
			// echoes (1E400, which mcp-go alone cannot parse, aside)
			if id == `1E400` {
				continue
			}
			if i, j := strings.Index(wantAnswer, `"result":`), strings.Index(gotAnswer, `"result":`); i < 0 || j < 0 || wantAnswer[i:] != gotAnswer[j:] {
				t.Fatalf("id %s note=%v:\n%s\nmcp-go alone:\n%s", id, note, gotAnswer, wantAnswer)
			}
		}
	}
}
