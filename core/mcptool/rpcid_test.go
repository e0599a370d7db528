package mcptool

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestRequestIDSurrogates: ids mcp-go echoes exactly pass untouched; the
// others become a surrogate that survives mcp-go's decode/encode of the id
// and is restored to the literal.
func TestRequestIDSurrogates(t *testing.T) {
	for _, tc := range []struct {
		id      string
		wrapped bool
	}{
		{"7", false}, {"-12", false}, {"0", false}, {"9007199254740992", false}, {`"s"`, false}, {"null", false},
		{"9007199254740993", true}, {"100000000000000000000000", true}, {"1e309", true}, {"1.0", true},
		{"1.5", true}, {"-0", true}, {"1E2", true}, {"007", true},
		{"-9007199254740992", false}, {"-9007199254740993", true}, {"99999999999999999", true},
		{"123456789012345678", true}, {"-07", true}, {"0.0", true}, {"-", true}, {"1e+2", true},
		{"true", false}, {`{"a":1}`, false}, {"[1]", false}, {"-a", false}, {"12abc", false}, {"+5", false},
	} {
		msg := []byte(`{"jsonrpc":"2.0","id":` + tc.id + `,"method":"ping"}`)
		in, wrapped := wrapRequestID(msg)
		if wrapped != tc.wrapped || (!wrapped && string(in) != string(msg)) {
			t.Errorf("%s: wrapped %v (%s), want %v", tc.id, wrapped, in, tc.wrapped)
			continue
		}
		if !wrapped {
			continue
		}
		var req mcp.JSONRPCRequest
		if err := json.Unmarshal(in, &req); err != nil {
			t.Fatalf("%s: the wrapped message does not decode: %v", tc.id, err)
		}
		out, _ := json.Marshal(mcp.NewJSONRPCResultResponse(req.ID, map[string]any{"id": 1}))
		want := `{"jsonrpc":"2.0","id":` + tc.id + `,"result":{"id":1}}`
		if got := string(restoreIDs(out)); got != want {
			t.Errorf("%s: answer %s, want %s", tc.id, got, want)
		}
	}
}

// TestCancelRequestIDSurrogates: a notifications/cancelled naming an id
// that a request carries as a surrogate names the same surrogate (so
// mcp-go's in-flight lookup finds the call); ids echoed exactly, other
// notifications and a requestId outside params are left as they are.
func TestCancelRequestIDSurrogates(t *testing.T) {
	for _, id := range []string{"1e309", "100000000000000000000000", "9007199254740993", "1.0", "-0", "7", `"s"`} {
		req, reqWrapped := wrapRequestID([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call"}`))
		cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"x","requestId":` + id + `}}`)
		got, wrapped := wrapRequestID(cancel)
		if wrapped != reqWrapped {
			t.Errorf("%s: cancel wrapped %v, request %v", id, wrapped, reqWrapped)
		}
		var r struct {
			ID any `json:"id"`
		}
		var n mcp.JSONRPCNotification
		if err := json.Unmarshal(req, &r); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &n); err != nil {
			t.Fatalf("%s: the wrapped cancel does not decode: %v (%s)", id, err, got)
		}
		if fmtID(r.ID) != fmtID(n.Params.AdditionalFields["requestId"]) {
			t.Errorf("%s: the cancel names %v, the request carries %v", id, n.Params.AdditionalFields["requestId"], r.ID)
		}
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":1e309}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","requestId":1e309}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
	} {
		if got, wrapped := wrapRequestID([]byte(msg)); wrapped || string(got) != msg {
			t.Errorf("%s: changed to %s", msg, got)
		}
	}
}

// fmtID is an id as mcp-go keys its in-flight calls (fmt's %v).
func fmtID(v any) string { return fmt.Sprintf("%v", v) }
