package adapt

import (
	"context"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/tools"
)

// EtcdHealth presents the etcd store as tools.StoreHealth.
func EtcdHealth(st *etcdstore.Store) tools.StoreHealth { return etcdHealth{st} }

type etcdHealth struct{ *etcdstore.Store }

func (a etcdHealth) Describe(ctx context.Context) (tools.StoreInfo, error) {
	info, err := a.Info(ctx)
	return tools.StoreInfo{Path: info.Path, SizeBytes: info.SizeBytes, SchemaVersion: info.SchemaVersion, InstallID: info.InstallID}, err
}
