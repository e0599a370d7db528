package core

import (
	"encoding/json"
	"testing"
)

// TestDetailsOfRendersAsTheStruct: the map DetailsOf makes of a struct
// marshals to the same bytes as the struct itself (its keys sorted, as a
// map's are), for zero, nil and set
// fields, omitempty or not, and embedded structs.
func TestDetailsOfRendersAsTheStruct(t *testing.T) {
	type extended struct {
		FieldDetail
		Fields  []string `json:"fields"`
		Skipped string   `json:"-"`
		Named   int
		hidden  int
	}
	var nilNames []string
	cases := []any{
		FieldDetail{},
		FieldDetail{Field: "limit", Received: 0, Constraint: "≤ 100"},
		FieldDetail{Field: "template", Received: "", Allowed: nilNames},
		FieldDetail{Field: "command", Action: "session", Received: "x", Allowed: []string{"list", "start"}},
		TruncationContext{Reason: TruncatedTokenBudget},
		TruncationContext{DroppedCount: 3, TotalCount: 9, Reason: TruncatedTokenBudget, BudgetTokens: 200, Parts: 2, ArchiveIDsOmitted: true},
		TruncationContext{DroppedCount: 1, TotalCount: 1, Reason: TruncatedOutputLimit, OutputBytes: 70000},
		extended{FieldDetail: FieldDetail{Field: "updates"}, Skipped: "no", Named: 2, hidden: 1},
		&extended{},
		struct {
			P *int `json:"p,omitempty"`
			Q *int `json:"q"`
		}{},
		struct {
			P *int `json:"p"`
		}{new(0)},
	}
	for _, c := range cases {
		want := sortedJSON(t, c)
		got, err := json.Marshal(DetailsOf(c))
		if err != nil || string(got) != string(want) {
			t.Errorf("%#v: DetailsOf renders %s, the struct %s (%v)", c, got, want, err)
		}
	}
	yes := true
	if d := DetailsOf(struct {
		B *bool `json:"b"`
	}{&yes}); d["b"] != true {
		t.Errorf("b = %#v, want the value pointed to", d["b"])
	}
	if d := DetailsOf(FieldDetail{Field: "f", Received: []string{"a"}}); d["received"] == nil {
		t.Error("received lost its Go value")
	} else if _, ok := d["received"].([]string); !ok {
		t.Errorf("received is %T, want the []string given", d["received"])
	}
}

// TestFieldErrorDetails: FieldError's details are the FieldDetail's.
func TestFieldErrorDetails(t *testing.T) {
	e := FieldError("INVALID_FORMAT", "no", FieldDetail{Field: "target", Received: "../x"})
	if len(e.Details) != 2 || e.Details["field"] != "target" || e.Details["received"] != "../x" {
		t.Fatalf("details = %#v", e.Details)
	}
}

// sortedJSON is v's JSON with the keys of its object sorted.
func sortedJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(m)
	return out
}
