package specs

import (
	"errors"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// TestUpdateFrontmatterShapes pins which values each typed frontmatter key
// accepts, the refusal's code and message, and that nil deletes.
func TestUpdateFrontmatterShapes(t *testing.T) {
	cases := []struct {
		key   string
		value any
		code  string // "" when accepted
		msg   string
	}{
		{"description", "d", "", ""},
		{"mission", 3, errcode.InvalidFormat, "mission must be a string"},
		{"category", nil, "", ""},
		{"plan_path", []any{"x"}, errcode.InvalidFormat, "plan_path must be a string"},
		{"plan_review_path", "p", "", ""},
		{"estimated_hours", 2.5, "", ""},
		{"estimated_hours", 0, "", ""},
		{"actual_hours", -1, errcode.InvalidFormat, "actual_hours must be a non-negative number"},
		{"actual_hours", "-", errcode.InvalidFormat, "actual_hours must be a non-negative number"},
		{"actual_hours", "3", errcode.InvalidFormat, "actual_hours must be a non-negative number"},
		{"actual_hours", true, errcode.InvalidFormat, "actual_hours must be a non-negative number"},
		{"objectives", []string{"a"}, "", ""},
		{"objectives", []any{"a", 1}, errcode.InvalidFormat, "objectives must be a list of strings"},
		{"objectives", map[string]any{}, errcode.InvalidFormat, "objectives must be a list of strings"},
		{"objectives", nil, "", ""},
		{"free_form", 42, "", ""},
		{"title", "  T  ", "", ""},
		{"title", 7, errcode.MissingRequired, "title must be a non-blank string"},
	}
	for _, tc := range cases {
		s := twoPhases(t)
		err := UpdateFrontmatter(s, tc.key, tc.value)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s=%v: %v", tc.key, tc.value, err)
			}
			continue
		}
		var e *core.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Message != tc.msg {
			t.Errorf("%s=%v: got %v, want %s %q", tc.key, tc.value, err, tc.code, tc.msg)
		}
	}
	s := twoPhases(t)
	noErr(t, UpdateFrontmatter(s, "mission", "m"))
	noErr(t, UpdateFrontmatter(s, "mission", nil))
	if _, has := s.Header.Metadata["mission"]; has {
		t.Fatal("nil did not delete mission")
	}
	noErr(t, UpdateFrontmatter(s, "title", "  T  "))
	if s.Header.Title != "T" {
		t.Fatalf("title %q, want trimmed", s.Header.Title)
	}
}
