package mirror

import (
	"context"
	"time"
)

// Feed is how Run learns that the store may have changed, whichever
// process changed it: the store port's ChangeStamp and, on bbolt, the
// kernel's report of writes to the file (store.ChangeNotify). On etcd the
// stamp follows the cluster's watch, so changes made through any server
// reach every server's mirror.
type Feed struct {
	// Stamp describes the store without reading it (bucketstore.Store's
	// ChangeStamp): a pass runs only when the token moved or the last one
	// was fresh. Nil: a pass runs every Interval.
	Stamp func() (token string, fresh bool)
	// Wake, when set, sends when the store may have changed (until ctx
	// ends); an error or a closed channel means polling every Interval.
	Wake func(ctx context.Context) (<-chan struct{}, error)
	// Interval is the polling interval without Wake (500 ms when 0).
	Interval time.Duration
	// WakeInterval is the safety-net interval while Wake works, and how
	// often conflicts are looked at again (5 s when 0).
	WakeInterval time.Duration
}

// Run keeps the mirror up to date until ctx ends: one pass at once, then
// one each time the feed reports a change (a store change by this or any
// other process). While the last pass left conflicts or failed, every
// tick runs a pass too, so a person's resolution (deleting or replacing a
// changed file) is picked up without a store change.
func (m *Mirror) Run(ctx context.Context, f Feed) {
	if f.Interval <= 0 {
		f.Interval = 500 * time.Millisecond
	}
	if f.WakeInterval <= 0 {
		f.WakeInterval = 5 * time.Second
	}
	var wake <-chan struct{}
	if f.Wake != nil {
		if ch, err := f.Wake(ctx); err == nil {
			wake = ch
		} else {
			m.log.Debug("spec mirror: no change feed; polling", "interval", f.Interval, "err", err)
		}
	}
	every := f.Interval
	if wake != nil {
		every = f.WakeInterval
	}
	lastToken, lastFresh := "", true
	t := time.NewTicker(every)
	defer t.Stop()
	first := true
	var lastPass time.Time
	for {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case _, ok := <-wake:
				if !ok {
					m.log.Debug("spec mirror: the change feed stopped; polling", "interval", f.Interval)
					wake = nil
					t.Reset(f.Interval)
				}
			}
		}
		first = false
		if f.Stamp != nil {
			token, fresh := f.Stamp()
			unchanged := token == lastToken && !lastFresh
			if unchanged && !(m.Pending() && time.Since(lastPass) >= f.WakeInterval) {
				continue
			}
			lastToken, lastFresh = token, fresh
		}
		lastPass = time.Now()
		_, _ = m.Sync(ctx)
	}
}
