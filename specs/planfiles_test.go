package specs_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
)

func openWorkspace(t *testing.T) (*workspacefs.Dir, string) {
	t.Helper()
	dir := t.TempDir()
	ws, err := workspacefs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return ws, dir
}

func codeOfErr(err error) string {
	if err == nil {
		return ""
	}
	if c := core.CodeOf(err); c != "" {
		return c
	}
	return core.AsError(err).Code
}

// TestPlanFiles: plans are created from a template under specs/.plans,
// never over an existing one, listed by slug, and reviewed from the file.
func TestPlanFiles(t *testing.T) {
	ctx := context.Background()
	ws, dir := openWorkspace(t)
	if got, err := specs.ListPlanFiles(ctx, ws); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no plans folder: %v, %v; want an empty list", got, err)
	}
	created, err := specs.CreatePlanFile(ctx, ws, "  Contract plan! ", "")
	if err != nil || created != (specs.CreatedPlan{Slug: "contract-plan", Path: "specs/.plans/contract-plan.md", Template: "detailed"}) {
		t.Fatalf("create: %+v, %v", created, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "specs", ".plans", "contract-plan.md"))
	if err != nil || string(b) != specs.PlanMarkdown("Contract plan!", "detailed") {
		t.Fatalf("written %q, %v", b, err)
	}
	if _, err := specs.CreatePlanFile(ctx, ws, "Small", "simple"); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "specs", ".plans", "notes.txt"), []byte("x"), 0o644)
	_ = os.MkdirAll(filepath.Join(dir, "specs", ".plans", "old"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "specs", ".plans", "old", "deep.md"), []byte("x"), 0o644)
	plans, err := specs.ListPlanFiles(ctx, ws)
	sort.Strings(plans)
	if err != nil || !reflect.DeepEqual(plans, []string{"contract-plan", "small"}) {
		t.Fatalf("list: %v, %v", plans, err)
	}
	rev, err := specs.ReviewPlanFile(ctx, ws, "small")
	if err != nil || rev.Template != "simple" || rev.Ready || rev.Placeholders != 4 {
		t.Fatalf("review: %+v, %v", rev, err)
	}
	for _, tc := range []struct {
		name  string
		err   error
		code  string
		field string
	}{
		{"existing plan", second(specs.CreatePlanFile(ctx, ws, "contract plan", "")), errcode.DuplicateEntry, ""},
		{"name without letters", second(specs.CreatePlanFile(ctx, ws, " !! ", "")), errcode.InvalidFormat, "name"},
		{"slug with a path", second(specs.ReviewPlanFile(ctx, ws, "../x")), errcode.InvalidFormat, "plan"},
		{"empty slug", second(specs.ReviewPlanFile(ctx, ws, "")), errcode.InvalidFormat, "plan"},
		{"unknown plan", second(specs.ReviewPlanFile(ctx, ws, "nope")), errcode.NotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if codeOfErr(tc.err) != tc.code {
				t.Fatalf("got %v, want %s", tc.err, tc.code)
			}
			if tc.field != "" && core.AsError(toCore(tc.err)).Details["field"] != tc.field {
				t.Fatalf("field of %v, want %s", tc.err, tc.field)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }

// toCore is err with its details as the tools layer sees them.
func toCore(err error) error {
	if se, ok := err.(*core.Error); ok {
		return core.NewError(se.Code, se.Message, se.Details)
	}
	return err
}
