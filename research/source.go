package research

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/workspacefs"
)

// FileReader reads the caller's workspace: *workspacefs.Dir satisfies it
// (confined by os.Root, never blocking on a FIFO, under the call's
// deadline). Its errors are coded and name only workspace-relative paths.
type FileReader interface {
	// Rel turns a caller's name into one relative to the workspace.
	Rel(name string) (string, error)
	// ReadFile reads a regular file of at most max bytes
	// (PAYLOAD_TOO_LARGE beyond).
	ReadFile(ctx context.Context, name string, max int64) ([]byte, error)
	Close() error
}

// SourceArgs is the source document a call gives: Given lists which of
// text, pages and path it gives, in that order; the fields hold their
// values.
type SourceArgs struct {
	Given []string
	Text  string
	Pages []string
	Path  string
}

// Input is a call's source document once read: From is text, pages or
// path ("" when none was given); a path's file reads as Text.
type Input struct {
	From  string
	Text  string
	Pages []string
}

// Canonical canonicalises the input (page by page for pages) and indexes it.
func (in Input) Canonical() *TextIndex {
	if in.From == "pages" {
		text, spans := CanonicalizePages(in.Pages)
		return NewTextIndex(text, spans)
	}
	return NewTextIndex(Canonicalize(in.Text), nil)
}

// readInput reads the call's source: at most one of text, pages and path
// (INVALID_FORMAT for more). pages must hold at least one page
// (INVALID_FORMAT) and at most s.MaxChars characters in all
// (PAYLOAD_TOO_LARGE); path must name a regular file inside the workspace
// of at most s.MaxChars characters (the workspace's errors, or
// PAYLOAD_TOO_LARGE).
func (s Service) readInput(ctx context.Context, a SourceArgs) (Input, error) {
	if len(a.Given) > 1 {
		return Input{}, core.NewError(errcode.InvalidFormat,
			fmt.Sprintf("Give one source (text, pages or path), not %s.", strings.Join(a.Given, " and ")),
			map[string]any{"field": a.Given[1], "constraint": "one of text, pages, path", "received": a.Given})
	}
	if len(a.Given) == 0 {
		return Input{}, nil
	}
	in := Input{From: a.Given[0]}
	switch in.From {
	case "text":
		in.Text = a.Text
	case "pages":
		in.Pages = a.Pages
		if err := s.checkPages(in.Pages); err != nil {
			return in, err
		}
	case "path":
		text, err := s.readWorkspaceText(ctx, a.Path)
		if err != nil {
			return in, err
		}
		in.Text = text
	}
	return in, nil
}

// checkPages refuses no page (INVALID_FORMAT) and pages of more than
// s.MaxChars characters in all (PAYLOAD_TOO_LARGE).
func (s Service) checkPages(pages []string) error {
	if len(pages) == 0 {
		return core.NewError(errcode.InvalidFormat, "pages needs at least one page (use text for a single text).",
			map[string]any{"field": "pages", "constraint": "at least 1 item", "received": 0})
	}
	total := 0
	for _, p := range pages {
		total += utf8.RuneCountInString(p)
	}
	if total > s.MaxChars {
		return core.NewError(errcode.PayloadTooLarge,
			fmt.Sprintf("pages hold %d characters in all; the limit is %d.", total, s.MaxChars),
			map[string]any{"field": "pages", "constraint": "max characters", "limit": s.MaxChars, "received": total})
	}
	return nil
}

// readWorkspaceText reads a regular text file inside the workspace, at most
// s.MaxChars characters.
func (s Service) readWorkspaceText(ctx context.Context, p string) (string, error) {
	if s.Files == nil {
		return "", core.NewError(errcode.Unavailable, "The server has no workspace configured.", nil)
	}
	ws, err := s.Files()
	if err != nil {
		return "", err
	}
	defer ws.Close()
	rel, err := ws.Rel(p)
	if err != nil {
		return "", err
	}
	tooLarge := func(received any) error {
		return core.NewError(errcode.PayloadTooLarge,
			fmt.Sprintf("%s has more than %d characters.", workspacefs.Show(rel), s.MaxChars),
			map[string]any{"field": "path", "constraint": "max characters", "limit": s.MaxChars, "received": received})
	}
	// A character is at most 4 bytes.
	b, err := ws.ReadFile(ctx, rel, int64(4*s.MaxChars))
	if core.CodeOf(err) == errcode.PayloadTooLarge {
		return "", tooLarge(workspacefs.Show(rel))
	}
	if err != nil {
		return "", err
	}
	if n := utf8.RuneCount(b); n > s.MaxChars {
		return "", tooLarge(n)
	}
	return string(b), nil
}

// CheckID refuses an id (source_id, content_id) that is blank or holds
// control characters (a NUL would break the store's key layout; none
// belongs in an id): INVALID_FORMAT naming field.
func CheckID(field, id string) error {
	if strings.TrimSpace(id) == "" || strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return core.NewError(errcode.InvalidFormat, field+" must be non-blank text without control characters.",
			map[string]any{"field": field, "constraint": "non-blank, no control characters", "received": id})
	}
	return nil
}

// archivedSource reads the canonical text archived under hash (or, when
// hash is "", under contentID). found is false when nothing is archived
// there; other errors are returned.
func archivedSource(ctx context.Context, st Store, hash, contentID string) (idx *TextIndex, found bool, err error) {
	content, _, err := st.ArchiveGet(ctx, hash, contentID)
	if err != nil {
		if core.CodeOf(err) == errcode.ArchiveNotFound {
			return nil, false, nil
		}
		return nil, false, err
	}
	return NewTextIndex(string(content), nil), true, nil
}

// validationSource finds the source digest-validate checks against, and
// says where it came from: the call's text, pages or path; else the text
// archived under sourceID (or, failing that, under the payload's
// source_text_hash: the source may have been archived under another id),
// ARCHIVE_NOT_FOUND when neither is there; else, without either, the
// archive entry the payload names when present ("archive"), or none (nil,
// "none"). Giving a source and sourceID is INVALID_FORMAT.
func (s Service) validationSource(ctx context.Context, a SourceArgs, sourceID string, payload map[string]any) (*TextIndex, string, error) {
	in, err := s.readInput(ctx, a)
	if err != nil {
		return nil, "", err
	}
	switch {
	case in.From != "" && sourceID != "":
		return nil, "", core.NewError(errcode.InvalidFormat, "Give the source as "+in.From+" or as source_id (its archived text), not both.",
			map[string]any{"field": "source_id", "constraint": "one of text, pages, path, source_id", "received": sourceID})
	case in.From != "":
		return in.Canonical(), in.From, nil
	case sourceID != "":
		idx, err := s.archivedByID(ctx, sourceID, payload)
		if err != nil {
			return nil, "", err
		}
		return idx, "archive", nil
	}
	return s.archivedByHash(ctx, payload)
}

// archivedByID reads the text archived under content_id sourceID or,
// failing that, under the payload's source_text_hash (the source may have
// been archived under another id). Errors: UNAVAILABLE without a store,
// ARCHIVE_NOT_FOUND when neither is there, the store's.
func (s Service) archivedByID(ctx context.Context, sourceID string, payload map[string]any) (*TextIndex, error) {
	st, err := s.store()
	if err != nil {
		return nil, err
	}
	idx, found, err := archivedSource(ctx, st, "", sourceID)
	if h, ok := PayloadSourceHash(payload); err == nil && !found && ok {
		idx, found, err = archivedSource(ctx, st, h, "")
	}
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, core.NewError(errcode.ArchiveNotFound,
			fmt.Sprintf("No source text is archived under source_id %q (it may have expired).", sourceID),
			map[string]any{"field": "source_id", "received": sourceID}).
			WithRemediation("Validate with the source itself (text, pages or path), or store it again with research digest-put.")
	}
	return idx, nil
}

// archivedByHash is validationSource without a source: the text archived
// under the payload's source_text_hash when there is a store and it is
// there ("archive"), else none (nil, "none"). Errors: the store's (with
// "archive").
func (s Service) archivedByHash(ctx context.Context, payload map[string]any) (*TextIndex, string, error) {
	if h, ok := PayloadSourceHash(payload); ok && s.Store != nil {
		idx, found, err := archivedSource(ctx, s.Store, h, "")
		if err != nil || found {
			return idx, "archive", err
		}
	}
	return nil, "none", nil
}
