package tools

import (
	"fmt"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// The task tool's own errors (the tree walks themselves are specs.Walk and
// specs.Listing).

// taskStaleCursor is the INVALID_CURSOR answer for a cursor whose node no
// longer sits where the listing can resume from it; its recovery restarts
// the listing.
func taskStaleCursor(p mcptool.Page) *core.Error {
	tool, restart := p.Restart()
	return core.NewError(errcode.InvalidCursor, "The cursor's position no longer exists (the node was removed or moved); restart the listing.",
		map[string]any{"field": "cursor", "constraint": "a cursor whose last node still exists in the listing"}).
		WithRecovery(tool, restart, nil)
}

// taskNodeNotFound is TASK_NOT_FOUND (PHASE_NOT_FOUND for phase-like ids) for
// an id given in field, with the closest existing ids and a recovery call
// that lists the tree. It reads every id: error paths only.
func taskNodeNotFound(s *specs.Spec, specID, field, id string) *core.Error {
	code := errcode.TaskNotFound
	what := "node"
	if strings.HasPrefix(id, "phase-") {
		code, what = errcode.PhaseNotFound, "phase"
	}
	ids := s.IDs()
	return core.NewError(code, fmt.Sprintf("No %s %q in spec %s.", what, id, specID),
		map[string]any{"field": field, "received": id}).
		WithRecovery("task", map[string]any{"action": "hierarchy", "spec_id": specID}, fuzzy.Rank(id, ids, 5))
}
