package specs_test

import (
	"slices"
	"testing"

	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// waitingSpec is the basic spec with phase-1 and its four children
// completed and waiting for a journal entry.
func waitingSpec(t *testing.T) *specs.Spec {
	t.Helper()
	doc, err := specs.ParseDocument(fixture(t, "foundry_basic.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"task-1-1", "task-1-2", "verify-1-1", "verify-1-2"} {
		if doc.Hierarchy[id].Metadata == nil {
			doc.Hierarchy[id].Metadata = map[string]any{}
		}
		doc.Hierarchy[id].Metadata["needs_journaling"] = true
	}
	return specs.FromDocument(*specs.Fix(doc, specs.FixOptions{}).Document)
}

func TestUnjournaledAfter(t *testing.T) {
	tests := []struct {
		name     string
		after    string
		limit    int
		journal  string // journaled before the page is read
		want     []string
		wantMore bool
		wantErr  string
	}{
		{name: "all", want: []string{"phase-1", "task-1-1", "task-1-2", "verify-1-1", "verify-1-2"}},
		{name: "first page", limit: 2, want: []string{"phase-1", "task-1-1"}, wantMore: true},
		{name: "next page", after: "task-1-1", limit: 2, want: []string{"task-1-2", "verify-1-1"}, wantMore: true},
		{name: "last page", after: "verify-1-1", limit: 2, want: []string{"verify-1-2"}},
		{name: "the cursor's task was journaled meanwhile", after: "task-1-1", journal: "task-1-1", limit: 2, want: []string{"task-1-2", "verify-1-1"}, wantMore: true},
		{name: "cursor after a node that waits for nothing", after: "spec-root", want: []string{"phase-1", "task-1-1", "task-1-2", "verify-1-1", "verify-1-2"}},
		{name: "cursor past a removed node", after: "task-9-9", wantErr: errcode.InvalidCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := waitingSpec(t)
			if tt.journal != "" {
				sp.Edit(tt.journal).DeleteMeta("needs_journaling")
			}
			p, err := specs.UnjournaledAfter(sp, tt.after, tt.limit)
			if errCode(err) != tt.wantErr {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			var got []string
			for i, task := range p.Tasks {
				got = append(got, task.TaskID)
				if p.Nodes[i].ID != task.TaskID {
					t.Errorf("node %s listed as %s", p.Nodes[i].ID, task.TaskID)
				}
			}
			if !slices.Equal(got, tt.want) || p.More != tt.wantMore {
				t.Errorf("page %v more=%v, want %v more=%v", got, p.More, tt.want, tt.wantMore)
			}
		})
	}
}
