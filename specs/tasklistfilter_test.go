package specs

import (
	"strings"
	"testing"
)

func TestListFilters(t *testing.T) {
	s := twoPhases(t)
	noErr(t, func() error { _, err := Complete(s, "task-1-1", TransitionOptions{}); return err }())
	noErr(t, func() error { _, err := Start(s, "task-1-2", TransitionOptions{}); return err }())
	ids := func(f ListFilters) string {
		l := f.Listing()
		l.Limit = 1000
		page, _ := l.Page(s)
		var out []string
		for _, n := range page.Nodes {
			out = append(out, n.ID)
		}
		return strings.Join(out, ",")
	}
	all := ids(ListFilters{})
	for _, tc := range []struct {
		name string
		f    ListFilters
		want func(string) bool
	}{
		{"no filter lists every task node", ListFilters{}, func(got string) bool { return strings.Contains(got, "task-1-1") && strings.Contains(got, "verify-1-1") }},
		{"status_filter", ListFilters{Status: "in_progress"}, func(got string) bool { return got == "task-1-2" }},
		{"status_filter completed", ListFilters{Status: "completed"}, func(got string) bool { return got == "task-1-1" }},
		{"include_completed false", ListFilters{ExcludeComplete: true}, func(got string) bool {
			return !strings.Contains(got, "task-1-1,") && strings.Contains(got, "task-1-2") && len(strings.Split(got, ",")) == len(strings.Split(all, ","))-1
		}},
		{"both: nothing completed is left", ListFilters{Status: "completed", ExcludeComplete: true}, func(got string) bool { return got == "" }},
	} {
		if got := ids(tc.f); !tc.want(got) {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
}
