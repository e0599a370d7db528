package research

import (
	"context"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Linked digests of research nodes (metadata.digest_ids).

// MaxLinkedDigests bounds how many linked digests a task context includes,
// and MaxLinkedSnippets how many evidence snippets of each.
const (
	MaxLinkedDigests  = 10
	MaxLinkedSnippets = 3
)

// DigestIDsOf reads metadata.digest_ids of a research node: DigestIDs
// ("<source_id>#<query_hash>"), in order, without duplicates; nil when
// there are none or digest_ids is not a list.
func DigestIDsOf(metadata map[string]any) []string {
	raw, _ := metadata["digest_ids"].([]any)
	seen := map[string]bool{}
	var out []string
	for _, v := range raw {
		if s, ok := v.(string); ok && s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// LinkedDigest is what a research node's task context shows of one linked
// digest: found with its content, or found:false with the reason in error
// (and source_id, query_hash when the id parses).
type LinkedDigest struct {
	DigestID  string `json:"digest_id"`
	Found     bool   `json:"found"`
	Error     string `json:"error,omitempty"`
	SourceID  string `json:"source_id,omitempty"`
	QueryHash string `json:"query_hash,omitempty"`
	// The content's fields are present only when found.
	*LinkedDigestContent
}

// LinkedDigestContent is a found linked digest: its summary, key points,
// top evidence snippets (at most MaxLinkedSnippets) with their locators.
type LinkedDigestContent struct {
	Summary          string            `json:"summary"`
	KeyPoints        []string          `json:"key_points"`
	EvidenceSnippets []EvidenceSnippet `json:"evidence_snippets"`
	DigestChars      int               `json:"digest_chars"`
	SourceTextHash   string            `json:"source_text_hash"`
	StoredAt         string            `json:"stored_at"`
}

// LinkedDigests resolves linked digest ids for a research node's task
// context (task prepare): for each of the first MaxLinkedDigests ids, the
// summary, key points and the top evidence snippets with their locators,
// or found:false with the reason (a malformed id, no store, the store's
// error). It never fails, and is never nil. It runs the store's own read
// transactions, so call it after (never inside) a spec read.
func (s Service) LinkedDigests(ctx context.Context, ids []string) []LinkedDigest {
	out := []LinkedDigest{}
	if len(ids) > MaxLinkedDigests {
		ids = ids[:MaxLinkedDigests]
	}
	for _, id := range ids {
		out = append(out, s.linkedDigest(ctx, id))
	}
	return out
}

func (s Service) linkedDigest(ctx context.Context, id string) LinkedDigest {
	item := LinkedDigest{DigestID: id}
	sourceID, queryHash, ok := ParseDigestID(id)
	if !ok {
		item.Error = "not a digest id (<source_id>#<query_hash>)"
		return item
	}
	item.SourceID, item.QueryHash = sourceID, queryHash
	if s.Store == nil {
		item.Error = "no research store"
		return item
	}
	rec, err := s.Store.DigestGet(ctx, sourceID, queryHash)
	if err != nil {
		item.Error = errorSummary(err)
		return item
	}
	b := briefOf(rec.Payload)
	snippets := b.EvidenceSnippets
	if len(snippets) > MaxLinkedSnippets {
		snippets = snippets[:MaxLinkedSnippets]
	}
	if snippets == nil {
		snippets = []EvidenceSnippet{}
	}
	keyPoints := b.KeyPoints
	if keyPoints == nil {
		keyPoints = []string{}
	}
	item.Found = true
	item.LinkedDigestContent = &LinkedDigestContent{Summary: b.Summary, KeyPoints: keyPoints, EvidenceSnippets: snippets,
		DigestChars: b.DigestChars, SourceTextHash: rec.SourceHash, StoredAt: rec.StoredAt}
	return item
}

// errorSummary is "CODE: message" of a coded error, or "internal error"
// for anything else (whose text is never shown).
func errorSummary(err error) string {
	code := core.CodeOf(err)
	if _, ok := errcode.Lookup(code); !ok || code == errcode.Internal {
		return "internal error"
	}
	return code + ": " + messageOf(err)
}
