package specs_test

import (
	"reflect"
	"testing"

	"github.com/specd/specd/specs"
)

func TestComparisonModifiedPage(t *testing.T) {
	ids := []string{"phase-1", "task-1-2", "task-1-10", "task-2-1"} // node order
	var mods []specs.NodeDiff
	for _, id := range ids {
		mods = append(mods, specs.NodeDiff{ID: id})
	}
	c := specs.Comparison{Diff: specs.SpecDiff{Modified: mods}}
	tests := []struct {
		name  string
		after string
		limit int
		want  []string
		more  bool
	}{
		{"all", "", 0, ids, false},
		{"first page", "", 2, ids[:2], true},
		{"after a key, node order not string order", "task-1-2", 0, ids[2:], false},
		{"after a key, limited", "phase-1", 2, ids[1:3], true},
		{"exact last page", "task-1-2", 2, ids[2:], false},
		{"after the last", "task-2-1", 5, nil, false},
		{"after a removed key", "task-1-3", 0, ids[2:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, more := c.ModifiedPage(tt.after, tt.limit)
			var got []string
			for _, m := range page {
				got = append(got, m.ID)
			}
			if !reflect.DeepEqual(got, tt.want) || more != tt.more {
				t.Fatalf("got %v more %v; want %v more %v", got, more, tt.want, tt.more)
			}
		})
	}
}
