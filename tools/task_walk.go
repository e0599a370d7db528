package tools

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

// The task tool's own errors (the tree walks themselves are specs.Walk and
// specs.Listing).

// taskStaleCursor is the INVALID_CURSOR answer for a cursor whose node no
// longer sits where the listing can resume from it; its recovery restarts
// the listing.
func taskStaleCursor(p mcptool.Page) *core.Error {
	tool, restart := p.Restart()
	return core.FieldError(errcode.InvalidCursor, "The cursor's position no longer exists (the node was removed or moved); restart the listing.",
		core.FieldDetail{Field: "cursor", Constraint: "a cursor whose last node still exists in the listing"}).
		WithRecovery(tool, restart, nil)
}
