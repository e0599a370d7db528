package tools

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
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
// no reads at all.

// SubscriptionPollInterval is how often the watcher looks at the store.
const SubscriptionPollInterval = mcptool.DefaultPollInterval

// specWatchStore is what the watcher needs of the store beyond SpecRepo;
// *store.Store has it. Without it, every interval reads the versions.
type specWatchStore interface {
	// ChangeStamp describes the file from one stat, without the lock; see
	// store.ChangeStamp.
	ChangeStamp() (token string, fresh bool)
	// SpecVersions reads the versions of the specs that exist, in one read.
	SpecVersions(ctx context.Context, ids []string) (map[string]int64, error)
}

// installSubscriptions watches the spec versions behind the subscribable
// URIs (subscribedSpec) for the server's subscribers.
func installSubscriptions(s *server.MCPServer, d *Deps) *mcptool.Subscriptions {
	w := mcptool.Watch{Key: subscribedSpec, Versions: d.specVersions, Interval: SubscriptionPollInterval, Logger: d.Runtime.Logger}
	if ws, ok := d.Specs.(specWatchStore); ok {
		w.Stamp = ws.ChangeStamp
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
// read through specWatchStore, else one ReadSpec each.
func (d *Deps) specVersions(ctx context.Context, ids []string) (map[string]int64, error) {
	if w, ok := d.Specs.(specWatchStore); ok {
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
