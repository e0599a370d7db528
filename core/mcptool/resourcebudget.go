package mcptool

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Resources answer with plain JSON documents, not envelopes, so they have
// no meta; the token budget still applies to the whole document. A document
// over the budget is degraded by its Degrader like a tool answer and says so
// inside itself, in a "_fidelity" object:
//
//	{content_fidelity, content_fidelity_schema_version, dropped_content_ids,
//	 content_archive_hashes?, warnings, warning_details, cursor?}
//
// (cursor continues a list through the matching tool call, named in the
// CONTENT_TRUNCATED warning's next_call). A document that fits carries no
// "_fidelity" key. One that cannot be degraded into the budget is refused
// with an error naming the tool call that pages through it.

// fidelityKey is the key of the degradation report in a resource document.
const fidelityKey = "_fidelity"

// ResourceContents encodes v as the resource's JSON within budget tokens
// (0: core.DefaultTokenBudget), degrading it with deg when it is over (see
// above). With no deg, or when even the degraded document is over, the
// error (a plain error: resource reads have no envelope) starts with
// PAYLOAD_TOO_LARGE and names instead, the tool call that pages through it.
// A resource read makes no per-caller flag decision, so its Degrader is
// given Fit.ArchiveServed true.
func ResourceContents(uri string, budget int, v any, deg Degrader, instead string) ([]mcp.ResourceContents, error) {
	if budget <= 0 {
		budget = core.DefaultTokenBudget
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if tokensOfBytes(len(b)) > budget {
		if b, err = degradeDocument(deg, budget); err != nil {
			return nil, err
		}
		if b == nil || tokensOfBytes(len(b)) > budget {
			return nil, fmt.Errorf("%s: the resource is over the %d-token budget and cannot be shortened; use %s instead", errcode.PayloadTooLarge, budget, instead)
		}
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

// degradeDocument is the JSON of the document deg degrades to fit budget,
// with its "_fidelity" report; nil when there is no deg or it cannot fit.
func degradeDocument(deg Degrader, budget int) ([]byte, error) {
	if deg == nil {
		return nil, nil
	}
	measure := func(data any, meta []core.MetaOption) int {
		enc, err := json.Marshal(withFidelityMarker(data, meta))
		if err != nil {
			return budget + 1
		}
		return tokensOfBytes(len(enc))
	}
	data, meta, ok, err := deg.Degrade(Fit{Budget: budget, Measure: measure, ArchiveServed: true})
	if err != nil || !ok {
		return nil, err
	}
	return json.Marshal(withFidelityMarker(data, meta))
}

// withFidelityMarker returns data (an object) with the "_fidelity" report
// of meta added.
func withFidelityMarker(data any, meta []core.MetaOption) map[string]any {
	var m core.Meta
	for _, o := range meta {
		o(&m)
	}
	marker := map[string]any{
		"content_fidelity": m.ContentFidelity, "content_fidelity_schema_version": m.ContentFidelitySchemaVersion,
		"dropped_content_ids": nonNilStrings(m.DroppedContentIDs), "warnings": nonNilStrings(m.Warnings), "warning_details": m.WarningDetails,
	}
	if len(m.ContentArchiveHashes) > 0 {
		marker["content_archive_hashes"] = m.ContentArchiveHashes
	}
	if m.Pagination != nil && m.Pagination.Cursor != nil {
		marker["cursor"] = *m.Pagination.Cursor
	}
	out, ok := data.(map[string]any)
	if ok {
		out = maps.Clone(out)
	} else {
		out = StructMap(data)
	}
	out[fidelityKey] = marker
	return out
}
