package specs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

func addFixtureSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{}`, `[]`, `null`, `{"hierarchy": {}}`, `{"hierarchy": {"spec-root": null}}`,
		`{"hierarchy": {"spec-root": {"children": ["a", "a", "spec-root"]}, "a": {"parent": "a", "children": ["spec-root"]}}}`,
		`{"hierarchy": {"a": {"parent": "b"}, "b": {"parent": "a", "children": ["a"]}}}`,
		`{"hierarchy": {"task-1-1": {"dependencies": {"blocked_by": ["task-1-1", 3, null]}}}}`,
		`{"spec_id": 5, "title": ["x"], "metadata": [], "journal": {}, "progress_percentage": "x"}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzParseDocument checks that parsing never panics and that a parsed
// document marshals to JSON that parses back to the same JSON.
func FuzzParseDocument(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDocument(data)
		if err != nil {
			if core.CodeOf(err) != errcode.InvalidFormat {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		b1, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		d2, err := ParseDocument(b1)
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		b2, err := json.Marshal(d2)
		if err != nil || string(b1) != string(b2) {
			t.Fatalf("marshal not stable:\n%s\n%s", b1, b2)
		}
	})
}

// FuzzValidateFix checks that Validate and Fix never panic, never modify
// their input, that Fix is idempotent, and that a document Fix leaves
// without errors keeps every invariant once stored.
func FuzzValidateFix(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDocument(data)
		if err != nil {
			return
		}
		before, _ := json.Marshal(d)
		r := Validate(d)
		if r.IsValid != (r.ErrorCount == 0) || len(r.Diagnostics) != r.ErrorCount+r.WarningCount+r.InfoCount {
			t.Fatalf("inconsistent report %+v", r)
		}
		fr := Fix(d, FixOptions{Clock: testClock()})
		if after, _ := json.Marshal(d); string(after) != string(before) {
			t.Fatal("Validate or Fix modified the input")
		}
		again := Fix(fr.Document, FixOptions{Clock: testClock()})
		if len(again.Applied) != 0 {
			t.Fatalf("Fix not idempotent: %+v", again.Applied)
		}
		if fr.Report.IsValid {
			if vs := CheckInvariants(FromDocument(*fr.Document)); len(vs) > 0 {
				t.Fatalf("valid after fix but invariants broken: %v", vs)
			}
		}
	})
}
