package specs

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/specd/specd/core/errcode"
)

// This file resolves a version reference — a version number, or a moment
// (foundry-mcp names its backups by timestamp) — to a stored version.

// momentLayouts are the timestamps a version may be given as: foundry's
// backup ids (2025-12-26T18-20-13.456789, UTC), RFC 3339, and RFC 3339
// without a zone (UTC). A bare date is not a moment: it could be a spec id.
var momentLayouts = []string{
	"2006-01-02T15-04-05.999999999",
	"2006-01-02T15-04-05Z07:00",
	"2006-01-02T15-04-05.999999999Z07:00",
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

// ParseMoment parses s as a moment (see momentLayouts; letters in any
// case), in UTC.
func ParseMoment(s string) (time.Time, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	for _, layout := range momentLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// ResolveVersion turns ref into a version of spec specID: "" is 0 (the
// caller's default), a positive number is that version, a moment is the
// version current then — the newest kept version made at or before it.
// field names the argument in errors.
// Errors: INVALID_FORMAT (neither a number nor a moment; a number written
// as a word, "v1", is named in details.suggested_value), VERSION_NOT_FOUND
// (the moment is before the oldest kept version was made), SPEC_NOT_FOUND.
func ResolveVersion(ctx context.Context, repo Repo, specID, field, ref string) (int64, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(ref, 10, 64); err == nil && n >= 1 {
		return n, nil
	}
	at, ok := ParseMoment(ref)
	if n, isWord := versionWord(ref); !ok && isWord {
		return 0, newErr(errcode.InvalidFormat, field, "%s %q is not a version number; versions are plain numbers (%d)", field, truncateForDetails(ref), n).
			WithDetail("received", truncateForDetails(ref)).WithDetail("suggested_value", n)
	}
	if !ok {
		return 0, newErr(errcode.InvalidFormat, field,
			"%s %q is neither a version number nor a timestamp (2025-12-26T18-20-13.456789 or RFC 3339).", field, truncateForDetails(ref)).
			WithDetail("received", truncateForDetails(ref))
	}
	return VersionAt(ctx, repo, specID, field, at)
}

// versionWord reads a version written as a word around its number — "v1",
// "V 2", "version 3", "#4", "rev5" — as that number (at least 1).
func versionWord(ref string) (int64, bool) {
	s := strings.ToLower(ref)
	for _, p := range []string{"version", "rev", "v", "#"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return n, err == nil && n >= 1
		}
	}
	return 0, false
}

// VersionAt is the version of spec specID current at moment at: the newest
// kept version whose timestamp is not after it. Versions are listed newest
// first; when every listed one is later, the oldest reconstructable version
// (the one before the oldest record, or the current version when history is
// empty) counts if it was made at or before at.
// Errors: VERSION_NOT_FOUND with details.oldest_timestamp, SPEC_NOT_FOUND.
func VersionAt(ctx context.Context, repo Repo, specID, field string, at time.Time) (int64, error) {
	v, found, oldest, err := keptVersionAt(ctx, repo, specID, at)
	if err != nil || found {
		return v, err
	}
	candidate, made, err := versionBeforeHistory(ctx, repo, specID, oldest)
	if err != nil {
		return 0, err
	}
	if t, ok := ParseTime(made); ok && !t.After(at) {
		return candidate, nil
	}
	return 0, newErr(errcode.VersionNotFound, field,
		"Spec %s has no kept version from %s: the oldest kept version, %d, was made at %s.", specID, at.Format(time.RFC3339Nano), candidate, made).
		WithDetail("received", at.Format(time.RFC3339Nano)).WithDetail("oldest_version", candidate).WithDetail("oldest_timestamp", made)
}

// keptVersionAt pages through spec specID's history, newest first, for the
// newest record whose timestamp is not after at (found). When none is,
// oldest is the oldest record's version (0 when the history is empty).
// Errors: those of Repo.History.
func keptVersionAt(ctx context.Context, repo Repo, specID string, at time.Time) (version int64, found bool, oldest int64, err error) {
	var before int64
	for {
		page, more, err := repo.History(ctx, specID, before, 100)
		if err != nil {
			return 0, false, 0, err
		}
		for _, v := range page {
			if t, ok := ParseTime(v.Timestamp); ok && !t.After(at) {
				return v.Version, true, 0, nil
			}
			oldest = v.Version
		}
		if !more || len(page) == 0 {
			return 0, false, oldest, nil
		}
		before = page[len(page)-1].Version
	}
}

// versionBeforeHistory is the version just before the oldest history
// record, oldest, and when it was made (its last_updated): with no record
// (oldest 0), the current version. Errors: those of Repo.ReadSpec and
// Repo.ReadVersion.
func versionBeforeHistory(ctx context.Context, repo Repo, specID string, oldest int64) (version int64, made string, err error) {
	if oldest == 0 {
		err = repo.ReadSpec(ctx, specID, func(sp *Spec, _ JournalReader) error {
			version, made = sp.Header.Version, sp.Header.LastUpdated
			return nil
		})
		return version, made, err
	}
	err = repo.ReadVersion(ctx, specID, oldest-1, func(v VersionView) error {
		made = v.VersionHeader().LastUpdated
		return nil
	})
	return oldest - 1, made, err
}

// CompareSpecRef is CompareSpec with the caller's references: target a
// version number, a moment or another spec id; version a number or a
// moment ("" for the default). Errors: those of ResolveVersion (field
// "version" or "target") and CompareSpec.
func CompareSpecRef(ctx context.Context, repo Repo, specID, target, version string) (Comparison, error) {
	v, err := ResolveVersion(ctx, repo, specID, "version", version)
	if err != nil {
		return Comparison{}, err
	}
	if at, ok := ParseMoment(target); ok {
		tv, err := VersionAt(ctx, repo, specID, "target", at)
		if err != nil {
			return Comparison{}, err
		}
		target = strconv.FormatInt(tv, 10)
	} else if _, err := strconv.ParseInt(target, 10, 64); err != nil && target != "" {
		if err := CheckID("target", target); err != nil {
			return Comparison{}, err
		}
	}
	return CompareSpec(ctx, repo, specID, target, v)
}

// ReadDocumentRef is ReadDocument at the version ref names (a number or a
// moment; "" for the current spec). Errors: those of ResolveVersion and
// ReadDocument.
func ReadDocumentRef(ctx context.Context, repo Repo, specID, ref string, journalMax int) (Document, error) {
	v, err := ResolveVersion(ctx, repo, specID, "version", ref)
	if err != nil {
		return Document{}, err
	}
	return ReadDocument(ctx, repo, specID, v, journalMax)
}

// ReadHistoryFrom is ReadHistory starting at the version from names (a
// number or a moment: that version and older ones) when the page is the
// first (before 0); "" starts at the newest. Errors: those of
// ResolveVersion and ReadHistory.
func ReadHistoryFrom(ctx context.Context, repo Repo, specID, from string, before int64, limit int) (HistoryPage, error) {
	if before == 0 && from != "" {
		v, err := ResolveVersion(ctx, repo, specID, "version", from)
		if err != nil {
			return HistoryPage{}, err
		}
		before = v + 1
	}
	return ReadHistory(ctx, repo, specID, before, limit)
}

// Rollback restores spec specID to the version ref names (a number or a
// moment) as a new version (Repo.RollbackSpec), and says which version that
// was. Errors: MISSING_REQUIRED without ref, those of ResolveVersion and
// RollbackSpec.
func Rollback(ctx context.Context, repo Repo, specID, ref string, o RepoWriteOptions, now func() string) (int64, RepoWriteResult, error) {
	v, err := ResolveVersion(ctx, repo, specID, "version", ref)
	if err != nil {
		return 0, RepoWriteResult{}, err
	}
	if v == 0 {
		return 0, RepoWriteResult{}, newErr(errcode.MissingRequired, "version", "spec-rollback needs the version to restore (a number or a timestamp).")
	}
	res, err := repo.RollbackSpec(ctx, specID, v, o, now)
	return v, res, err
}
