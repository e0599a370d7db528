package tools

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/research"
	"github.com/specd/specd/specs"
)

// The archive actions. Research content lives in the store's
// content-addressed archive; spec items dropped from budgeted answers are
// not copied there (a read never writes) but pinned by archive ids
// "spec:<spec_id>@<version>/<item>" and served from the store at that
// version (contract §6).

// archiveSweeper runs the retention sweep lazily: at most once per
// archiveSweepEvery, after a successful write to the archive (archive-put,
// or digest-put with a source), removing items archived more than
// Deps.ArchiveRetention ago. Retention 0 keeps everything.
type archiveSweeper struct {
	mu   sync.Mutex
	last time.Time
}

// maybe sweeps if retention applies and the last sweep is old enough; it
// returns how many items went. Sweep failures are not the caller's: the
// next write retries after the interval.
func (s *archiveSweeper) maybe(ctx context.Context, d *Deps, st ResearchStore) int {
	if d.ArchiveRetention <= 0 {
		return 0
	}
	now := researchNow(d)
	s.mu.Lock()
	if !s.last.IsZero() && now.Sub(s.last) < archiveSweepEvery && !now.Before(s.last) {
		s.mu.Unlock()
		return 0
	}
	s.last = now
	s.mu.Unlock()
	n, err := st.ArchiveSweep(ctx, now.Add(-d.ArchiveRetention))
	if err != nil {
		return 0
	}
	return n
}

func archivePut(ctx context.Context, d *Deps, r *Request, sweeper *archiveSweeper) Result {
	st, err := researchStore(d)
	if err != nil {
		return Fail(err)
	}
	contentID := r.Args.String("content_id")
	if r.Args.Has("content_id") {
		if err := checkResearchID("content_id", contentID); err != nil {
			return Fail(err)
		}
	}
	now := researchNow(d)
	m, created, err := st.ArchivePut(ctx, []byte(r.Args.String("content")), research.ArchiveMeta{
		ContentID: contentID, ItemType: r.Args.String("item_type"), ArchivedAt: now.Format(time.RFC3339)})
	if err != nil {
		return Fail(err)
	}
	data := ArchivePutAnswer{Hash: m.Hash, Created: created, SizeBytes: m.SizeBytes, ContentID: m.ContentID,
		ItemType: m.ItemType, ArchivedAt: m.ArchivedAt, ExpiredRemoved: sweeper.maybe(ctx, d, st)}
	if d.ArchiveRetention > 0 {
		exp := now.Add(d.ArchiveRetention).Format(time.RFC3339)
		data.ExpiresAt = &exp
	}
	return OK(data)
}

// ArchivePutAnswer is archive-put's answer. expires_at is null when
// retention keeps content forever; expired_removed is present only when
// the put's retention sweep removed something.
type ArchivePutAnswer struct {
	Hash           string  `json:"hash"`
	Created        bool    `json:"created"`
	SizeBytes      int     `json:"size_bytes"`
	ContentID      string  `json:"content_id"`
	ItemType       string  `json:"item_type"`
	ArchivedAt     string  `json:"archived_at"`
	ExpiresAt      *string `json:"expires_at"`
	ExpiredRemoved int     `json:"expired_removed,omitempty"`
}

func archiveGet(ctx context.Context, d *Deps, r *Request, budget int) Result {
	given := givenArgs(r, "hash", "content_id", "archive_id")
	switch len(given) {
	case 0:
		return Fail(core.NewError(errcode.MissingRequired, "research action \"archive-get\" needs hash, content_id or archive_id.",
			map[string]any{"field": "hash", "action": "archive-get", "one_of": []string{"hash", "content_id", "archive_id"}}))
	case 1:
	default:
		return Fail(core.NewError(errcode.InvalidFormat, "Give one of hash, content_id and archive_id, not "+strings.Join(given, " and ")+".",
			map[string]any{"field": given[1], "constraint": "one of hash, content_id, archive_id", "received": given}))
	}
	hash, contentID, archiveID := r.Args.String("hash"), r.Args.String("content_id"), r.Args.String("archive_id")
	if strings.HasPrefix(archiveID, "spec:") {
		return archiveGetSpec(ctx, d, r, archiveID, budget)
	}
	if archiveID != "" {
		contentID = archiveID
	}
	st, err := researchStore(d)
	if err != nil {
		return Fail(err)
	}
	content, m, err := st.ArchiveGet(ctx, hash, contentID)
	if err != nil {
		if e := core.AsError(err); e.Code == errcode.ArchiveNotFound {
			rec := map[string]any{"action": "digest-list"}
			if contentID != "" {
				rec["source_id"] = contentID
			}
			return Fail(e.WithRemediation("Nothing is archived under that id (unknown, or removed by retention): list the stored digests, or archive the content again (research archive-put, or digest-put with the source text).").
				WithRecovery("research", rec, nil))
		}
		return Fail(err)
	}
	// The store verified the bytes against the key they are stored under.
	key := research.ArchiveKey(content)
	expected := r.Args.String("expected_hash")
	verified := expected == "" || expected == key
	build := func(budget int) (ArchiveGetAnswer, []core.MetaOption, error) {
		window, meta, err := archiveWindow(r, string(content), budget)
		if err != nil {
			return ArchiveGetAnswer{}, nil, err
		}
		if expected != "" && !verified {
			meta = append(meta, hashMismatch(expected, key))
		}
		return ArchiveGetAnswer{Hash: key, ContentID: m.ContentID, ItemType: m.ItemType, ArchivedAt: m.ArchivedAt,
			SizeBytes: len(content), Verified: verified, HashChecked: true, Source: "archive", ExpectedHash: expected,
			ArchiveWindow: window}, meta, nil
	}
	data, meta, err := build(budget)
	if err != nil {
		return Fail(err)
	}
	res := OK(data, meta...)
	// The window is cut by the text's bytes; JSON escapes (quotes, control
	// characters, <, >, &) can make its encoding larger. Over the token
	// budget, cut the window shorter in proportion to the overshoot.
	res.Degrade = DegradeFunc(func(f Fit) (any, []core.MetaOption, bool, error) {
		b := budget
		for range 6 {
			data, meta, err := build(b)
			if err != nil {
				return nil, nil, false, err
			}
			t := f.Measure(data, meta)
			if t <= f.Budget {
				return data, meta, true, nil
			}
			if b <= archiveAnswerSlack/4 {
				break
			}
			b = max(archiveAnswerSlack/4, b*f.Budget/t*9/10)
		}
		return nil, nil, false, nil
	})
	return res
}

func hashMismatch(expected, got string) core.MetaOption {
	return core.WithWarning(warnHashMismatch, core.SeverityWarning,
		"The content's hash differs from expected_hash: it is not the content that hash named.",
		map[string]any{"expected_hash": expected, "hash": got})
}

// ArchiveGetAnswer is archive-get's answer for archived content (source
// "archive"): the item's metadata, whether its hash matched expected_hash
// (present only when given), and the window of its text. Spec archive ids
// are answered with ArchiveSpecItemAnswer instead.
type ArchiveGetAnswer struct {
	Hash         string `json:"hash"`
	ContentID    string `json:"content_id"`
	ItemType     string `json:"item_type"`
	ArchivedAt   string `json:"archived_at"`
	SizeBytes    int    `json:"size_bytes"`
	Verified     bool   `json:"verified"`
	HashChecked  bool   `json:"hash_checked"`
	Source       string `json:"source"`
	ExpectedHash string `json:"expected_hash,omitempty"`
	ArchiveWindow
}

// ArchiveWindow is the part of archived text an archive-get returns:
// content from offset (characters), returned_chars of total_chars;
// next_offset (null at the end) continues it.
type ArchiveWindow struct {
	Content       string `json:"content"`
	Offset        int    `json:"offset"`
	ReturnedChars int    `json:"returned_chars"`
	TotalChars    int    `json:"total_chars"`
	NextOffset    *int   `json:"next_offset"`
	Truncated     bool   `json:"truncated"`
}

// archiveWindow cuts text to the call's window: from offset (characters),
// at most max_chars characters and at most what fits the token budget. The
// hash always covers the whole content.
func archiveWindow(r *Request, text string, budget int) (ArchiveWindow, []core.MetaOption, error) {
	total := utf8.RuneCountInString(text)
	offset := r.Args.IntOr("offset", 0)
	if offset > total {
		return ArchiveWindow{}, nil, core.NewError(errcode.InvalidFormat, fmt.Sprintf("offset %d is past the end of the content (%d characters).", offset, total),
			map[string]any{"field": "offset", "constraint": fmt.Sprintf("≤ %d", total), "received": offset})
	}
	maxChars := r.Args.IntOr("max_chars", total)
	maxBytes := max(budget*4-archiveAnswerSlack, 1024)
	start := 0
	for i := 0; i < offset; i++ {
		_, size := utf8.DecodeRuneInString(text[start:])
		start += size
	}
	end, n := start, 0
	for end < len(text) && n < maxChars {
		_, size := utf8.DecodeRuneInString(text[end:])
		if end+size-start > maxBytes {
			break
		}
		end += size
		n++
	}
	var next *int
	var meta []core.MetaOption
	if offset+n < total {
		next = new(offset + n)
		if n < maxChars { // cut by the budget, not by the caller's max_chars
			meta = append(meta,
				core.WithFidelity(core.FidelityPartial, nil, nil),
				core.WithWarning(core.WarnContentTruncated, core.SeverityWarning,
					fmt.Sprintf("The content was cut to %d of %d characters to fit %d tokens; call again with offset %d for the rest.", n, total, budget, offset+n),
					map[string]any{"dropped_count": total - offset - n, "total_count": total, "reason": "token_budget", "budget_tokens": budget}))
		}
	}
	return ArchiveWindow{Content: text[start:end], Offset: offset, ReturnedChars: n, TotalChars: total,
		NextOffset: next, Truncated: next != nil}, meta, nil
}

// specArchiveRef is a parsed "spec:<spec_id>@<version>/<kind>:<ref>".
type specArchiveRef struct {
	SpecID   string
	Version  int64
	Kind     string // node | subtree | journal
	Ref      string // node id, or "a-b" or "seq" for journal
	From, To uint64 // journal range
	Single   bool   // journal:<seq>: one entry, served as the entry itself
}

// parseSpecArchiveID parses the archive ids tools.ArchiveID makes.
func parseSpecArchiveID(id string) (specArchiveRef, error) {
	bad := func(why string) (specArchiveRef, error) {
		return specArchiveRef{}, core.NewError(errcode.InvalidFormat, "archive_id is not a spec archive id: "+why+".",
			map[string]any{"field": "archive_id", "received": id,
				"constraint": "spec:<spec_id>@<version>/node:<id> | subtree:<id> | journal:<seq> | journal:<a>-<b>"})
	}
	rest, ok := strings.CutPrefix(id, "spec:")
	if !ok {
		return bad("it does not start with spec:")
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return bad("no /<item> part")
	}
	head, item := rest[:slash], rest[slash+1:]
	at := strings.LastIndexByte(head, '@')
	if at <= 0 {
		return bad("no <spec_id>@<version>")
	}
	var ref specArchiveRef
	ref.SpecID = head[:at]
	v, err := strconv.ParseInt(head[at+1:], 10, 64)
	if err != nil || v < 1 {
		return bad("the version is not a positive integer")
	}
	ref.Version = v
	kind, value, ok := strings.Cut(item, ":")
	if !ok || value == "" {
		return bad("the item is not <kind>:<id>")
	}
	ref.Kind, ref.Ref = kind, value
	switch kind {
	case "node", "subtree":
	case "journal":
		a, b, ok := strings.Cut(value, "-")
		if !ok { // journal:<seq>, one entry (as journal list drops them)
			b, ref.Single = a, true
		}
		from, err1 := strconv.ParseUint(a, 10, 64)
		to, err2 := strconv.ParseUint(b, 10, 64)
		if err1 != nil || err2 != nil || from > to {
			return bad("the journal item is not <seq> or a range <a>-<b> with a ≤ b")
		}
		ref.From, ref.To = from, to
	default:
		return bad("unknown item kind " + strconv.Quote(kind))
	}
	return ref, nil
}

// archiveGetSpec serves a spec archive id from the store at its version
// and hashes it exactly as the budgeted answer did (RFC 8785 JSON): a node,
// a subtree {id: node}, one journal entry (journal:<seq>), or a journal
// range oldest first. The hash always
// covers the whole item; when the item does not fit the token budget, the
// answer carries no content but the archive ids of its parts (see
// splitSpecItem) in meta.content_archive_hashes, at reference_only fidelity.
func archiveGetSpec(ctx context.Context, d *Deps, r *Request, archiveID string, budget int) Result {
	ref, err := parseSpecArchiveID(archiveID)
	if err != nil {
		return Fail(err)
	}
	content, err := specArchiveItem(ctx, d, ref, archiveID)
	if err != nil {
		return Fail(err)
	}
	hash, err := ContentHash(content)
	if err != nil {
		return Fail(core.Internal(err))
	}
	expected := r.Args.String("expected_hash")
	verified := expected != "" && expected == hash
	var meta []core.MetaOption
	data := ArchiveSpecItemAnswer{ArchiveID: archiveID, SpecID: ref.SpecID, Version: ref.Version, Item: ref.Kind + ":" + ref.Ref,
		Hash: hash, Verified: verified, HashChecked: expected != "", Content: content, Source: "spec_store", ExpectedHash: expected}
	if expected != "" && !verified {
		meta = append(meta, hashMismatch(expected, hash))
	}
	// Over the token budget, a subtree or a journal range is answered by
	// reference: archive ids of smaller parts (the node and its children's
	// subtrees; journal sub-ranges) that archive-get serves in turn.
	if tokens := tokensOf(content); tokens > budget-archiveAnswerSlack/4 {
		parts, err := splitSpecItem(ref, content, budget)
		if err != nil {
			return Fail(core.Internal(err))
		}
		if len(parts) > 0 {
			data.Content, data.Parts = nil, slices.Sorted(maps.Keys(parts))
			meta = append(meta,
				core.WithFidelity(core.FidelityReferenceOnly, []string{ref.Kind + ":" + ref.Ref}, parts),
				core.WithWarning(core.WarnContentTruncated, core.SeverityWarning,
					fmt.Sprintf("The item (%d tokens) exceeds the %d-token budget; fetch its %d parts (meta.content_archive_hashes) with research archive-get.", tokens, budget, len(parts)),
					map[string]any{"dropped_count": 1, "total_count": 1, "reason": "token_budget", "budget_tokens": budget, "parts": len(parts)}))
		}
	}
	return OK(data, meta...)
}

// specArchiveItem reads the item ref names from the store at its version:
// a node (*specs.Node), a subtree (map[string]*specs.Node), one journal
// entry or a journal range ([]specs.JournalEntry, oldest first). An item
// that does not exist (unknown spec, pruned version, absent node, empty
// range) is ARCHIVE_NOT_FOUND with spec get as the recovery; UNAVAILABLE
// without a spec (or, for the journal, research) store.
func specArchiveItem(ctx context.Context, d *Deps, ref specArchiveRef, archiveID string) (any, error) {
	if d.Specs == nil {
		return nil, core.NewError(errcode.Unavailable, "This server has no spec store configured.", nil)
	}
	var content any
	missing := ""
	var err error
	switch ref.Kind {
	case "node", "subtree":
		err = d.Specs.ReadVersion(ctx, ref.SpecID, ref.Version, func(vv specs.VersionView) error {
			if n := vv.NodeAt(ref.Ref); n == nil {
				missing = fmt.Sprintf("node %s did not exist at version %d", ref.Ref, ref.Version)
			} else if ref.Kind == "node" {
				content = n.Clone()
			} else {
				content = specs.Subtree(func(id string) *specs.Node { return vv.NodeAt(id).Clone() }, ref.Ref)
			}
			return nil
		})
	case "journal":
		st, serr := researchStore(d)
		if serr != nil {
			return nil, serr
		}
		var entries []specs.JournalEntry
		entries, err = st.JournalRange(ctx, ref.SpecID, ref.From, ref.To)
		switch {
		case err == nil && len(entries) == 0:
			missing = fmt.Sprintf("the journal has no entries %d-%d", ref.From, ref.To)
			if ref.Single {
				missing = fmt.Sprintf("the journal has no entry %d", ref.From)
			}
		case ref.Single:
			content = entries[0]
		default:
			content = entries
		}
	}
	if err != nil {
		e := core.AsError(specError(err, ref.SpecID))
		if e.Code != errcode.SpecNotFound && e.Code != errcode.VersionNotFound {
			return nil, e
		}
		missing = e.Message
	}
	if missing != "" {
		return nil, core.NewError(errcode.ArchiveNotFound, "Nothing can be served under "+archiveID+": "+strings.TrimSuffix(missing, ".")+".",
			map[string]any{"field": "archive_id", "received": archiveID}).
			WithRemediation("Re-read the spec (spec get) for current content and fresh archive ids.").
			WithRecovery("spec", map[string]any{"action": "get", "spec_id": ref.SpecID}, nil)
	}
	return content, nil
}

// ArchiveSpecItemAnswer is archive-get's answer for a spec archive id
// (source "spec_store"): the item at that version with its RFC 8785 hash.
// Over the token budget, content is null and parts lists the archive ids
// of its parts (their hashes are in meta.content_archive_hashes).
type ArchiveSpecItemAnswer struct {
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

// splitSpecItem splits an item over the budget into parts, each named by
// its archive id and hashed as archive-get serves it: a subtree into its
// root node and its children's subtrees, a journal range into consecutive
// ranges of at most half the budget each. A single node is not split (nil).
func splitSpecItem(ref specArchiveRef, content any, budget int) (map[string]string, error) {
	parts := map[string]string{}
	add := func(item string, v any) error {
		h, err := ContentHash(v)
		if err == nil {
			parts[ArchiveID(ref.SpecID, ref.Version, item)] = h
		}
		return err
	}
	switch c := content.(type) {
	case map[string]*specs.Node:
		root := c[ref.Ref]
		if root == nil {
			return nil, nil
		}
		if err := add("node:"+ref.Ref, root); err != nil {
			return nil, err
		}
		for _, child := range root.Children {
			if c[child] == nil {
				continue
			}
			if err := add("subtree:"+child, specs.Subtree(specs.NodeIn(c), child)); err != nil {
				return nil, err
			}
		}
	case []specs.JournalEntry:
		if len(c) < 2 {
			return nil, nil
		}
		limit := max(budget/2, 1)
		start, size := 0, 0
		flush := func(end int) error {
			chunk := c[start:end]
			start, size = end, 0
			return add(fmt.Sprintf("journal:%d-%d", chunk[0].Seq, chunk[len(chunk)-1].Seq), chunk)
		}
		for i, e := range c {
			t := tokensOf(e)
			if size > 0 && size+t > limit {
				if err := flush(i); err != nil {
					return nil, err
				}
			}
			size += t
		}
		if err := flush(len(c)); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	return parts, nil
}
