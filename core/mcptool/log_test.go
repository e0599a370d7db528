package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
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
