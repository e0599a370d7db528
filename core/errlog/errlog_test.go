package errlog

import (
	"fmt"
	"strings"
	"testing"
)

func rec(at, tool, action, code string) Record {
	return Record{At: at, Tool: tool, Action: action, Code: code, Type: "validation", Message: code + " at " + at}
}

func TestSummarizeAndPatterns(t *testing.T) {
	recs := []Record{
		rec("2026-01-03T00:00:00Z", "spec", "get", "SPEC_NOT_FOUND"),
		rec("2026-01-01T00:00:00Z", "spec", "get", "SPEC_NOT_FOUND"),
		rec("2026-01-02T00:00:00Z", "task", "next", "SPEC_NOT_FOUND"),
		rec("2026-01-04T00:00:00Z", "task", "add", "INVALID_FORMAT"),
		rec("2026-01-05T00:00:00Z", "task", "add", "INVALID_FORMAT"),
	}
	st := Summarize(recs)
	if st.Total != 5 || fmt.Sprint(st.ByCode) != "[{SPEC_NOT_FOUND 3} {INVALID_FORMAT 2}]" || fmt.Sprint(st.ByTool) != "[{task 3} {spec 2}]" ||
		st.Oldest != "2026-01-01T00:00:00Z" || st.Newest != "2026-01-05T00:00:00Z" {
		t.Fatalf("%+v", st)
	}
	for _, tc := range []struct {
		min, limit int
		want       string
	}{
		{2, 0, "[task add INVALID_FORMAT 2 2026-01-05T00:00:00Z|spec get SPEC_NOT_FOUND 2 2026-01-03T00:00:00Z]"},
		{1, 0, "[task add INVALID_FORMAT 2 2026-01-05T00:00:00Z|spec get SPEC_NOT_FOUND 2 2026-01-03T00:00:00Z|task next SPEC_NOT_FOUND 1 2026-01-02T00:00:00Z]"},
		{2, 1, "[task add INVALID_FORMAT 2 2026-01-05T00:00:00Z]"},
		{3, 0, "[]"},
	} {
		var got []string
		for _, p := range Patterns(recs, tc.min, tc.limit) {
			if p.Message != p.Code+" at "+p.Last {
				t.Errorf("example message %q is not the newest", p.Message)
			}
			got = append(got, fmt.Sprintf("%s %s %s %d %s", p.Tool, p.Action, p.Code, p.Count, p.Last))
		}
		s := "["
		for i, g := range got {
			if i > 0 {
				s += "|"
			}
			s += g
		}
		if s += "]"; s != tc.want {
			t.Errorf("min %d limit %d: %s, want %s", tc.min, tc.limit, s, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	r := rec("2026-01-02T00:00:00Z", "spec", "get", "SPEC_NOT_FOUND")
	for _, tc := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{Tool: "spec", Code: "SPEC_NOT_FOUND"}, true},
		{Filter{Tool: "task"}, false},
		{Filter{Since: "2026-01-02T00:00:00Z"}, true},
		{Filter{Since: "2026-01-03T00:00:00Z"}, false},
		{Filter{Action: "get", Type: r.Type}, true},
		{Filter{Action: "list"}, false},
		{Filter{Code: "INVALID_FORMAT"}, false},
		{Filter{Type: r.Type + "x"}, false},
	} {
		if got := tc.f.Match(r); got != tc.want {
			t.Errorf("%+v: %v", tc.f, got)
		}
	}
}

// TestPatternsTieBreak: equal counts order by the newest occurrence, then
// by "tool action code".
func TestPatternsTieBreak(t *testing.T) {
	at := "2026-01-01T00:00:00Z"
	recs := []Record{rec(at, "task", "add", "B"), rec(at, "spec", "get", "A"), rec(at, "spec", "get", "B"),
		rec("2026-01-02T00:00:00Z", "zeta", "x", "A"), rec(at, "spec", "", "A")}
	var got []string
	for _, p := range Patterns(recs, 1, 0) {
		got = append(got, p.Tool+"/"+p.Action+"/"+p.Code)
	}
	if want := "zeta/x/A spec//A spec/get/A spec/get/B task/add/B"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", got, want)
	}
}
