package tools

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/research"
)

// The research tool (README "Research digests"): research digests
// (DigestPayload v1.0) and the content-addressed archive, which also serves the
// archive ids of budgeted spec answers (README "Big specs and big answers").

const researchDescription = `Use this when you work with research sources: turn a document (text, HTML, pages[] of a PDF, or a workspace file) into a deterministic digest whose evidence snippets cite exact locators (digest-create), check any DigestPayload and every locator against its source (digest-validate: an invalid payload is a successful report listing every violation), store, fetch, list and delete digests keyed by (source_id, query_hash), archive content by sha256 (archive-put), and read archived content back with its hash verified — including what a budgeted spec get left out (archive-get with an id from meta.content_archive_hashes). ` +
	`Use spec instead to read a spec itself, and task to work on a research node. ` +
	`Typical compositions: research digest-create → research digest-put (with the text, so the source is archived) → research digest-get → research digest-validate (source_id) later; spec get → research archive-get (archive_id, expected_hash).`

// ResearchStore is what the research tool needs of the store: research's
// archive and digest store (its records are research's own types, so the
// store implements this directly), and the journal ranges that spec archive
// ids pin. Each method is one transaction; errors are coded
// (ARCHIVE_NOT_FOUND, DIGEST_NOT_FOUND, SPEC_NOT_FOUND, INTERNAL_ERROR).
type ResearchStore interface {
	research.Store
	research.JournalReader
}

// DefaultArchiveRetention is how long archived research content is kept
// unless configured otherwise (cmd/specd sets Deps.ArchiveRetention to it).
const DefaultArchiveRetention = 30 * 24 * time.Hour

// Research parameter caps.
const (
	maxSourceIDChars = 500
	maxItemTypeChars = 100
	// archiveAnswerSlack is what an archive-get answer needs besides the
	// content, in bytes, when the content is cut to the token budget.
	archiveAnswerSlack = 2048
)

const (
	hashPattern      = `^sha256:[a-f0-9]{64}$`
	queryHashPattern = `^[a-f0-9]{8}$`
)

func researchTool(d *Deps) *mcptool.Tool {
	budget := d.TokenBudget
	if budget <= 0 {
		budget = core.DefaultTokenBudget
	}
	sweeper := &research.Sweeper{}
	source := []string{"text", "pages", "path"}
	t := &mcptool.Tool{
		Name:        "research",
		Title:       "specd research",
		Description: researchDescription,
		Params: []mcptool.Param{
			{Name: "payload", Type: mcptool.Object, Description: "A DigestPayload v1.0 object (as digest-create returns it). Declared only as an object so that an invalid payload reaches the validator and gets a full report."},
			{Name: "text", Type: mcptool.String, MaxLength: core.MaxLargeText, Description: "The source document (plain text or HTML, up to 5 MB); canonicalised (entities decoded, tags → space, NFC, whitespace collapsed) before hashing and locating. Give one of text, pages or path."},
			{Name: "pages", Type: mcptool.Array, Items: mcptool.String, MaxLength: core.MaxLargeText, Description: "A paged source (e.g. PDF pages), each page canonicalised on its own and joined with a blank line; up to 5 MB in all. Locators then use page:N:char:S-E. A paged source must be given as pages again when verified."},
			{Name: "path", Type: mcptool.String, MaxLength: 4096, Description: "A file inside the workspace standing in for text (one page, up to 5 MB)."},
			{Name: "query", Type: mcptool.String, Description: "The research query; its hash (first 8 hex of sha256) is the payload's query_hash."},
			{Name: "source_id", Type: mcptool.String, MaxLength: maxSourceIDChars, MinLength: 1, Description: "Identifies the source document (e.g. its URL). digest-create derives one from the text when absent; digest-validate loads the source archived under this id."},
			{Name: "query_hash", Type: mcptool.String, Pattern: queryHashPattern, Description: "The digest's query_hash (8 lowercase hex).",
				Convert: queryHashOf},
			{Name: "max_snippets", Type: mcptool.Integer, Min: f64(1), Max: f64(10), Clamp: true, Description: "Evidence snippets wanted (default 5, at most 10)."},
			{Name: "content", Type: mcptool.String, MaxLength: core.MaxLargeText, Description: "Content to archive (up to 5 MB); its key is sha256 of its UTF-8 bytes."},
			{Name: "content_id", Type: mcptool.String, MaxLength: maxSourceIDChars, MinLength: 1, Description: "Your own id for archived content (a later put under the same id re-points it); archive-get can read by it."},
			{Name: "item_type", Type: mcptool.String, MaxLength: maxItemTypeChars, Description: "Kind of archived content, e.g. note, source, response_item (default item)."},
			{Name: "hash", Type: mcptool.String, Pattern: hashPattern, Description: "An archive hash \"sha256:<64 hex>\" (from archive-put or a digest's source_text_hash)."},
			{Name: "archive_id", Type: mcptool.String, MaxLength: 1000, Description: "An archive id from meta.content_archive_hashes of a budgeted answer, e.g. spec:<spec_id>@<version>/node:<id>, …/subtree:<id>, …/journal:<seq>, …/journal:<a>-<b> (served from the store at that version); any other value reads as a content_id."},
			{Name: "expected_hash", Type: mcptool.String, Pattern: hashPattern, Description: "The hash the content should have (the value next to the archive id in meta.content_archive_hashes); the answer says whether it matches."},
			{Name: "offset", Type: mcptool.Integer, Min: f64(0), Description: "archive-get: first character of archived text to return (default 0), to page through content larger than the token budget."},
			{Name: "max_chars", Type: mcptool.Integer, Min: f64(1), Max: f64(core.MaxLargeText), Clamp: true, Description: "archive-get: most characters of archived text to return (default and cap: what fits the token budget)."},
			pCursor, pLimit(core.PageList),
		},
	}
	t.Actions = []mcptool.Action{
		{
			Name: "digest-validate", Summary: "Checks a DigestPayload v1.0 and reports every violation with its JSON path, constraint and received value; with the source (text, pages, path, the source archived under source_id, or the archive entry under payload.source_text_hash) it verifies source_text_hash and every locator; with query, the query_hash.",
			Required: []string{"payload"}, Optional: append(append([]string{}, source...), "source_id", "query"),
			SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyModerate,
			Answer: research.ValidateResult{},
			Typed: mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a digestValidateArgs) mcptool.Result {
				return digestValidate(ctx, d, r, a)
			}),
		},
		{
			Name: "digest-create", Summary: "Builds a digest from a source and a query, deterministically and without a language model: summary, key points and up to max_snippets evidence snippets with exact locators; the result always validates against its own source.",
			Required: []string{"query"}, Optional: append(append([]string{}, source...), "source_id", "max_snippets"),
			SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyModerate,
			Answer: research.CreateResult{},
			Typed: mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a digestCreateArgs) mcptool.Result {
				return digestCreate(ctx, d, r, a)
			}),
		},
		{
			Name: "digest-put", Summary: "Validates and stores a digest under (source_id, payload.query_hash), replacing an existing one; a given source is canonicalised, archived under content_id = source_id and used to verify every locator (without one, the archived source under payload.source_text_hash is used when present). An invalid payload is VALIDATION_ERROR with details.violations.",
			Required: []string{"source_id", "payload"}, Optional: source,
			SideEffects: mcptool.EffectWrite, Idempotent: true, Destructive: true, Latency: mcptool.LatencyModerate,
			Answer: research.PutResult{},
			Typed: mcptool.Typed(func(ctx context.Context, _ *mcptool.Request, a digestPutArgs) mcptool.Result {
				return digestPut(ctx, d, a, sweeper)
			}),
		},
		{
			Name: "digest-get", Summary: "The stored digest for (source_id, query_hash) with stored_at and whether its source text is in the archive.",
			Required:    []string{"source_id", "query_hash"},
			SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
			Answer: research.GetResult{},
			Typed: mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a digestGetArgs) mcptool.Result {
				return digestGet(ctx, d, r, a)
			}),
		},
		{
			Name: "digest-list", Summary: "Stored digests in (source_id, query_hash) order, optionally for one source, paged; each with a summary excerpt, digest_chars and stored_at (digest-get has the full payload).",
			Optional:    []string{"source_id", "cursor", "limit"},
			SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
			Answer: research.ListResult{},
			Typed: mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a digestListArgs) mcptool.Result {
				return digestList(ctx, d, r, a)
			}),
		},
		{
			Name: "digest-delete", Summary: "Deletes the digest for (source_id, query_hash); the archived source text stays until retention removes it.",
			Required:    []string{"source_id", "query_hash"},
			SideEffects: mcptool.EffectWrite, Destructive: true, Latency: mcptool.LatencyFast,
			Answer: research.DeleteResult{},
			Typed: mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a digestDeleteArgs) mcptool.Result {
				return digestDelete(ctx, d, r, a)
			}),
		},
		{
			Name: "archive-put", Summary: "Archives content under sha256 of its bytes (idempotent; a repeated put restarts its retention), optionally under your content_id; answers the hash.",
			Required: []string{"content"}, Optional: []string{"content_id", "item_type"},
			SideEffects: mcptool.EffectWrite, Idempotent: true, Latency: mcptool.LatencyFast,
			Answer: research.ArchivePutResult{},
			Typed: mcptool.Typed(func(ctx context.Context, _ *mcptool.Request, a archivePutArgs) mcptool.Result {
				return archivePut(ctx, d, a, sweeper)
			}),
		},
		{
			Name: "archive-get", Summary: "Reads archived content by hash, content_id or archive_id (including spec:<id>@<version>/… ids of budgeted spec answers, served from the store at that version), verifying its hash; never writes. Text over the token budget is paged with offset/max_chars; a spec item over it is answered with the archive ids of its parts.",
			Optional:    []string{"hash", "content_id", "archive_id", "expected_hash", "offset", "max_chars"},
			SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
			Answer: research.ArchiveGetResult{},
			Typed: mcptool.Typed(func(ctx context.Context, _ *mcptool.Request, a archiveGetArgs) mcptool.Result {
				return archiveGet(ctx, d, a, budget)
			}),
		},
	}
	return t
}

// researchService is the research application logic over d's stores, clock
// and workspace, for one call.
func researchService(d *Deps) research.Service {
	svc := research.Service{Files: func() (research.FileReader, error) { return openResearchFiles(d) },
		Clock: d.clock(), Retention: d.ArchiveRetention, MaxChars: core.MaxLargeText}
	if d.Research != nil {
		svc.Store = d.Research
	}
	return svc
}

// researchFiles is the workspace as research reads it: its refusals carry
// fileError's recovery.
type researchFiles struct{ *workspacefs.Dir }

func openResearchFiles(d *Deps) (research.FileReader, error) {
	ws, err := openWorkspace(d)
	if err != nil {
		return nil, err
	}
	return researchFiles{ws}, nil
}

func (f researchFiles) Rel(name string) (string, error) {
	rel, err := f.Dir.Rel(name)
	return rel, fileError(err)
}

func (f researchFiles) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	b, err := f.Dir.ReadFile(ctx, name, max)
	return b, fileError(err)
}

// withNextCall gives err, when it is a refusal of code that names no next
// call, the call c: the research domain names no tools, so the handler,
// which knows the call's arguments, names the call that recovers.
func withNextCall(err error, code string, c core.NextCall) error {
	var e *core.Error
	if errors.As(err, &e) && e.Code == code && !e.NamesCall() {
		return e.WithNext(c, nil)
	}
	return err
}

// queryHashOf is the query_hash a refused query_hash value means: a
// longer or upper-case hex digest's first 8 digits in lower case, else the
// hash of the value as the query's text (research.QueryHash).
func queryHashOf(v string) (string, bool) {
	t := strings.ToLower(strings.TrimSpace(v))
	if len(t) >= 8 && strings.Trim(t, "0123456789abcdef") == "" {
		return t[:8], true
	}
	return research.QueryHash(v), true
}
