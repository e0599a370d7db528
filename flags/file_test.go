package flags

import (
	"strings"
	"testing"
)

// TestCheckFileNamesOneBadVariant: with several bad variants (or several
// targeting operators naming unknown variants), CheckFile names the same one
// on every run, the first by name.
func TestCheckFileNamesOneBadVariant(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"flags":{"response_contract_v2":{"state":"ENABLED","variants":{"z":1,"b":"x","m":[],"d":{}},"defaultVariant":"z"}}}`, `variant "b"`},
		{`{"flags":{"x":{"state":"ENABLED","variants":{"on":true},"defaultVariant":"on","targeting":{"if":[true,"zz","on"],"fractional":[["aa",50],["on",50]]}}}}`, `"aa"`},
	} {
		for i := 0; i < 30; i++ {
			err := CheckFile([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run %d: CheckFile = %v, want it to name %s", i, err, tc.want)
			}
		}
	}
}
