package tools

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/degrade"
)

// ArchiveID names a stored spec item pinned to a version, so that
// research(action="archive-get") can serve it from the store (contract §6).
func ArchiveID(specID string, version int64, item string) string {
	return "spec:" + specID + "@" + strconv.FormatInt(version, 10) + "/" + item
}

// hasher names and hashes the items degrade.Fit drops: archive ids pinned
// to the document's version, hashes remembered in memo.
func (h *hashMemo) hasher(specID string, version int64) degrade.Hasher {
	return func(item string, v any) (string, string, error) {
		id := ArchiveID(specID, version, item)
		if hash, ok := h.get(id); ok {
			return id, hash, nil
		}
		hash, err := mcptool.ContentHash(v)
		if err != nil {
			return "", "", err
		}
		h.put(id, hash)
		return id, hash, nil
	}
}

// fidelityMeta reports a degraded answer: content_fidelity, the dropped ids,
// their archive hashes and a CONTENT_TRUNCATED warning.
func fidelityMeta(b degrade.Result, budget int) []core.MetaOption {
	if b.Fidelity == core.FidelityFull {
		return nil
	}
	msg := fmt.Sprintf("The answer was reduced to %s fidelity to fit %d tokens; %d items were left out (fetch them with research archive-get).", b.Fidelity, budget, len(b.Dropped))
	ctx := map[string]any{"dropped_count": len(b.Dropped), "total_count": b.Total, "reason": "token_budget", "budget_tokens": budget}
	if len(b.Archive) == 0 && len(b.Dropped) > 0 {
		msg = fmt.Sprintf("The answer was reduced to %s fidelity to fit %d tokens; %d items were left out, and their archive ids did not fit either: page through them with the calls in data.next_calls, or read again with a larger max_tokens.", b.Fidelity, budget, len(b.Dropped))
		ctx["archive_ids_omitted"] = true
	}
	return []core.MetaOption{
		core.WithFidelity(b.Fidelity, b.Dropped, b.Archive),
		core.WithWarning(core.WarnContentTruncated, core.SeverityWarning, msg, ctx),
	}
}

// hashMemo remembers archive hashes by archive id. An archive id pins a spec
// version, whose content never changes, so an entry never goes stale; the
// memo only saves re-hashing a big spec on every read. Safe for concurrent
// use; a nil memo remembers nothing.
type hashMemo struct {
	mu sync.Mutex
	m  map[string]string
}

// maxMemoHashes bounds the memo; past it, it starts over.
const maxMemoHashes = 20_000

func (h *hashMemo) get(id string) (string, bool) {
	if h == nil {
		return "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[id]
	return v, ok
}

func (h *hashMemo) put(id, hash string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxMemoHashes {
		h.m = map[string]string{}
	}
	h.m[id] = hash
}

// docDegrader is spec get's Degrader: budgetDocument fits the document's
// data into a data budget; when the whole envelope (meta included: dropped
// ids, archive hashes, the warning) is still over the answer budget, it
// runs again with the data budget lowered by the overshoot, until the
// answer fits or reference_only, the smallest level, does not.
type docDegrader struct {
	doc        specs.Document
	memo       *hashMemo
	dataBudget int
	// bare answers with the document itself rather than {spec, version}
	// (the spec resource).
	bare bool
}

// maxDocFitRounds bounds the re-runs of budgetDocument.
const maxDocFitRounds = 8

// SpecGetAnswer is spec get's answer: the document at the fidelity that
// fits (a specs.Document, degrade.Summary or degrade.Reference), its
// version, and at reference_only the calls that page through the rest.
type SpecGetAnswer struct {
	Spec      any                `json:"spec"`
	Version   int64              `json:"version"`
	NextCalls []degrade.NextCall `json:"next_calls,omitempty"`
}

// fit runs degrade.Fit and shapes its answer (bare: the document itself
// with next_calls beside its fields).
func (g *docDegrader) fit(budget int) (any, degrade.Result, error) {
	b, err := degrade.Fit(g.doc, budget, g.memo.hasher(g.doc.SpecID, g.doc.Version))
	if err != nil {
		return nil, b, err
	}
	if !g.bare {
		return SpecGetAnswer{Spec: b.Answer.Spec, Version: g.doc.Version, NextCalls: b.Answer.NextCalls}, b, nil
	}
	m := mcptool.StructMap(b.Answer.Spec)
	if b.Answer.NextCalls != nil {
		m["next_calls"] = b.Answer.NextCalls
	}
	return m, b, nil
}

func (g *docDegrader) Degrade(f mcptool.Fit) (any, []core.MetaOption, bool, error) {
	budget := min(g.dataBudget, f.Budget)
	for range maxDocFitRounds {
		data, b, err := g.fit(budget)
		if err != nil {
			return nil, nil, false, err
		}
		meta := fidelityMeta(b, f.Budget)
		t := f.Measure(data, meta)
		if t <= f.Budget {
			return data, meta, true, nil
		}
		if b.Fidelity == core.FidelityReferenceOnly || budget <= 1 {
			// The smallest level does not fit with its archive hashes:
			// name the dropped items without them (the data's next_calls
			// still page through the rest).
			b.Archive = nil
			meta = fidelityMeta(b, f.Budget)
			if f.Measure(data, meta) <= f.Budget {
				return data, meta, true, nil
			}
			return nil, nil, false, nil
		}
		budget = max(1, budget-(t-f.Budget)-f.Budget/100-8)
	}
	return nil, nil, false, nil
}
