// Package adapt is where the concrete store meets the tools: it presents a
// *store.Store through the interfaces the tools declare (their own types,
// field for field the store's). cmd/specd and the end-to-end tests both
// assemble the server with it.
package adapt

import (
	"context"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/tools"
)

// Health presents the store as tools.StoreHealth.
func Health(st *store.Store) tools.StoreHealth { return health{st} }

// Research presents the archive and digest store as tools.ResearchStore.
func Research(st *store.Store) tools.ResearchStore { return research{st} }

type health struct{ *store.Store }

func (a health) Describe(ctx context.Context) (tools.StoreInfo, error) {
	info, err := a.Info(ctx)
	return tools.StoreInfo{Path: info.Path, SizeBytes: info.SizeBytes, SchemaVersion: info.SchemaVersion, InstallID: info.InstallID}, err
}

type research struct{ *store.Store }

func (a research) ArchivePut(ctx context.Context, content []byte, m tools.ResearchArchiveMeta) (tools.ResearchArchiveMeta, bool, error) {
	out, created, err := a.Store.ArchivePut(ctx, content, store.ArchiveMeta(m))
	return tools.ResearchArchiveMeta(out), created, err
}

func (a research) ArchiveGet(ctx context.Context, hash, contentID string) ([]byte, tools.ResearchArchiveMeta, error) {
	b, m, err := a.Store.ArchiveGet(ctx, hash, contentID)
	return b, tools.ResearchArchiveMeta(m), err
}

func (a research) DigestPut(ctx context.Context, rec tools.ResearchDigest) (bool, error) {
	return a.Store.DigestPut(ctx, store.DigestRecord(rec))
}

func (a research) DigestGet(ctx context.Context, sourceID, queryHash string) (tools.ResearchDigest, error) {
	rec, err := a.Store.DigestGet(ctx, sourceID, queryHash)
	return tools.ResearchDigest(rec), err
}

func (a research) DigestList(ctx context.Context, sourceID, after string, limit int) ([]tools.ResearchDigest, string, error) {
	rows, next, err := a.Store.DigestList(ctx, sourceID, after, limit)
	out := make([]tools.ResearchDigest, len(rows))
	for i, r := range rows {
		out[i] = tools.ResearchDigest(r)
	}
	return out, next, err
}
