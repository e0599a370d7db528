package specs

import (
	"encoding/json"
	"errors"
	"testing"
)

// sharedHeader is a header as a cache keeps it, and its JSON, to prove
// afterwards that nothing changed it.
func sharedHeader(t *testing.T) (Header, string) {
	t.Helper()
	h := Header{SpecID: "s-1", Title: "shared", Version: 3,
		Metadata: map[string]any{"description": "old words", "assumptions": []any{"a1"}, "nested": map[string]any{"k": "v"}},
		Extra:    map[string]json.RawMessage{"x_extra": json.RawMessage(`{"a":1}`)}}
	raw, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return h, string(raw)
}

func headerJSONOf(t *testing.T, h Header) string {
	t.Helper()
	raw, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// A view's changes to its header's metadata never reach the header it was
// made from (the store's cached header, shared by concurrent views).
func TestNewSpecViewLeavesSharedHeaderAlone(t *testing.T) {
	h, before := sharedHeader(t)
	s := NewSpecView(h, nil)
	if err := UpdateFrontmatter(s, "description", "new words"); err != nil {
		t.Fatal(err)
	}
	if _, err := AddAssumption(s, "a2"); err != nil {
		t.Fatal(err)
	}
	if err := UpdateFrontmatter(s, "nested", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := AddRevision(s, Revision{Changelog: "c"}); err != nil {
		t.Fatal(err)
	}
	if got := headerJSONOf(t, h); got != before {
		t.Fatalf("shared header changed:\n%s\nwant\n%s", got, before)
	}
	if s.Header.Metadata["description"] != "new words" || len(specList(s, "assumptions")) != 2 || s.Header.Metadata["nested"] != nil {
		t.Fatalf("view's header did not change: %v", s.Header.Metadata)
	}
}

// A header given away by ShareHeader stays as it was while the view goes on
// changing its own.
func TestShareHeaderKeepsGivenHeader(t *testing.T) {
	h, _ := sharedHeader(t)
	s := NewSpecView(h, nil)
	if err := UpdateFrontmatter(s, "description", "first"); err != nil {
		t.Fatal(err)
	}
	given := s.ShareHeader()
	want := headerJSONOf(t, given)
	if err := UpdateFrontmatter(s, "description", "second"); err != nil {
		t.Fatal(err)
	}
	if _, err := AddRisk(s, Risk{Description: "r", Likelihood: "low", Impact: "low"}); err != nil {
		t.Fatal(err)
	}
	if got := headerJSONOf(t, given); got != want {
		t.Fatalf("given header changed:\n%s\nwant\n%s", got, want)
	}
}

// A refused mutation restores the header it started from, whether the
// view's maps were its own or shared.
func TestRefusedMutationRestoresHeader(t *testing.T) {
	h, before := sharedHeader(t)
	s := NewSpecView(h, nil)
	if err := UpdateFrontmatter(s, "estimated_hours", "many"); err == nil {
		t.Fatal("estimated_hours accepted a string")
	}
	if got := headerJSONOf(t, s.Header); got != before {
		t.Fatalf("view's header after a refusal:\n%s\nwant\n%s", got, before)
	}
	if err := UpdateFrontmatter(s, "description", "own"); err != nil { // the view's maps are its own now
		t.Fatal(err)
	}
	owned := headerJSONOf(t, s.Header)
	if err := UpdateFrontmatter(s, "estimated_hours", "many"); err == nil {
		t.Fatal("estimated_hours accepted a string")
	}
	if got := headerJSONOf(t, s.Header); got != owned {
		t.Fatalf("view's own header after a refusal:\n%s\nwant\n%s", got, owned)
	}
	if got := headerJSONOf(t, h); got != before {
		t.Fatalf("shared header changed:\n%s\nwant\n%s", got, before)
	}
}

// A mutation that writes the header's metadata and then fails leaves a
// view whose maps were its own as it was: the undo log keeps the maps
// without copying them, so the mutation's first write must copy them.
func TestFailedMutationAfterMetadataWriteRestoresOwnHeader(t *testing.T) {
	h, _ := sharedHeader(t)
	s := NewSpecView(h, nil)
	if err := UpdateFrontmatter(s, "description", "own"); err != nil { // the view's maps are its own now
		t.Fatal(err)
	}
	owned := headerJSONOf(t, s.Header)
	refused := errors.New("refused after the write")
	err := func() (err error) {
		defer s.mutate(&err)()
		s.headerMeta()["description"] = "never kept"
		s.headerMeta()["nested"] = map[string]any{"k": "changed"}
		return refused
	}()
	if !errors.Is(err, refused) {
		t.Fatalf("mutation answered %v", err)
	}
	if got := headerJSONOf(t, s.Header); got != owned {
		t.Fatalf("view's own header after a failed mutation:\n%s\nwant\n%s", got, owned)
	}
}
