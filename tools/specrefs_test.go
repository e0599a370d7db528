package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

// TestIntOrStringParam: an IntOrString parameter takes an integer (held to
// the integer rules and bounds) or a string (held to the string caps), and
// nothing else; its schema type is ["integer","string"].
func TestIntOrStringParam(t *testing.T) {
	echo := func(ctx context.Context, r *mcptool.Request) mcptool.Result {
		return mcptool.OK(map[string]any{"ref": versionRef(r.Args, "ref")})
	}
	p := mcptool.Param{Name: "ref", Type: mcptool.IntOrString, Min: f64(1), MaxLength: 10}
	tool := testTool(echo, p)
	tests := []struct {
		name string
		arg  any
		code string
		want string
	}{
		{"an integer", float64(3), "", "3"},
		{"a Go int (CLI, tests)", 3, "", "3"},
		{"a string", "2026-01-02", "", "2026-01-02"},
		{"a fraction", 1.5, errcode.InvalidFormat, ""},
		{"below the minimum", float64(0), errcode.InvalidFormat, ""},
		{"a string over the cap", strings.Repeat("x", 11), errcode.PayloadTooLarge, ""},
		{"a boolean", true, errcode.InvalidFormat, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := dispatch(t, tool, map[string]any{"action": "do-it", "ref": tt.arg})
			if got := code(env); got != tt.code {
				t.Fatalf("code = %q, want %q: %v", got, tt.code, env)
			}
			if tt.code == "" {
				if got := env["data"].(map[string]any)["ref"]; got != tt.want {
					t.Errorf("ref = %v, want %s", got, tt.want)
				}
			}
		})
	}
	if got := fmt.Sprint(tool.InputSchema()["properties"].(map[string]any)["ref"].(map[string]any)["type"]); got != "[integer string]" {
		t.Errorf("schema type = %s", got)
	}
}
