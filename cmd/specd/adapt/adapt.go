// Package adapt is where the concrete store meets the tools: it presents a
// *store.Store through the interfaces the tools declare where their types
// differ from the store's. (The store implements tools.SpecRepo and
// tools.ResearchStore directly: their records are the domain's own types.)
// cmd/specd and the end-to-end tests both assemble the server with it.
package adapt

import (
	"context"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/tools"
)

// Health presents the store as tools.StoreHealth.
func Health(st *store.Store) tools.StoreHealth { return health{st} }

type health struct{ *store.Store }

func (a health) Describe(ctx context.Context) (tools.StoreInfo, error) {
	info, err := a.Info(ctx)
	return tools.StoreInfo{Path: info.Path, SizeBytes: info.SizeBytes, SchemaVersion: info.SchemaVersion, InstallID: info.InstallID}, err
}
