package research

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// ArchivePutArgs is an archive-put call; ContentID is checked (CheckID)
// when HasContentID.
type ArchivePutArgs struct {
	Content      string
	ContentID    string
	HasContentID bool
	ItemType     string
}

// ArchivePutResult is archive-put's answer. expires_at is null when
// retention keeps content forever; expired_removed is present only when
// the put's retention sweep removed something.
type ArchivePutResult struct {
	Hash           string  `json:"hash"`
	Created        bool    `json:"created"`
	SizeBytes      int     `json:"size_bytes"`
	ContentID      string  `json:"content_id"`
	ItemType       string  `json:"item_type"`
	ArchivedAt     string  `json:"archived_at"`
	ExpiresAt      *string `json:"expires_at"`
	ExpiredRemoved int     `json:"expired_removed,omitempty"`
}

// ArchivePut archives content under sha256 of its bytes (idempotent; a
// repeated put restarts its retention), optionally under ContentID, then
// may sweep the archive. UNAVAILABLE, INVALID_FORMAT (content_id), the
// store's errors.
func (s Service) ArchivePut(ctx context.Context, a ArchivePutArgs) (ArchivePutResult, error) {
	st, err := s.store()
	if err != nil {
		return ArchivePutResult{}, err
	}
	if a.HasContentID {
		if err := CheckID("content_id", a.ContentID); err != nil {
			return ArchivePutResult{}, err
		}
	}
	now := s.Clock.Now()
	m, created, err := st.ArchivePut(ctx, []byte(a.Content), ArchiveMeta{
		ContentID: a.ContentID, ItemType: a.ItemType, ArchivedAt: now.Format(time.RFC3339)})
	if err != nil {
		return ArchivePutResult{}, err
	}
	res := ArchivePutResult{Hash: m.Hash, Created: created, SizeBytes: m.SizeBytes, ContentID: m.ContentID,
		ItemType: m.ItemType, ArchivedAt: m.ArchivedAt, ExpiredRemoved: s.maybeSweep(ctx, st)}
	if s.Retention > 0 {
		exp := now.Add(s.Retention).Format(time.RFC3339)
		res.ExpiresAt = &exp
	}
	return res, nil
}

// ArchiveGetArgs is an archive-get call: Given lists which of hash,
// content_id and archive_id it gives (exactly one is needed).
type ArchiveGetArgs struct {
	Given        []string
	Hash         string
	ContentID    string
	ArchiveID    string
	ExpectedHash string
}

// IsSpecArchiveID says whether an archive id names a spec item
// ("spec:<spec_id>@<version>/…"), served from the spec store rather than
// the archive.
func IsSpecArchiveID(id string) bool { return strings.HasPrefix(id, "spec:") }

// CheckArchiveGet checks that an archive-get call names exactly one of
// hash, content_id and archive_id: MISSING_REQUIRED for none,
// INVALID_FORMAT for more.
func CheckArchiveGet(a ArchiveGetArgs) error {
	switch len(a.Given) {
	case 0:
		return core.NewError(errcode.MissingRequired, "research action \"archive-get\" needs hash, content_id or archive_id.",
			map[string]any{"field": "hash", "action": "archive-get", "one_of": []string{"hash", "content_id", "archive_id"}})
	case 1:
		return nil
	default:
		return core.NewError(errcode.InvalidFormat, "Give one of hash, content_id and archive_id, not "+strings.Join(a.Given, " and ")+".",
			map[string]any{"field": a.Given[1], "constraint": "one of hash, content_id, archive_id", "received": a.Given})
	}
}

// ArchivedContent is an archived item as read, its hash verified by the
// store: Hash is the key of its bytes, Verified whether it matches
// ExpectedHash (true when none was given).
type ArchivedContent struct {
	Meta         ArchiveMeta
	Text         string
	Hash         string
	ExpectedHash string
	Verified     bool
}

// ArchiveGet reads archived content by hash, content_id, or an archive_id
// that is not a spec archive id (it reads as a content_id); never writes.
// Errors: CheckArchiveGet's, UNAVAILABLE, ARCHIVE_NOT_FOUND (with
// digest-list as the recovery), the store's.
func (s Service) ArchiveGet(ctx context.Context, a ArchiveGetArgs) (ArchivedContent, error) {
	if err := CheckArchiveGet(a); err != nil {
		return ArchivedContent{}, err
	}
	contentID := a.ContentID
	if a.ArchiveID != "" {
		contentID = a.ArchiveID
	}
	st, err := s.store()
	if err != nil {
		return ArchivedContent{}, err
	}
	content, m, err := st.ArchiveGet(ctx, a.Hash, contentID)
	if core.CodeOf(err) == errcode.ArchiveNotFound {
		return ArchivedContent{}, core.NewError(errcode.ArchiveNotFound, messageOf(err), core.AsError(err).Details).
			WithRemediation("Nothing is archived under that id (unknown, or removed by retention): list the stored digests, or archive the content again (research archive-put, or digest-put with the source text).")
	}
	if err != nil {
		return ArchivedContent{}, err
	}
	key := ArchiveKey(content)
	return ArchivedContent{Meta: m, Text: string(content), Hash: key, ExpectedHash: a.ExpectedHash,
		Verified: a.ExpectedHash == "" || a.ExpectedHash == key}, nil
}

// ArchiveGetResult is archive-get's answer for archived content (source
// "archive"): the item's metadata, whether its hash matched expected_hash
// (present only when given), and the window of its text. Spec archive ids
// are answered with SpecItemResult instead.
type ArchiveGetResult struct {
	Hash         string `json:"hash"`
	ContentID    string `json:"content_id"`
	ItemType     string `json:"item_type"`
	ArchivedAt   string `json:"archived_at"`
	SizeBytes    int    `json:"size_bytes"`
	Verified     bool   `json:"verified"`
	HashChecked  bool   `json:"hash_checked"`
	Source       string `json:"source"`
	ExpectedHash string `json:"expected_hash,omitempty"`
	Window
}

// Window is the part of archived text an archive-get returns: content from
// offset (characters), returned_chars of total_chars; next_offset (null at
// the end) continues it.
type Window struct {
	Content       string `json:"content"`
	Offset        int    `json:"offset"`
	ReturnedChars int    `json:"returned_chars"`
	TotalChars    int    `json:"total_chars"`
	NextOffset    *int   `json:"next_offset"`
	Truncated     bool   `json:"truncated"`
}

// Answer is the answer for the window of c's text from offset (characters),
// at most maxChars characters (0: no limit) and at most maxBytes bytes of
// text. cut says the byte bound, not maxChars, ended the window before the
// end of the text. The hash always covers the whole content.
// INVALID_FORMAT for an offset past the end.
func (c ArchivedContent) Answer(offset, maxChars, maxBytes int) (res ArchiveGetResult, cut bool, err error) {
	w, cut, err := CutWindow(c.Text, offset, maxChars, maxBytes)
	if err != nil {
		return ArchiveGetResult{}, false, err
	}
	return ArchiveGetResult{Hash: c.Hash, ContentID: c.Meta.ContentID, ItemType: c.Meta.ItemType, ArchivedAt: c.Meta.ArchivedAt,
		SizeBytes: len(c.Text), Verified: c.Verified, HashChecked: true, Source: "archive", ExpectedHash: c.ExpectedHash,
		Window: w}, cut, nil
}

// CutWindow cuts text from offset (characters) to at most maxChars
// characters (0: no limit) and at most maxBytes bytes. cut says the byte
// bound ended the window before the end of the text. INVALID_FORMAT for an
// offset past the end.
func CutWindow(text string, offset, maxChars, maxBytes int) (w Window, cut bool, err error) {
	total := utf8.RuneCountInString(text)
	if offset > total {
		return Window{}, false, core.NewError(errcode.InvalidFormat, fmt.Sprintf("offset %d is past the end of the content (%d characters).", offset, total),
			map[string]any{"field": "offset", "constraint": fmt.Sprintf("≤ %d", total), "received": offset})
	}
	if maxChars <= 0 {
		maxChars = total
	}
	start := runeOffset(text, offset)
	end, n := windowEnd(text, start, maxChars, maxBytes)
	w = Window{Content: text[start:end], Offset: offset, ReturnedChars: n, TotalChars: total}
	if offset+n < total {
		w.NextOffset, w.Truncated = new(offset+n), true
		cut = n < maxChars
	}
	return w, cut, nil
}

// runeOffset is the byte offset of code point n of text (n at most its
// length in code points).
func runeOffset(text string, n int) int {
	off := 0
	for range n {
		_, size := utf8.DecodeRuneInString(text[off:])
		off += size
	}
	return off
}

// windowEnd is the byte end of the window from byte start that holds at
// most maxChars code points and maxBytes bytes, and how many code points
// it holds.
func windowEnd(text string, start, maxChars, maxBytes int) (end, n int) {
	end = start
	for end < len(text) && n < maxChars {
		_, size := utf8.DecodeRuneInString(text[end:])
		if end+size-start > maxBytes {
			break
		}
		end += size
		n++
	}
	return end, n
}
