package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/specd/specd/core"
)

// TestEveryCallLogsOneInfoLine: at the default level (info) a successful
// call and a failed one each write exactly one line with request_id, tool,
// action, session, ok, error_code and duration_ms.
func TestEveryCallLogsOneInfoLine(t *testing.T) {
	tool := testTool(func(ctx context.Context, r *Request) Result { return OK(map[string]any{}) })
	reg := &Registry{}
	reg.Add(tool)
	tests := []struct {
		name string
		args map[string]any
		ok   bool
		code string
	}{
		{"success", map[string]any{"action": "do-it"}, true, ""},
		{"failure", map[string]any{"action": "nope"}, false, "UNKNOWN_ACTION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			rt := Runtime{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
			env := reg.Dispatch(context.Background(), tool, tt.args, Session{ID: "sess-1"}, rt)
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) != 1 {
				t.Fatalf("want one log line, got %d: %q", len(lines), buf.String())
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
				t.Fatal(err)
			}
			if m["level"] != "INFO" || m["request_id"] != env.Meta.RequestID || m["tool"] != "t" || m["action"] != tt.args["action"] ||
				m["session"] != "sess-1" || m["ok"] != tt.ok || m["error_code"] != tt.code {
				t.Fatalf("log line %s", lines[0])
			}
			if _, ok := m["duration_ms"].(float64); !ok {
				t.Fatalf("no duration_ms: %s", lines[0])
			}
		})
	}
}

// TestCallLogWritesWhatWithWould: a call's lines are byte for byte what a
// logger derived with slog.Logger.With would write (same keys, same order,
// both handlers), and nothing below the level.
func TestCallLogWritesWhatWithWould(t *testing.T) {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	handlers := map[string]func(*bytes.Buffer) slog.Handler{
		"json": func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: noTime})
		},
		"text": func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: noTime})
		},
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			with := slog.New(h(&want)).With("request_id", "r-1", "tool", "task", "action", "add", "session", "s \"1\"", "key_id", "k1")
			with.Info("call", "ok", false, "outcome", "VALIDATION_ERROR", "error_code", "VALIDATION_ERROR", "duration_ms", 1.25)
			with.Error("internal error", "err", errors.New("boom"))
			with.Debug("hidden")

			c := newCallLog(slog.New(h(&got)), "r-1", "task", "add", "s \"1\"")
			c.add(slog.String("key_id", "k1"))
			logOutcome(c, slog.LevelInfo, core.Envelope{Success: false, Data: map[string]any{"error_code": "VALIDATION_ERROR"}, Meta: core.Meta{Telemetry: core.Telemetry{DurationMS: 1.25}}})
			c.log(slog.LevelError, "internal error", slog.Any("err", errors.New("boom")))
			c.log(slog.LevelDebug, "hidden")
			if got.String() != want.String() {
				t.Fatalf("call log\n%s\nwant (With)\n%s", got.String(), want.String())
			}
		})
	}
}

// TestCallLogAttributes: every line of a call starts with the call's
// attributes and then has the line's own, in order, whether they fit the
// call log's spare room or not, and a line does not leave its attributes
// to the next.
func TestCallLogAttributes(t *testing.T) {
	var buf bytes.Buffer
	c := newCallLog(slog.New(slog.NewTextHandler(&buf, nil)), "r1", "tool", "act", "s1")
	c.add(slog.String("key_id", "k"))
	c.log(slog.LevelInfo, "two", slog.Int("a", 1), slog.Int("b", 2))
	own := make([]slog.Attr, 7)
	for i := range own {
		own[i] = slog.Int(string(rune('c'+i)), i)
	}
	c.log(slog.LevelInfo, "seven", own...)
	c.log(slog.LevelInfo, "none")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	call := "request_id=r1 tool=tool action=act session=s1 key_id=k"
	want := []string{"msg=two " + call + " a=1 b=2", "msg=seven " + call + " c=0 d=1 e=2 f=3 g=4 h=5 i=6", "msg=none " + call}
	if len(lines) != len(want) {
		t.Fatalf("lines %q", lines)
	}
	for i, w := range want {
		if _, rest, _ := strings.Cut(lines[i], "level=INFO "); rest != w {
			t.Errorf("line %d: %q, want %q", i, rest, w)
		}
	}
}
