package etcdstore

import (
	"context"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core/store/bucketstore"
)

// Change is one spec changed on the cluster, by this server or any other:
// every stored mutation of a spec writes its header, so one change per
// committed mutation, in revision order.
type Change struct {
	SpecID   string
	Revision int64 // the etcd revision of the commit
}

// ChangeFeed is the change-notification port: resource subscriptions (the
// MCP notifications/resources/updated of spec resources) read it to tell a
// client subscribed on server B that a spec changed through server A. The
// bbolt store gets its own implementation (one process's commits); the lead
// joins the two behind one interface in tools.
type ChangeFeed interface {
	// Changes delivers changes committed after the call until ctx ends; the
	// channel is closed then. A watcher that falls behind the cluster's
	// compaction restarts from the newest revision (changes in between are
	// reported as one Change per spec seen afterwards, never invented).
	Changes(ctx context.Context) <-chan Change
}

var _ ChangeFeed = (*Store)(nil)

// Changes watches the store's specs (see ChangeFeed). Every change also
// advances Revision. (The decoded-node cache of specs/specstore needs no
// invalidation: it serves a node only while its stored bytes are unchanged.)
func (s *Store) Changes(ctx context.Context) <-chan Change {
	out := make(chan Change, 64)
	prefix := s.root + "specs/"
	go func() {
		defer close(out)
		rev := int64(0)
		for ctx.Err() == nil {
			opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithFilterDelete()}
			if rev != 0 {
				opts = append(opts, clientv3.WithRev(rev+1))
			}
			wch := s.cli.Watch(clientv3.WithRequireLeader(ctx), prefix, opts...)
			for resp := range wch {
				if resp.CompactRevision != 0 {
					rev = 0 // behind compaction: restart from now
					break
				}
				if err := resp.Err(); err != nil {
					break
				}
				for _, ev := range resp.Events {
					rest := strings.TrimPrefix(string(ev.Kv.Key), prefix)
					id, key, ok := strings.Cut(rest, sepKey)
					if !ok || strings.Contains(id, "/") || key != bucketstore.SpecHeaderKey {
						continue // only headers: one event per committed mutation
					}
					s.noteRevision(ev.Kv.ModRevision)
					rev = ev.Kv.ModRevision
					select {
					case out <- Change{SpecID: id, Revision: ev.Kv.ModRevision}:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	return out
}
