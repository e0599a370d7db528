package mcptool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// TestValidatorNumbersAndKeys feeds JSON text, decoded the way the transports
// decode it (after core.MarkUnrepresentableNumbers), and checks that numbers
// an integer parameter cannot hold, literals float64 cannot hold and objects
// with too many keys are refused naming the field and the value received.
func TestValidatorNumbersAndKeys(t *testing.T) {
	echo := func(ctx context.Context, r *Request) Result {
		n, _ := r.Args.Int("version")
		return OK(map[string]any{"version": n})
	}
	tool := testTool(echo,
		Param{Name: "version", Type: Integer, Min: f64(1)},
		Param{Name: "position", Type: Integer},
		Param{Name: "limit", Type: Integer, Min: f64(1), Max: f64(100)},
		Param{Name: "ratio", Type: Number},
		Param{Name: "name", Type: String},
		Param{Name: "obj", Type: Object},
		Param{Name: "list", Type: Array},
	)
	keys := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name     string
		json     string
		code     string
		field    string
		received string // JSON of details.received
	}{
		{"largest int64 is refused, it rounds to 2^63", `{"version":9223372036854775807}`, errcode.InvalidFormat, "version", "9223372036854775808"},
		{"1e30", `{"version":1e30}`, errcode.InvalidFormat, "version", "1e+30"},
		{"2^63 position", `{"position":9223372036854775808}`, errcode.InvalidFormat, "position", "9223372036854775808"},
		{"below int64", `{"position":-1e19}`, errcode.InvalidFormat, "position", "-10000000000000000000"},
		{"fraction", `{"position":1.5}`, errcode.InvalidFormat, "position", "1.5"},
		{"smallest int64 is fine", `{"position":-9223372036854775808}`, "", "", ""},
		{"big but in range", `{"version":9007199254740992}`, "", "", ""},
		{"1e309 limit", `{"limit":1e309}`, errcode.InvalidFormat, "limit", `"1e309"`},
		{"-1e309 number", `{"ratio":-1e309}`, errcode.InvalidFormat, "ratio", `"-1e309"`},
		{"1e309 in a string parameter", `{"name":1e309}`, errcode.InvalidFormat, "name", `"1e309"`},
		{"1e309 nested", `{"obj":{"a":[1,2E400]}}`, errcode.InvalidFormat, "obj.a[1]", `"2E400"`},
		{"1e309 as action", `{"action":1e309}`, errcode.InvalidFormat, "action", `"1e309"`},
		{"underflow is zero, as JSON has it", `{"ratio":1e-400}`, "", "", ""},
		{"1000 keys", `{"obj":` + keys(1000) + `}`, "", "", ""},
		{"1001 keys", `{"obj":` + keys(1001) + `}`, errcode.PayloadTooLarge, "obj", "1001"},
		{"1001 keys nested", `{"list":[` + keys(1001) + `]}`, errcode.PayloadTooLarge, "list[0]", "1001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal(core.MarkUnrepresentableNumbers([]byte(tt.json)), &args); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if _, ok := args["action"]; !ok {
				args["action"] = "do-it"
			}
			env := dispatch(t, tool, args)
			if got := code(env); got != tt.code {
				t.Fatalf("code = %q, want %q: %v", got, tt.code, env)
			}
			if tt.code == "" {
				return
			}
			reg := &Registry{}
			reg.Add(tool)
			raw, _ := json.Marshal(reg.Dispatch(context.Background(), tool, args, Session{ID: "s"}, Runtime{}).Data.(map[string]any)["details"])
			if !strings.Contains(string(raw), `"field":"`+tt.field+`"`) || !strings.Contains(string(raw), `"received":`+tt.received+`}`) {
				t.Fatalf("details %s, want field %q received %s", raw, tt.field, tt.received)
			}
		})
	}
}

// TestArgsIntNeverWraps: a value int cannot hold reads as absent, not wrapped.
func TestArgsIntNeverWraps(t *testing.T) {
	for _, f := range []float64{1e30, -1e30, 1 << 63, 2.5} {
		if n, ok := (Args{"n": f}).Int("n"); ok {
			t.Errorf("Int(%v) = %d, true", f, n)
		}
	}
	if n, ok := (Args{"n": float64(-1 << 63)}).Int("n"); !ok || n != -1<<63 {
		t.Errorf("Int(-2^63) = %d, %v", n, ok)
	}
}

func TestMarkUnrepresentableNumbersKeepsValidMessages(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1e308,"b":-0.5e-10,"c":"1e309","d":"\"1e999\\"}}}`,
		`{"s":"\u00001e309 \\\" 1e999"}`,
		`not json 1e309`[:8],
		``,
	} {
		if got := core.MarkUnrepresentableNumbers([]byte(msg)); string(got) != msg {
			t.Errorf("changed %s into %s", msg, got)
		}
	}
	got := core.MarkUnrepresentableNumbers([]byte(`{"a":[1e309, "1e309", -1E+999],"b":2}`))
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	l := v["a"].([]any)
	if lit, ok := core.MarkedNumber(l[0].(string)); !ok || lit != "1e309" || l[1] != "1e309" {
		t.Fatalf("%s", got)
	}
	if lit, ok := core.MarkedNumber(l[2].(string)); !ok || lit != "-1E+999" || v["b"] != 2.0 {
		t.Fatalf("%s", got)
	}
}

// TestStdioInputCapsLinesAndKeepsTheRest: lines under the cap (and a last
// line without newline) pass unchanged, an oversize line becomes one
// unparseable line, and 1e309 is marked.
func TestStdioInputCapsLinesAndKeepsTheRest(t *testing.T) {
	in := "{\"a\":1}\n" + strings.Repeat("x", 300_000) + "\n{\"b\":1e309}\n\n{\"c\":2}"
	got, err := io.ReadAll(StdioInput(strings.NewReader(in), 100_000, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"a\":1}\n" + oversizeLine + "{\"b\":\"\\u0000specd:number:1e309\"}\n\n{\"c\":2}"
	if string(got) != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
