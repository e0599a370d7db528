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
	f = f.withDefaults()
	wake := m.openWake(ctx, f)
	every := f.Interval
	if wake != nil {
		every = f.WakeInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	g := passGate{stamp: f.Stamp, lastFresh: true, recheck: f.WakeInterval}
	for {
		if g.due(m.Pending) {
			g.lastPass = time.Now()
			_, _ = m.Sync(ctx)
		}
		if !m.wait(ctx, t, &wake, f.Interval) {
			return
		}
	}
}

// withDefaults is f with its zero intervals set: 500 ms of polling, 5 s
// of safety net.
func (f Feed) withDefaults() Feed {
	if f.Interval <= 0 {
		f.Interval = 500 * time.Millisecond
	}
	if f.WakeInterval <= 0 {
		f.WakeInterval = 5 * time.Second
	}
	return f
}

// openWake starts f's change notification; nil (polling) when there is
// none or it cannot start.
func (m *Mirror) openWake(ctx context.Context, f Feed) <-chan struct{} {
	if f.Wake == nil {
		return nil
	}
	ch, err := f.Wake(ctx)
	if err != nil {
		m.log.Debug("spec mirror: no change feed; polling", "interval", f.Interval, "err", err)
		return nil
	}
	return ch
}

// wait blocks until the next tick of t or the next wake-up; false when ctx
// ended. A closed wake channel is set to nil (never ready) and t goes to
// polling every poll.
func (m *Mirror) wait(ctx context.Context, t *time.Ticker, wake *<-chan struct{}, poll time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case _, ok := <-*wake:
		if !ok {
			m.log.Debug("spec mirror: the change feed stopped; polling", "interval", poll)
			*wake = nil
			t.Reset(poll)
		}
	}
	return true
}

// passGate decides from the feed's stamp whether a wake-up needs a pass.
type passGate struct {
	stamp     func() (token string, fresh bool) // nil: every wake-up passes
	lastToken string
	lastFresh bool          // the last stamp was fresh (true before the first)
	lastPass  time.Time     // when the last pass started
	recheck   time.Duration // how often pending conflicts or a failure are looked at again
}

// due reports whether a pass should run: there is no stamp, the stamp
// moved or the last one was fresh, or pending reports that the last pass
// left something to look at and the last pass is recheck or more ago. It
// remembers the stamp of a pass it lets run.
func (g *passGate) due(pending func() bool) bool {
	if g.stamp == nil {
		return true
	}
	token, fresh := g.stamp()
	unchanged := token == g.lastToken && !g.lastFresh
	if unchanged && !(pending() && time.Since(g.lastPass) >= g.recheck) {
		return false
	}
	g.lastToken, g.lastFresh = token, fresh
	return true
}
