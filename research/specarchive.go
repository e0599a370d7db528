package research

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// Spec archive ids. Spec items dropped from budgeted answers are not copied
// into the archive (a read never writes) but pinned by archive ids
// "spec:<spec_id>@<version>/<item>" and served from the spec store at that
// version (a read never writes), hashed exactly as the budgeted answer hashed
// them.

// SpecVersions reads a spec as it was at a version (the tools' spec
// repository satisfies it). VERSION_NOT_FOUND, SPEC_NOT_FOUND.
type SpecVersions interface {
	ReadVersion(ctx context.Context, specID string, version int64, fn func(v specs.VersionView) error) error
}

// JournalReader reads a spec's journal entries with seq in [from, to],
// oldest first (the research store satisfies it). SPEC_NOT_FOUND.
type JournalReader interface {
	JournalRange(ctx context.Context, specID string, from, to uint64) ([]specs.JournalEntry, error)
}

// SpecItems serves spec archive ids. Hash and ArchiveID are the ones the
// budgeted answers use, so an item and its parts hash and are named the same
// wherever they are computed; Tokens is the answer budget's estimate (compact
// JSON bytes / 4).
type SpecItems struct {
	// Specs nil, or Journal nil for a journal item, is UNAVAILABLE.
	Specs     SpecVersions
	Journal   JournalReader
	Hash      func(v any) (string, error)
	ArchiveID func(specID string, version int64, item string) string
	Tokens    func(v any) int
}

// SpecRef is a parsed "spec:<spec_id>@<version>/<kind>:<ref>".
type SpecRef struct {
	SpecID   string
	Version  int64
	Kind     string // node | subtree | journal
	Ref      string // node id, or "a-b" or "seq" for journal
	From, To uint64 // journal range
	Single   bool   // journal:<seq>: one entry, served as the entry itself
}

// Item is the ref's item name, "<kind>:<ref>".
func (r SpecRef) Item() string { return r.Kind + ":" + r.Ref }

// SpecArchiveID names item of spec specID pinned to version, as budgeted
// answers list it in content_archive_hashes: "spec:<spec_id>@<version>/<item>"
// (item: node:<id>, subtree:<id>, journal:<seq> or journal:<a>-<b>).
// ParseSpecArchiveID reads it back.
func SpecArchiveID(specID string, version int64, item string) string {
	return "spec:" + specID + "@" + strconv.FormatInt(version, 10) + "/" + item
}

// ParseSpecArchiveID parses the archive ids budgeted answers make.
// INVALID_FORMAT saying what is wrong.
func ParseSpecArchiveID(id string) (SpecRef, error) {
	ref, why := parseSpecRef(id)
	if why != "" {
		return SpecRef{}, core.NewError(errcode.InvalidFormat, "archive_id is not a spec archive id: "+why+".",
			map[string]any{"field": "archive_id", "received": id,
				"constraint": "spec:<spec_id>@<version>/node:<id> | subtree:<id> | journal:<seq> | journal:<a>-<b>"})
	}
	return ref, nil
}

// parseSpecRef parses a spec archive id; why says what is wrong with it
// ("" when nothing is).
func parseSpecRef(id string) (ref SpecRef, why string) {
	rest, ok := strings.CutPrefix(id, "spec:")
	if !ok {
		return ref, "it does not start with spec:"
	}
	head, item, ok := strings.Cut(rest, "/")
	if !ok {
		return ref, "no /<item> part"
	}
	if ref.SpecID, ref.Version, why = parseSpecVersion(head); why != "" {
		return ref, why
	}
	return ref, ref.parseItem(item)
}

// parseSpecVersion parses "<spec_id>@<version>" (the last '@' splits; the
// version is a positive integer); why says what is wrong.
func parseSpecVersion(head string) (specID string, version int64, why string) {
	at := strings.LastIndexByte(head, '@')
	if at <= 0 {
		return "", 0, "no <spec_id>@<version>"
	}
	v, err := strconv.ParseInt(head[at+1:], 10, 64)
	if err != nil || v < 1 {
		return "", 0, "the version is not a positive integer"
	}
	return head[:at], v, ""
}

// parseItem parses "<kind>:<ref>" into r (node, subtree or journal); it
// returns what is wrong, "" when nothing is.
func (r *SpecRef) parseItem(item string) string {
	kind, value, ok := strings.Cut(item, ":")
	if !ok || value == "" {
		return "the item is not <kind>:<id>"
	}
	r.Kind, r.Ref = kind, value
	switch kind {
	case "node", "subtree":
		return ""
	case "journal":
		return r.parseJournal(value)
	}
	return "unknown item kind " + strconv.Quote(kind)
}

// parseJournal parses a journal item's "<seq>" (one entry, Single, as
// journal list drops them) or "<a>-<b>" with a ≤ b into r.From and r.To;
// it returns what is wrong, "" when nothing is.
func (r *SpecRef) parseJournal(value string) string {
	a, b, ok := strings.Cut(value, "-")
	if !ok {
		b, r.Single = a, true
	}
	from, err1 := strconv.ParseUint(a, 10, 64)
	to, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil || from > to {
		return "the journal item is not <seq> or a range <a>-<b> with a ≤ b"
	}
	r.From, r.To = from, to
	return ""
}

// SpecItemResult is archive-get's answer for a spec archive id (source
// "spec_store"): the item at that version with its RFC 8785 hash. Over the
// token budget, content is null and parts lists the archive ids of its
// parts (their hashes are in meta.content_archive_hashes).
type SpecItemResult struct {
	ArchiveID    string   `json:"archive_id"`
	SpecID       string   `json:"spec_id"`
	Version      int64    `json:"version"`
	Item         string   `json:"item"`
	Hash         string   `json:"hash"`
	Verified     bool     `json:"verified"`
	HashChecked  bool     `json:"hash_checked"`
	Content      any      `json:"content"`
	Source       string   `json:"source"`
	ExpectedHash string   `json:"expected_hash,omitempty"`
	Parts        []string `json:"parts,omitempty"`
}

// SpecItemRead is a served spec item: the answer, its size in tokens and,
// when that is over the budget and the item splits, its parts
// ({archive id: hash}; Result.Content is then nil and Result.Parts their
// ids).
type SpecItemRead struct {
	Result SpecItemResult
	Tokens int
	Parts  map[string]string
}

// Get serves a spec archive id: a node, a subtree {id: node} (specs.Subtree,
// the one subtree walk), one journal entry (journal:<seq>) or a journal
// range oldest first, hashed with Hash. Over budget-slack tokens (slack:
// what the answer needs besides the content), a subtree or a journal range
// is answered by reference: the archive ids of its parts (SplitItem). Errors:
// INVALID_FORMAT (the id), UNAVAILABLE, ARCHIVE_NOT_FOUND with spec get as
// the recovery (unknown spec, pruned version, absent node, empty range),
// the stores' errors.
func (s SpecItems) Get(ctx context.Context, archiveID, expectedHash string, budget, slack int) (SpecItemRead, error) {
	ref, err := ParseSpecArchiveID(archiveID)
	if err != nil {
		return SpecItemRead{}, err
	}
	content, err := s.item(ctx, ref, archiveID)
	if err != nil {
		return SpecItemRead{}, err
	}
	hash, err := s.Hash(content)
	if err != nil {
		return SpecItemRead{}, err
	}
	read := SpecItemRead{Tokens: s.Tokens(content), Result: SpecItemResult{ArchiveID: archiveID, SpecID: ref.SpecID, Version: ref.Version,
		Item: ref.Item(), Hash: hash, Verified: expectedHash != "" && expectedHash == hash, HashChecked: expectedHash != "",
		Content: content, Source: "spec_store", ExpectedHash: expectedHash}}
	if read.Tokens > budget-slack {
		parts, err := s.SplitItem(ref, content, budget)
		if err != nil {
			return SpecItemRead{}, err
		}
		if len(parts) > 0 {
			read.Parts = parts
			read.Result.Content, read.Result.Parts = nil, slices.Sorted(maps.Keys(parts))
		}
	}
	return read, nil
}

// item reads the item ref names from the stores at its version: a node
// (*specs.Node), a subtree (map[string]*specs.Node), one journal entry or
// a journal range ([]specs.JournalEntry, oldest first). Errors:
// UNAVAILABLE without the store the item needs, ARCHIVE_NOT_FOUND for an
// unknown spec or version or an absent item, the stores' others.
func (s SpecItems) item(ctx context.Context, ref SpecRef, archiveID string) (any, error) {
	if s.Specs == nil {
		return nil, core.NewError(errcode.Unavailable, "This server has no spec store configured.", nil)
	}
	var content any
	missing := ""
	var err error
	switch ref.Kind {
	case "node", "subtree":
		content, missing, err = s.nodeItem(ctx, ref)
	case "journal":
		content, missing, err = s.journalItem(ctx, ref)
	}
	if err != nil {
		if c := core.CodeOf(err); c != errcode.SpecNotFound && c != errcode.VersionNotFound {
			return nil, err
		}
		missing = messageOf(err)
	}
	if missing != "" {
		return nil, core.NewError(errcode.ArchiveNotFound, "Nothing can be served under "+archiveID+": "+strings.TrimSuffix(missing, ".")+".",
			map[string]any{"field": "archive_id", "received": archiveID}).
			WithRemediation("Re-read the spec (spec get) for current content and fresh archive ids.")
	}
	return content, nil
}

// nodeItem reads a node or subtree item at its version; missing says why
// there is none when the node did not exist then.
func (s SpecItems) nodeItem(ctx context.Context, ref SpecRef) (content any, missing string, err error) {
	err = s.Specs.ReadVersion(ctx, ref.SpecID, ref.Version, func(vv specs.VersionView) error {
		switch n := vv.NodeAt(ref.Ref); {
		case n == nil:
			missing = fmt.Sprintf("node %s did not exist at version %d", ref.Ref, ref.Version)
		case ref.Kind == "node":
			content = n.Clone()
		default:
			content = specs.Subtree(func(id string) *specs.Node { return vv.NodeAt(id).Clone() }, ref.Ref)
		}
		return nil
	})
	return content, missing, err
}

// journalItem reads a journal item: its one entry (Single) or its range;
// missing says why there is none when the range is empty. Errors:
// UNAVAILABLE without a journal, the journal's.
func (s SpecItems) journalItem(ctx context.Context, ref SpecRef) (content any, missing string, err error) {
	if s.Journal == nil {
		return nil, "", core.NewError(errcode.Unavailable, "This server has no research store configured.", nil)
	}
	entries, err := s.Journal.JournalRange(ctx, ref.SpecID, ref.From, ref.To)
	switch {
	case err != nil:
		return nil, "", err
	case len(entries) == 0 && ref.Single:
		return nil, fmt.Sprintf("the journal has no entry %d", ref.From), nil
	case len(entries) == 0:
		return nil, fmt.Sprintf("the journal has no entries %d-%d", ref.From, ref.To), nil
	case ref.Single:
		return entries[0], "", nil
	}
	return entries, "", nil
}

// SplitItem splits an item over the budget into parts, each named by its
// archive id and hashed as Get serves it: a subtree into its root node and
// its children's subtrees, a journal range into consecutive ranges of at
// most half the budget each. A single node or entry is not split (nil).
func (s SpecItems) SplitItem(ref SpecRef, content any, budget int) (map[string]string, error) {
	switch c := content.(type) {
	case map[string]*specs.Node:
		return s.splitSubtree(ref, c)
	case []specs.JournalEntry:
		return s.splitJournal(ref, c, budget)
	}
	return nil, nil
}

// partSet collects an item's parts: archive id → hash.
type partSet struct {
	items SpecItems
	ref   SpecRef
	parts map[string]string
}

// add hashes v, the part item of p's spec version, and records it.
// Errors: the hash's.
func (p partSet) add(item string, v any) error {
	h, err := p.items.Hash(v)
	if err == nil {
		p.parts[p.items.ArchiveID(p.ref.SpecID, p.ref.Version, item)] = h
	}
	return err
}

// addJournal adds the journal range chunk (not empty) as a part.
func (p partSet) addJournal(chunk []specs.JournalEntry) error {
	return p.add(fmt.Sprintf("journal:%d-%d", chunk[0].Seq, chunk[len(chunk)-1].Seq), chunk)
}

// splitSubtree splits a subtree into its root node and the subtrees of
// its children that are in it; nil when the root is not in it.
func (s SpecItems) splitSubtree(ref SpecRef, c map[string]*specs.Node) (map[string]string, error) {
	root := c[ref.Ref]
	if root == nil {
		return nil, nil
	}
	p := partSet{items: s, ref: ref, parts: map[string]string{}}
	if err := p.add("node:"+ref.Ref, root); err != nil {
		return nil, err
	}
	for _, child := range root.Children.All() {
		if c[child] == nil {
			continue
		}
		if err := p.add("subtree:"+child, specs.Subtree(specs.NodeIn(c), child)); err != nil {
			return nil, err
		}
	}
	return p.parts, nil
}

// splitJournal splits a journal range of two or more entries into
// consecutive ranges of at most max(budget/2, 1) tokens each (an entry
// over that is a range of its own); nil for fewer entries.
func (s SpecItems) splitJournal(ref SpecRef, c []specs.JournalEntry, budget int) (map[string]string, error) {
	if len(c) < 2 {
		return nil, nil
	}
	p := partSet{items: s, ref: ref, parts: map[string]string{}}
	limit := max(budget/2, 1)
	start, size := 0, 0
	for i, e := range c {
		t := s.Tokens(e)
		if size > 0 && size+t > limit {
			if err := p.addJournal(c[start:i]); err != nil {
				return nil, err
			}
			start, size = i, 0
		}
		size += t
	}
	if err := p.addJournal(c[start:]); err != nil {
		return nil, err
	}
	return p.parts, nil
}
