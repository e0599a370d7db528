package degrade

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/jcs"
	"github.com/specd/specd/specs"
)

// testHasher names items as the answer path does (spec:<id>@<version>/item)
// and hashes them over RFC 8785 JSON.
func testHasher(doc specs.Document) Hasher {
	return func(item string, v any) (string, string, error) {
		canon, err := jcs.Marshal(v)
		if err != nil {
			return "", "", err
		}
		sum := sha256.Sum256(canon)
		return fmt.Sprintf("spec:%s@%d/%s", doc.SpecID, doc.Version, item), "sha256:" + hex.EncodeToString(sum[:]), nil
	}
}

// bigDoc builds a spec with phases × tasks, a journal of journalN entries
// and half the tasks completed.
func bigDoc(t testing.TB, phases, tasks, journalN int) specs.Document {
	t.Helper()
	clock := core.Clock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	sp, err := specs.NewSpec(specs.NewSpecInput{Name: "big"}, clock, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < phases; p++ {
		var in []specs.TaskInput
		for i := 0; i < tasks; i++ {
			in = append(in, specs.TaskInput{Title: fmt.Sprintf("Task %d of phase %d with a reasonably descriptive title", i, p),
				Description: strings.Repeat("Describe the work in detail. ", 4), TaskCategory: "implementation", FilePath: fmt.Sprintf("pkg/p%d/f%d.go", p, i)})
		}
		if _, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: fmt.Sprintf("Phase %d", p)}, in); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, id := range sp.IDs() {
		if nd := sp.Node(id); nd.Type == specs.TypeTask && n%2 == 0 {
			if _, err := specs.Complete(sp, id, specs.TransitionOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
		}
		n++
	}
	doc := sp.Document()
	for i := 1; i <= journalN; i++ {
		doc.Journal = append(doc.Journal, specs.JournalEntry{Seq: uint64(i), Timestamp: "2026-01-01T00:00:00Z", EntryType: "note",
			Title: fmt.Sprintf("entry %d", i), Content: strings.Repeat("note ", 20)})
	}
	return doc
}

// expectedSubtree is the test's own {id: node} of a node and all its
// descendants (the "subtree:" archive item), built without budget.go.
func expectedSubtree(h map[string]*specs.Node, id string) map[string]*specs.Node {
	out := map[string]*specs.Node{}
	queue := []string{id}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if n, ok := h[x]; ok && out[x] == nil {
			out[x] = n
			queue = append(queue, n.Children.Slice()...)
		}
	}
	return out
}

func TestBudgetDegradesInOrderAndHashesWhatItDrops(t *testing.T) {
	tests := []struct {
		name           string
		phases, tasks  int
		journal        int
		budget         int
		want           string
		wantDroppedPfx string
	}{
		{"small spec is full", 2, 5, 3, 25_000, core.FidelityFull, ""},
		{"journal goes first", 2, 5, 400, 8_000, core.FidelityPartial, "journal:"},
		{"completed metadata next", 4, 20, 0, -85, core.FidelityPartial, "node:"},
		{"500 tasks summarised", 5, 100, 50, 25_000, core.FidelitySummary, "journal:"},
		{"2,000 tasks reference only", 20, 100, 10, 25_000, core.FidelityReferenceOnly, "journal:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := bigDoc(t, tt.phases, tt.tasks, tt.journal)
			if tt.budget < 0 { // a percentage of the full answer
				tt.budget = tokensOf(Answer{Spec: doc}) * -tt.budget / 100
			}
			b, err := Fit(doc, tt.budget, testHasher(doc))
			if err != nil {
				t.Fatal(err)
			}
			if b.Fidelity != tt.want {
				t.Fatalf("fidelity %s, want %s (tokens %d)", b.Fidelity, tt.want, b.Tokens)
			}
			raw, _ := json.Marshal(b.Answer)
			if len(raw)/4 > tt.budget {
				t.Fatalf("answer is %d tokens, over the %d budget", len(raw)/4, tt.budget)
			}
			if tt.want == core.FidelityFull {
				if len(b.Dropped) != 0 {
					t.Fatalf("full answer dropped %v", b.Dropped)
				}
				return
			}
			if len(b.Dropped) == 0 || !strings.HasPrefix(b.Dropped[0], tt.wantDroppedPfx) {
				t.Fatalf("dropped %v", b.Dropped)
			}
			if len(b.Dropped) > MaxDroppedNodes+1+tt.phases {
				t.Fatalf("dropped list too long: %d", len(b.Dropped))
			}
			if len(b.Archive) != len(b.Dropped) {
				t.Fatalf("%d archive hashes for %d dropped ids", len(b.Archive), len(b.Dropped))
			}
			// Each archived item's hash can be recomputed from the document.
			for id, h := range b.Archive {
				item := id[strings.Index(id, "/")+1:]
				var v any
				switch {
				case strings.HasPrefix(item, "node:"):
					v = doc.Hierarchy[strings.TrimPrefix(item, "node:")]
				case strings.HasPrefix(item, "subtree:"):
					v = expectedSubtree(doc.Hierarchy, strings.TrimPrefix(item, "subtree:"))
				case strings.HasPrefix(item, "journal:"):
					var a, z uint64
					fmt.Sscanf(strings.TrimPrefix(item, "journal:"), "%d-%d", &a, &z)
					v = doc.Journal[a-1 : z]
				}
				// Recomputed without the code under test: RFC 8785 bytes of
				// the independently built item, hashed with crypto/sha256.
				canon, err := jcs.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(canon)
				if got := "sha256:" + hex.EncodeToString(sum[:]); got != h {
					t.Fatalf("%s: hash %s, recomputed %s", id, h, got)
				}
				if !strings.HasPrefix(id, "spec:"+doc.SpecID+"@") {
					t.Fatalf("archive id %q not pinned to the spec version", id)
				}
			}
		})
	}
}
