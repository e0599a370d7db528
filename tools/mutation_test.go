package tools

import (
	"encoding/json"
	"testing"

	"github.com/specd/specd/specs"
)

// TestMutationChangesUnderDryRunOnly: a dry run always lists its changes
// as an array (also when it would change nothing), and a stored write
// never carries a changes key.
func TestMutationChangesUnderDryRunOnly(t *testing.T) {
	tests := []struct {
		name string
		res  specs.RepoWriteResult
		want string
	}{
		{"stored", specs.RepoWriteResult{Version: 3, Changes: []specs.RepoChange{{Op: "update", Target: "spec"}}}, `{"spec_id":"s","version":3}`},
		{"dry run", specs.RepoWriteResult{Version: 3, DryRun: true, Changes: []specs.RepoChange{{Op: "update", Target: "spec"}}},
			`{"spec_id":"s","version":3,"dry_run":true,"changes":[{"op":"update","target":"spec"}]}`},
		{"dry run changing nothing", specs.RepoWriteResult{Version: 2, DryRun: true}, `{"spec_id":"s","version":2,"dry_run":true,"changes":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(mutationOf("s", tt.res))
			if err != nil || string(b) != tt.want {
				t.Fatalf("mutation = %s, %v; want %s", b, err, tt.want)
			}
		})
	}
}
