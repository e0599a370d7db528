package mcptool

import (
	"maps"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Page is one call's position in a cursor-paged listing: the
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

// AfterNumber is After read as a non-negative integer, for listings keyed
// by a sequence or a version: 0 on the first page. A key that is not one
// (a cursor this server did not issue for this listing) is INVALID_CURSOR
// with the restart call as recovery.
func (p Page) AfterNumber() (uint64, error) {
	if p.After == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(p.After, 10, 64)
	if err != nil {
		tool, args := p.Restart()
		return 0, core.NewError(errcode.InvalidCursor, "The cursor is not one this server issued.", map[string]any{"field": "cursor"}).
			WithRecovery(tool, args, nil)
	}
	return n, nil
}

// ContinueWith is a ListAnswer's Continue: the call tool(base) with the
// cursor given and those of keep that args has (filters and limit the
// next page keeps). base is copied, never changed.
func ContinueWith(tool string, base map[string]any, args Args, keep ...string) func(cursor string) (string, map[string]any) {
	return func(cursor string) (string, map[string]any) {
		next := maps.Clone(base)
		if next == nil {
			next = map[string]any{}
		}
		next["cursor"] = cursor
		for _, k := range keep {
			if args.Has(k) {
				next[k] = args[k]
			}
		}
		return tool, next
	}
}
