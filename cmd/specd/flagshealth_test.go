package main

import (
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/flags"
)

// TestPrintHealthErrorsInOneOrder: the ERRORS column lists error types in
// sorted order, so two prints of one report are the same bytes.
func TestPrintHealthErrorsInOneOrder(t *testing.T) {
	r := flags.HealthReport{Since: time.Unix(0, 0).UTC(), Provider: "file", FlagFile: "flags.json",
		Rows: []flags.HealthRow{{Flag: "response_contract_v2", Variant: "on", Calls: 10,
			Errors: map[string]int64{"validation": 1, "not_found": 2, "conflict": 3, "internal": 1, "auth": 1}}}}
	var first strings.Builder
	printHealth(&first, r)
	if !strings.Contains(first.String(), "auth=1,conflict=3,internal=1,not_found=2,validation=1") {
		t.Fatalf("errors not in sorted order:\n%s", first.String())
	}
	for i := 0; i < 20; i++ {
		var again strings.Builder
		printHealth(&again, r)
		if again.String() != first.String() {
			t.Fatalf("print %d differs:\n%s\nvs\n%s", i, again.String(), first.String())
		}
	}
}
