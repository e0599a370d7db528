package specs

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

func TestValidID(t *testing.T) {
	cases := []struct {
		id   string
		want bool
	}{
		// foundry-mcp's ids, as generated and as found in its specs
		{"spec-root", true},
		{"phase-1", true},
		{"phase-1-files", true},
		{"task-1-2", true},
		{"task-1-2-1", true},
		{"verify-1-1", true},
		{"my-feature-2025-01-15-001", true},
		{"add-pending-folder-support-for-2025-10-30-0847", true},
		{"v1.2_beta", true},
		{"0", true},
		{strings.Repeat("a", MaxIDLength), true},
		// paths and other things that are not ids
		{"", false},
		{strings.Repeat("a", MaxIDLength+1), false},
		{"../../../outside/victim", false},
		{"..", false},
		{".", false},
		{"a..b", false},
		{"a.", false},
		{".hidden", false},
		{"-x", false},
		{"_x", false},
		{"a/b", false},
		{`a\b`, false},
		{"/etc/passwd", false},
		{"a\x00b", false},
		{"a b", false},
		{"Task-1", false},
		{"tâche-1", false},
		{"a\n", false},
	}
	for _, c := range cases {
		if got := ValidID(c.id); got != c.want {
			t.Errorf("ValidID(%q) = %v, want %v", c.id, got, c.want)
		}
		err := CheckID("spec_id", c.id)
		if (err == nil) != c.want {
			t.Errorf("CheckID(%q) = %v, want ok=%v", c.id, err, c.want)
		}
		if err != nil && core.CodeOf(err) != errcode.InvalidFormat {
			t.Errorf("CheckID(%q) code %q, want INVALID_FORMAT", c.id, core.CodeOf(err))
		}
	}
}

// Every id the domain derives must itself pass the grammar.
func TestDerivedIDsAreValid(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"My Feature", "../../etc/passwd", "Ünïcødé ✓ name", "", "a..b", strings.Repeat("Long name ", 40), "UPPER/case\\x\x00y"} {
		if id := GenerateSpecID(name, now, nil); !ValidID(id) {
			t.Errorf("GenerateSpecID(%q) = %q, not a valid id", name, id)
		}
	}
	s := FromDocument(*loadFixture(t, "foundry_basic.json"))
	for _, id := range s.IDs() {
		n := s.Node(id)
		if n.Type == TypePhase || n.Type == TypeTask || n.Type == TypeSubtask || n.Type == TypeGroup {
			for _, typ := range []NodeType{TypeTask, TypeSubtask, TypeVerify, TypeResearch, TypeGroup} {
				if nid := NewNodeID(s, id, typ); !ValidID(nid) {
					t.Errorf("NewNodeID(%q, %s) = %q, not a valid id", id, typ, nid)
				}
			}
		}
	}
	if id := NewPhaseID(s); !ValidID(id) {
		t.Errorf("NewPhaseID = %q, not a valid id", id)
	}
}

// A document whose spec id or a node id is a path is invalid, and no fix
// makes it valid (so import rejects it rather than storing it).
func TestValidateRejectsPathIDs(t *testing.T) {
	raw, err := os.ReadFile("testdata/foundry_basic.json")
	noErr(t, err)
	base, err := ParseDocument(raw)
	noErr(t, err)
	cases := map[string]string{
		"spec id":      strings.Replace(string(raw), `"spec_id": "`+base.SpecID+`"`, `"spec_id": "../../../outside/victim"`, 1),
		"node id":      strings.ReplaceAll(string(raw), `"task-1-1"`, `"../../x/deep/mk"`),
		"upper node":   strings.ReplaceAll(string(raw), `"task-1-1"`, `"Task-1-1"`),
		"nul spec id":  strings.Replace(string(raw), `"spec_id": "`+base.SpecID+`"`, `"spec_id": "a\u0000b"`, 1),
		"dot dot node": strings.ReplaceAll(string(raw), `"task-1-1"`, `"task..1"`),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			if text == string(raw) {
				t.Fatal("fixture edit did not apply")
			}
			doc, err := ParseDocument([]byte(text))
			noErr(t, err)
			rep := Validate(doc)
			if rep.IsValid || !hasCode(rep, "INVALID_ID") {
				t.Fatalf("want INVALID_ID error, got %+v", rep.Diagnostics)
			}
			fixed := Fix(doc, FixOptions{})
			if fixed.Report.IsValid || !hasCode(fixed.Report, "INVALID_ID") {
				t.Fatalf("after Fix: want INVALID_ID error still, got %+v", fixed.Report.Diagnostics)
			}
		})
	}
}

func hasCode(r ValidationReport, code string) bool {
	for _, d := range r.Diagnostics {
		if d.Code == code && d.Severity == SeverityError {
			return true
		}
	}
	return false
}
