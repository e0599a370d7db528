package tools

import (
	"context"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/tools/degrade"
)

// Resource URIs.
const (
	resourceSpecs       = "specd://specs"
	resourceSpec        = "specd://specs/{spec_id}"
	resourceSpecJournal = "specd://specs/{spec_id}/journal"
)

// maxResourceSpecs bounds the specd://specs listing (spec list pages further).
const maxResourceSpecs = 1000

// installResources publishes the spec resources: the listing, each spec's
// document and each spec's journal (newest first, up to 1,000 entries).
// Resources carry plain JSON (not envelopes) within the token budget
// (resourceContents: over it, degraded with a "_fidelity" report); a
// missing spec is the protocol's resource-not-found error.
func installResources(s *server.MCPServer, d *Deps) {
	memo := &degrade.HashMemo{}
	s.AddResource(mcp.NewResource(resourceSpecs, "specs",
		mcp.WithResourceDescription("Every spec (id, title, folder, status, progress, version), in spec id order; the first 1,000."),
		mcp.WithMIMEType("application/json")), d.readSpecsResource)
	// The journal template goes first so it wins over the document template.
	s.AddResourceTemplate(mcp.NewResourceTemplate(resourceSpecJournal, "spec journal",
		mcp.WithTemplateDescription("A spec's journal, newest first (up to 1,000 entries; journal list pages further)."),
		mcp.WithTemplateMIMEType("application/json")), d.readJournalResource)
	s.AddResourceTemplate(mcp.NewResourceTemplate(resourceSpec, "spec",
		mcp.WithTemplateDescription("One spec's document (foundry-compatible JSON)."),
		mcp.WithTemplateMIMEType("application/json")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return d.readSpecResource(ctx, req, memo)
		})
}

// readSpecsResource answers specd://specs; over the token budget its last
// rows go (spec list continues after the last one kept).
func (d *Deps) readSpecsResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	rows, next, err := d.Specs.ListSpecs(ctx, "all", "", maxResourceSpecs)
	if err != nil {
		return nil, resourceError(err)
	}
	data := SpecsResource{Specs: rows, Truncated: next != ""}
	fp := core.Fingerprint("spec", "list", "", "all")
	deg := &mcptool.ListAnswer[specs.RepoSummary]{Items: rows, PageSize: len(rows),
		Answer: func(k int) any { return SpecsResource{Specs: rows[:k], Truncated: data.Truncated} },
		ID:     func(i int) string { return "item:" + rows[i].SpecID },
		Next:   func(kept int) string { return core.EncodeCursor(rows[kept-1].SpecID, fp) },
		Continue: func(c string) (string, map[string]any) {
			return toSpecList.Tool, toSpecList.Args(specListArgs{pageArgs: pageArgs{Cursor: &c}, Status: "all"})
		}}
	return mcptool.ResourceContents(req.Params.URI, d.TokenBudget, data, deg, `spec(action="list")`)
}

// readJournalResource answers specd://specs/{spec_id}/journal: the newest
// entries first; over the token budget the oldest of them go (journal list
// continues after the last one kept).
func (d *Deps) readJournalResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id := mcptool.TemplateArg(req, "spec_id")
	if err := specs.CheckID("spec_id", id); err != nil {
		return nil, resourceError(err)
	}
	var entries []specs.JournalEntry
	var version int64
	err := d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		var err error
		version = sp.Header.Version
		entries, _, err = j.Entries(0, core.PageJournal.Max, nil)
		return err
	})
	if err != nil {
		return nil, resourceError(err)
	}
	data := JournalResource{SpecID: id, Entries: entries}
	fp := core.Fingerprint("journal", "list", id, "", "")
	deg := journalPage(entries, id, version, core.PageJournal.Max, func(seq uint64) string {
		return core.EncodeCursor(strconv.FormatUint(seq, 10), fp)
	}, nil, func(k int) any { return JournalResource{SpecID: id, Entries: entries[:k]} })
	return mcptool.ResourceContents(req.Params.URI, d.TokenBudget, data, deg, `journal(action="list")`)
}

// readSpecResource answers specd://specs/{spec_id}: the document, degraded
// like spec get within the token budget.
func (d *Deps) readSpecResource(ctx context.Context, req mcp.ReadResourceRequest, memo *degrade.HashMemo) ([]mcp.ResourceContents, error) {
	id := mcptool.TemplateArg(req, "spec_id")
	if err := specs.CheckID("spec_id", id); err != nil {
		return nil, resourceError(err)
	}
	var doc specs.Document
	err := d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
		doc = sp.Document()
		return nil
	})
	if err != nil {
		return nil, resourceError(err)
	}
	deg := &docDegrader{doc: doc, memo: memo, dataBudget: d.TokenBudget, bare: true}
	return mcptool.ResourceContents(req.Params.URI, d.TokenBudget, doc, deg, `spec(action="get")`)
}

// SpecsResource is the specd://specs resource: the first specs in id
// order, and whether there are more (spec list pages further).
type SpecsResource struct {
	Specs     []specs.RepoSummary `json:"specs"`
	Truncated bool                `json:"truncated"`
}

// JournalResource is a specd://specs/{spec_id}/journal resource: the
// newest entries first.
type JournalResource struct {
	SpecID  string               `json:"spec_id"`
	Entries []specs.JournalEntry `json:"entries"`
}

// resourceError is mcptool.ResourceError with SPEC_NOT_FOUND as the
// protocol's not-found error.
func resourceError(err error) error { return mcptool.ResourceError(err, errcode.SpecNotFound) }

// specCompletion completes spec_id in the resource templates by prefix (then
// by substring), up to 100 values.
type specCompletion struct{ d *Deps }

func (c specCompletion) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if arg.Name != "spec_id" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	ids, err := c.d.Specs.SpecIDs(ctx)
	if err != nil {
		return nil, resourceError(err)
	}
	return mcptool.CompleteByPrefix(ids, arg.Value), nil
}
