package research

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

func TestParseSpecArchiveID(t *testing.T) {
	ok := []struct {
		id   string
		want SpecRef
	}{
		{"spec:demo-2026-01-02-001@7/node:task-1-2", SpecRef{SpecID: "demo-2026-01-02-001", Version: 7, Kind: "node", Ref: "task-1-2"}},
		{"spec:demo-2026-01-02-001@12/subtree:phase-3", SpecRef{SpecID: "demo-2026-01-02-001", Version: 12, Kind: "subtree", Ref: "phase-3"}},
		{"spec:demo-2026-01-02-001@3/journal:1-40", SpecRef{SpecID: "demo-2026-01-02-001", Version: 3, Kind: "journal", Ref: "1-40", From: 1, To: 40}},
		{"spec:odd@id@9/node:spec-root", SpecRef{SpecID: "odd@id", Version: 9, Kind: "node", Ref: "spec-root"}},
		{"spec:s@1/journal:5-5", SpecRef{SpecID: "s", Version: 1, Kind: "journal", Ref: "5-5", From: 5, To: 5}},
		{"spec:s@1/journal:7", SpecRef{SpecID: "s", Version: 1, Kind: "journal", Ref: "7", From: 7, To: 7, Single: true}},
	}
	for _, tc := range ok {
		got, err := ParseSpecArchiveID(tc.id)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.id, got, err, tc.want)
		}
		// The builder is the parser's inverse: one format, one place.
		if back := SpecArchiveID(got.SpecID, got.Version, got.Item()); back != tc.id {
			t.Errorf("SpecArchiveID(%+v) = %q, want %q", got, back, tc.id)
		}
	}
	for _, bad := range []string{
		"", "spec:", "node:x", "spec:s/node:x", "spec:@1/node:x", "spec:s@0/node:x", "spec:s@x/node:x",
		"spec:s@1", "spec:s@1/node", "spec:s@1/node:", "spec:s@1/leaf:x", "spec:s@1/journal:9-2",
		"spec:s@1/journal:x", "spec:s@1/journal:a-b", "spec:s@1/journal:-3", "spec:s@-1/node:x",
	} {
		if _, err := ParseSpecArchiveID(bad); core.CodeOf(err) != errcode.InvalidFormat {
			t.Errorf("%q: want INVALID_FORMAT, got %v", bad, err)
		}
	}
}

func TestDigestIDsOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta map[string]any
		want string
	}{
		{"dedup, skip blanks and non-strings", map[string]any{"digest_ids": []any{"a#00000000", 3, "", "a#00000000", "b#11111111"}}, "a#00000000,b#11111111"},
		{"not a list", map[string]any{"digest_ids": "a#00000000"}, ""},
		{"absent", nil, ""},
	} {
		if got := strings.Join(DigestIDsOf(tc.meta), ","); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCheckID(t *testing.T) {
	for id, want := range map[string]bool{"https://x.org/doc": true, "paper.pdf": true, "  ": false, "": false, "a\x00b": false, "a\nb": false} {
		if got := CheckID("source_id", id) == nil; got != want {
			t.Errorf("%q: ok=%v, want %v", id, got, want)
		}
	}
}

func TestCutWindow(t *testing.T) {
	text := strings.Repeat("é", 3000) + strings.Repeat("a", 3000) // 6000 chars, 9000 bytes
	next := func(n int) *int { return &n }
	for _, tc := range []struct {
		name                      string
		offset, maxChars, maxByte int
		content                   string
		returned                  int
		next                      *int
		cut                       bool
	}{
		{"fits whole", 0, 0, 40_000, text, 6000, nil, false},
		{"bytes cut two-byte chars", 0, 0, 1024, strings.Repeat("é", 512), 512, next(512), true},
		{"max_chars cuts without budget cut", 2990, 20, 40_000, strings.Repeat("é", 10) + strings.Repeat("a", 10), 20, next(3010), false},
		{"the last window", 6000, 0, 40_000, "", 0, nil, false},
	} {
		w, cut, err := CutWindow(text, tc.offset, tc.maxChars, tc.maxByte)
		if err != nil || w.Content != tc.content || w.ReturnedChars != tc.returned || w.TotalChars != 6000 || cut != tc.cut ||
			(w.NextOffset == nil) != (tc.next == nil) || (tc.next != nil && *w.NextOffset != *tc.next) || w.Truncated != (tc.next != nil) {
			t.Errorf("%s: %d chars, next %v, cut %v, err %v", tc.name, w.ReturnedChars, w.NextOffset, cut, err)
		}
	}
	if _, _, err := CutWindow(text, 6001, 0, 40_000); core.CodeOf(err) != errcode.InvalidFormat {
		t.Fatalf("offset past the end: %v", err)
	}
}

// memFiles is a workspace of in-memory files (the FileReader port; the
// real one, workspacefs, has its own tests).
type memFiles map[string]string

func (m memFiles) Rel(name string) (string, error) {
	if strings.HasPrefix(name, "..") {
		return "", core.NewError(errcode.InvalidFormat, "leads out", nil)
	}
	return name, nil
}

func (m memFiles) ReadFile(_ context.Context, name string, max int64) ([]byte, error) {
	s, ok := m[name]
	switch {
	case !ok:
		return nil, core.NewError(errcode.NotFound, "no file", nil)
	case int64(len(s)) > max:
		return nil, core.NewError(errcode.PayloadTooLarge, "too large", nil)
	}
	return []byte(s), nil
}

func (m memFiles) Close() error { return nil }

func TestReadInput(t *testing.T) {
	files := memFiles{"doc.txt": "abcd", "big.txt": strings.Repeat("x", 41), "wide.txt": strings.Repeat("é", 11)}
	svc := Service{MaxChars: 10, Files: func() (FileReader, error) { return files, nil }}
	for _, tc := range []struct {
		name string
		args SourceArgs
		from string
		text string
		code string
	}{
		{"none", SourceArgs{}, "", "", ""},
		{"text", SourceArgs{Given: []string{"text"}, Text: "hello"}, "text", "hello", ""},
		{"two sources", SourceArgs{Given: []string{"text", "path"}}, "", "", errcode.InvalidFormat},
		{"no pages", SourceArgs{Given: []string{"pages"}}, "", "", errcode.InvalidFormat},
		{"pages over the limit", SourceArgs{Given: []string{"pages"}, Pages: []string{"123456", "78901"}}, "", "", errcode.PayloadTooLarge},
		{"pages", SourceArgs{Given: []string{"pages"}, Pages: []string{"12345", "67890"}}, "pages", "", ""},
		{"path", SourceArgs{Given: []string{"path"}, Path: "doc.txt"}, "path", "abcd", ""},
		{"path missing", SourceArgs{Given: []string{"path"}, Path: "nope.txt"}, "", "", errcode.NotFound},
		{"path outside", SourceArgs{Given: []string{"path"}, Path: "../x"}, "", "", errcode.InvalidFormat},
		{"path over the byte cap", SourceArgs{Given: []string{"path"}, Path: "big.txt"}, "", "", errcode.PayloadTooLarge},
		{"path over the char cap", SourceArgs{Given: []string{"path"}, Path: "wide.txt"}, "", "", errcode.PayloadTooLarge},
	} {
		in, err := svc.readInput(context.Background(), tc.args)
		if core.CodeOf(err) != tc.code || (err == nil && (in.From != tc.from || in.Text != tc.text)) {
			t.Errorf("%s: %+v, %v; want from %q text %q code %q", tc.name, in, err, tc.from, tc.text, tc.code)
		}
	}
}

func TestErrorSummary(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{core.NewError(errcode.DigestNotFound, "No digest.", nil), "DIGEST_NOT_FOUND: No digest."},
		{errors.New("disk on fire"), "internal error"},
		{core.NewError("NOT_A_CODE", "x", nil), "internal error"},
		{core.NewError(errcode.Internal, "x", nil), "internal error"},
	} {
		if got := errorSummary(tc.err); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.err, got, tc.want)
		}
	}
}
