package mcptool

import (
	"encoding/json"
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
