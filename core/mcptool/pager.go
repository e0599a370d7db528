package mcptool

import (
	"maps"

	"github.com/specd/specd/core"
)

// Page is one call's position in a cursor-paged listing (contract §5): the
// key to resume after, the page size, and how to restart the listing. It is
// the one place where a cursor is decoded, a limit is chosen and the next
// cursor is encoded, so every paged action behaves the same way.
type Page struct {
	// After is the last key of the previous page ("" on the first page).
	After string
	// Limit is the page size: the call's limit, else the listing's default.
	// The validator has already held it to the parameter's bounds.
	Limit int

	fp      string
	tool    string
	restart map[string]any
}

// OpenPage reads the cursor and limit of r for the listing named by tool,
// action, specID and filters (filters in a fixed order: they are part of the
// cursor's fingerprint, so a cursor from another filter is refused).
// restart is the call that starts the listing again (without a cursor); it
// becomes the recovery of INVALID_CURSOR, the only error OpenPage returns.
func OpenPage(r *Request, tool, action, specID string, limits core.PageLimits, restart map[string]any, filters ...string) (Page, error) {
	p := Page{fp: core.Fingerprint(tool, action, specID, filters...), tool: tool, restart: maps.Clone(restart)}
	after, cerr := core.DecodeCursor(r.Args.String("cursor"), p.fp)
	if cerr != nil {
		return Page{}, cerr.WithRecovery(tool, maps.Clone(restart), nil)
	}
	p.After = after
	p.Limit = r.Args.IntOr("limit", limits.Default)
	return p, nil
}

// Cursor is the opaque cursor that resumes after lastKey, or "" when there
// is no more (more false or lastKey empty).
func (p Page) Cursor(lastKey string, more bool) string {
	if !more || lastKey == "" {
		return ""
	}
	return core.EncodeCursor(lastKey, p.fp)
}

// Meta is meta.pagination for a page whose next cursor is next.
func (p Page) Meta(next string) core.MetaOption { return core.WithPagination(next, p.Limit, nil) }

// Restart is a copy of the call that starts the listing again, for recovery
// hints (a stale cursor found by the handler itself).
func (p Page) Restart() (tool string, args map[string]any) { return p.tool, maps.Clone(p.restart) }
