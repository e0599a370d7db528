package tools

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// Resource subscriptions to specd://specs/{spec_id} and
// specd://specs/{spec_id}/journal notify when that spec's version changes —
// created, changed, rolled back or deleted — whichever process changed it;
// core/mcptool's registry does the rest (Subscriptions).
//
// specd processes share the store file and take turns on its lock, so a
// process learns of another's commit only from the file: the watcher's
// stamp is the store's ChangeStamp (one stat, no lock), and the versions of
// the subscribed specs are read in one read transaction only when it moved.
// On etcd (several specd servers on one cluster) the stamp is the revision
// of the newest spec change the store's watch has seen, so a change made
// through any server moves every server's stamp and a quiet cluster costs
// no reads at all (until the cluster has confirmed that watch, the stamp
// is fresh and the versions are read at every look). The watcher is also
// woken by the store's change feed when it has one (ChangeNotify): on bbolt
// the kernel's report of a write to the file, on etcd the cluster watch the
// store keeps; a change then arrives at once rather than at the next poll,
// and without a feed the watcher polls.

// SubscriptionPollInterval is how often the watcher looks at the store.
const SubscriptionPollInterval = mcptool.DefaultPollInterval

// changeNotifier is the store's change feed; both engines have one (the
// kernel's file report on bbolt, the cluster watch on etcd).
type changeNotifier interface {
	// ChangeNotify sends when the store may have changed; see
	// store.ChangeNotify.
	ChangeNotify(ctx context.Context) (<-chan struct{}, error)
}

// installSubscriptions watches the spec versions behind the subscribable
// URIs (subscribedSpec) for the server's subscribers. When Specs is the
// store's spec repository (specs/specstore) and Store the whole store
// port, the watcher reads versions only when its ChangeStamp moved.
func installSubscriptions(s *server.MCPServer, d *Deps) *mcptool.Subscriptions {
	w := mcptool.Watch{Key: subscribedSpec, Versions: d.specVersions, Interval: SubscriptionPollInterval, Logger: d.Runtime.Logger}
	_, batched := d.Specs.(*specstore.Repo)
	if st, ok := d.Store.(bucketstore.Store); ok && batched {
		w.Stamp = st.ChangeStamp
	}
	if cn, ok := d.Store.(changeNotifier); ok && batched {
		w.Wake = cn.ChangeNotify
	}
	d.Subscriptions = mcptool.InstallSubscriptions(s, w)
	return d.Subscriptions
}

// subscribedSpec is the spec id a subscribable URI names ("" for any other
// URI): specd://specs/{id} and specd://specs/{id}/journal.
func subscribedSpec(uri string) string {
	rest, ok := strings.CutPrefix(uri, "specd://specs/")
	if !ok {
		return ""
	}
	rest = strings.TrimSuffix(rest, "/journal")
	if specs.CheckID("spec_id", rest) != nil {
		return ""
	}
	return rest
}

// specVersions reads the versions of the specs among ids that exist: in one
// read through specs/specstore's SpecVersions, else one ReadSpec each.
func (d *Deps) specVersions(ctx context.Context, ids []string) (map[string]int64, error) {
	if w, ok := d.Specs.(*specstore.Repo); ok {
		return w.SpecVersions(ctx, ids)
	}
	out := map[string]int64{}
	for _, id := range ids {
		err := d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			out[id] = sp.Header.Version
			return nil
		})
		if err != nil && core.AsError(err).Code != errcode.SpecNotFound {
			return nil, err
		}
	}
	return out, nil
}
