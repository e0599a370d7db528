package specs

import (
	"strings"

	"github.com/specd/specd/core/errcode"
)

// lifecycleMoves is the lifecycle transition table.
var lifecycleMoves = map[Lifecycle][]Lifecycle{
	LifecyclePending:   {LifecycleActive, LifecycleArchived},
	LifecycleActive:    {LifecyclePending, LifecycleCompleted, LifecycleArchived},
	LifecycleCompleted: {LifecycleActive, LifecycleArchived},
	LifecycleArchived:  {LifecyclePending, LifecycleActive},
}

// AllowedLifecycleMoves returns the lifecycle states reachable from `from`
// ("" counts as pending).
func AllowedLifecycleMoves(from Lifecycle) []Lifecycle {
	if from == "" {
		from = LifecyclePending
	}
	return append([]Lifecycle(nil), lifecycleMoves[from]...)
}

// MoveLifecycle moves the spec to lifecycle state `to` (an empty current
// state counts as pending). Moving to completed needs 100% progress unless
// force. Moving to the current state succeeds with a warning and changes
// nothing. Archiving sets the root's status to archived; leaving archived
// recomputes it.
//
// Errors: INVALID_FORMAT (unknown state; details.allowed),
// INVALID_TRANSITION (a move the table does not allow, or completing below
// 100% without force; details.allowed, details.progress_percentage).
func MoveLifecycle(s *Spec, to Lifecycle, force bool) (warnings []string, err error) {
	defer s.mutate(&err)()
	if err := lifecycleRefusal(s, to, force); err != nil {
		return nil, err
	}
	from := LifecycleOf(s)
	if from == to {
		return []string{"the spec is already " + string(to)}, nil
	}
	if to == LifecycleCompleted {
		warnings = prepareCompletion(s, force)
	}
	s.Header.Lifecycle = to
	if from == LifecycleArchived || to == LifecycleArchived {
		RecomputeAncestors(s, RootID)
	}
	s.touch()
	return warnings, nil
}

// prepareCompletion readies a move to completed that lifecycleRefusal let
// through: without force it recomputes the header (progress is 100%); with
// force it returns the warning that progress is below 100%, if it is.
func prepareCompletion(s *Spec, force bool) []string {
	if !force {
		RecomputeHeader(s)
		return nil
	}
	if s.Header.ProgressPercentage < 100 {
		return []string{"completed with force below 100% progress"}
	}
	return nil
}

// lifecycleRefusal is the one rule of whether MoveLifecycle(s, to, force)
// succeeds: nil, or the refusal it gives. It changes nothing, so read
// models (StateOf's CanComplete and CanArchive) ask it too. A move the
// table does not allow carries, as its step, the one allowed move from
// which to is reachable, when exactly one is.
func lifecycleRefusal(s *Spec, to Lifecycle, force bool) error {
	if !to.Valid() {
		return unknownLifecycle(to)
	}
	from := LifecycleOf(s)
	if from == to {
		return nil
	}
	allowed := lifecycleMoves[from]
	if !containsLifecycle(allowed, to) {
		return disallowedMove(s, from, to)
	}
	if to == LifecycleCompleted && !force {
		return incompleteRefusal(s, from)
	}
	return nil
}

// unknownLifecycle is the INVALID_FORMAT refusal of a state that is not a
// lifecycle state.
func unknownLifecycle(to Lifecycle) error {
	names := []string{}
	for _, l := range Lifecycles() {
		names = append(names, string(l))
	}
	return newErr(errcode.InvalidFormat, "to_folder", "the lifecycle state must be one of %s", strings.Join(names, ", ")).
		WithDetail("received", truncateForDetails(string(to))).WithDetail("allowed", names)
}

// disallowedMove is the INVALID_TRANSITION refusal of a move from → to the
// table does not allow, with as its step the one allowed move from which to
// is reachable, when exactly one is.
func disallowedMove(s *Spec, from, to Lifecycle) error {
	allowed := lifecycleMoves[from]
	e := newErr(errcode.InvalidTransition, "to_folder", "a spec cannot move from %s to %s", from, to).
		WithDetail("allowed", allowed).WithDetail("current", string(from))
	var via []Lifecycle
	for _, l := range allowed {
		if containsLifecycle(lifecycleMoves[l], to) {
			via = append(via, l)
		}
	}
	if len(via) == 1 {
		e.WithStep("lifecycle-move", map[string]any{"spec_id": s.Header.SpecID, "to_folder": string(via[0])}, nil)
	}
	return e
}

// incompleteRefusal refuses, with INVALID_TRANSITION and
// details.progress_percentage, a move from from to completed (without
// force) of a spec whose root is not 100% complete or counts no task; nil
// otherwise.
func incompleteRefusal(s *Spec, from Lifecycle) error {
	total, done := 0, 0
	if r := s.Root(); r != nil {
		total, done = r.TotalTasks, r.CompletedTasks
	}
	p := progress(done, total)
	if p >= 100 && total != 0 {
		return nil
	}
	return newErr(errcode.InvalidTransition, "force",
		"the spec is %d%% complete; finish the remaining tasks or pass force", p).
		WithDetail("progress_percentage", p).WithDetail("allowed", lifecycleMoves[from]).WithDetail("current", string(from))
}

// LifecycleOf is the spec's lifecycle folder (an unset one counts as
// pending).
func LifecycleOf(s *Spec) Lifecycle {
	if l := s.Header.Lifecycle; l != "" {
		return l
	}
	return LifecyclePending
}
