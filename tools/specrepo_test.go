package tools

import (
	"fmt"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// TestSpecErrorNamesTheRecoveringCall: a spec refusal that names no next
// call gets the one its code and details call for; one that names its call
// (the store's) keeps it; a retried-as-is conflict names none; fuzzy
// matches the domain ranked are kept.
func TestSpecErrorNamesTheRecoveringCall(t *testing.T) {
	const spec = "s-1"
	d := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	stored := core.NewError(errcode.SpecNotFound, "No spec.", nil).WithRecovery("spec", map[string]any{"action": "list"}, []string{"s-2"})
	matched := core.NewError(errcode.TaskNotFound, "x", d("received", "task-9"))
	matched.Recovery = &core.Recovery{FuzzyMatches: []string{"task-1"}}
	for _, tc := range []struct {
		err  error
		want string // fmt of the recovery's tool, args and matches; "" for none
	}{
		{matched, "task map[action:list spec_id:s-1] [task-1]"},
		{core.NewError(errcode.DependencyNotFound, "x", d()), "task map[action:list spec_id:s-1] []"},
		{core.NewError(errcode.PhaseNotFound, "x", d()), "task map[action:hierarchy spec_id:s-1] []"},
		{core.NewError(errcode.InvalidParent, "x", d()), "task map[action:hierarchy spec_id:s-1] []"},
		{core.NewError(errcode.SpecNotFound, "x", d()), "spec map[action:list] []"},
		{core.NewError(errcode.VersionNotFound, "x", d("field", "version")), "spec map[action:history spec_id:s-1] []"},
		{core.NewError(errcode.InvalidFormat, "x", d("field", "target")), "spec map[action:history spec_id:s-1] []"},
		{core.NewError(errcode.InvalidFormat, "x", d("field", "title")), ""},
		{core.NewError(errcode.TaskBlocked, "x", d("task_id", "task-2")), "task map[action:check-deps spec_id:s-1 task_id:task-2] []"},
		{core.NewError(errcode.InvalidTransition, "x", d("task_id", "task-3")), "task map[action:info spec_id:s-1 task_id:task-3] []"},
		{core.NewError(errcode.Conflict, "x", d("field", "to_folder")), "lifecycle map[action:state spec_id:s-1] []"},
		{core.NewError(errcode.InvalidTransition, "x", d()), "spec map[action:get spec_id:s-1] []"},
		{core.NewError(errcode.VersionConflict, "x", nil), "spec map[action:get spec_id:s-1] []"},
		{core.NewError(errcode.Conflict, "retry", d("retry_after_ms", 50)), ""},
		{stored, "spec map[action:list] [s-2]"},
		{&specs.FieldError{Field: "target", SpecID: "s-2", Err: core.NewError(errcode.VersionNotFound, "x", d("field", "version"))}, "spec map[action:history spec_id:s-2] []"},
	} {
		e := core.AsError(withSpecNextCall(tc.err, spec))
		got := ""
		if e.NamesCall() {
			got = fmt.Sprint(e.Recovery.Tool, " ", e.Recovery.Args, " ", fmt.Sprint(e.Matches()))
		}
		if got != tc.want {
			t.Errorf("%s %v: recovery %q, want %q", e.Code, e.Details, got, tc.want)
		}
		if _, ok := tc.err.(*specs.FieldError); ok && e.Details["field"] != "target" {
			t.Errorf("a field error names its argument: %v", e.Details)
		}
	}
}

// TestSpecErrorWithoutSpecNamesNoSpecCall: where the refusing call had no
// spec id (a create, a batch's own checks), a refusal whose recovery would act
// on a spec names no call rather than one with an empty spec_id, which could
// not run as given; a call that needs no spec (spec list) is still named.
func TestSpecErrorWithoutSpecNamesNoSpecCall(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{core.NewError(errcode.TaskNotFound, "x", nil), ""},
		{core.NewError(errcode.PhaseNotFound, "x", nil), ""},
		{core.NewError(errcode.TaskBlocked, "x", map[string]any{"task_id": "task-2"}), ""},
		{core.NewError(errcode.VersionConflict, "x", nil), ""},
		{core.NewError(errcode.SpecNotFound, "x", nil), "spec map[action:list]"},
	} {
		e := core.AsError(withSpecNextCall(tc.err, ""))
		got := ""
		if e.NamesCall() {
			got = fmt.Sprint(e.Recovery.Tool, " ", e.Recovery.Args)
		}
		if got != tc.want {
			t.Errorf("%s: recovery %q, want %q", e.Code, got, tc.want)
		}
	}
}
