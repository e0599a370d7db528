package mcptool

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Resource subscriptions (resources/subscribe in protocol 2025-11-25 and
// older; the resourceSubscriptions of a subscriptions/listen stream in
// 2026-07-28): a subscriber to a URI that Watch.Key maps to a key gets
// notifications/resources/updated {uri} when that key's version changes —
// appears, moves or disappears — whoever changed it. Any other URI is
// accepted (the protocol has no "not subscribable" answer and clients
// subscribe to what they read) and never notified.
//
// How a change is seen: one watcher goroutine per server runs while at
// least one subscription exists. It looks at the source when Watch.Wake
// says the source may have changed, and every Watch.Interval when there is
// no such feed (every Watch.WakeInterval, as a safety net, while there is).
// A look takes Watch.Stamp (meant to be cheap: one stat, no lock); only when
// the stamp says the source may have changed does it read the versions of
// the subscribed keys (one Watch.Versions call) and notify the subscribers
// of the keys whose version moved. A quiet source therefore costs one stamp
// per interval; a busy one one read per look, whatever the number of
// subscriptions. Notifications arrive as soon as the feed reports the
// change, else within one interval of it (plus the read).

// DefaultPollInterval is how often the watcher looks at the source when
// Watch.Interval is zero.
const DefaultPollInterval = 500 * time.Millisecond

// DefaultWakeInterval is how often the watcher looks at the source while
// Watch.Wake's feed is live, when Watch.WakeInterval is zero.
const DefaultWakeInterval = 5 * time.Second

// Watch is what the subscription registry is told of the resources it
// watches; it names no resource itself.
type Watch struct {
	// Key is the key whose version uri follows, "" for a URI that is
	// never notified. It must be cheap and pure (called under a lock).
	Key func(uri string) string
	// Versions reads the current versions of keys in one read; a key that
	// does not exist is left out of the map (its version counts as -1).
	Versions func(ctx context.Context, keys []string) (map[string]int64, error)
	// Stamp, when set, describes the source without reading it: Versions
	// is read only when token differs from the last one or the last stamp
	// was fresh (too recent to tell a later change from it). Nil: Versions
	// is read every interval.
	Stamp func() (token string, fresh bool)
	// Interval is the polling interval (DefaultPollInterval when 0).
	Interval time.Duration
	// Wake, when set, starts a change feed for as long as the watcher runs
	// (until ctx ends): each value received means the source may have
	// changed, and the watcher looks at once. An error, or the channel
	// closing, means there is no feed: the watcher polls every Interval.
	Wake func(ctx context.Context) (<-chan struct{}, error)
	// WakeInterval is the polling interval while Wake's feed is live, a
	// safety net for changes it misses (DefaultWakeInterval when 0).
	WakeInterval time.Duration
	// Logger receives debug and warning lines (slog's default when nil).
	Logger *slog.Logger
}

// Subscriptions is the per-server subscription registry and its watcher;
// InstallSubscriptions makes one.
type Subscriptions struct {
	srv   *server.MCPServer
	watch Watch
	log   *slog.Logger

	mu       sync.Mutex
	sessions map[string]map[string]bool // subscriber → subscribed URIs
	// listens are the subscribers that are subscriptions/listen streams
	// (keyed "listen:…"); the others are session ids (resources/subscribe).
	listens map[string]listenStream
	// locals are in-process subscribers (Watch; keyed "local:N"): a
	// function hears the change instead of a session.
	locals   map[string]func(uri string)
	nlocal   int
	versions map[string]int64 // key → version last seen (-1: absent)
	running  bool
}

// InstallSubscriptions tracks resources/subscribe and unsubscribe per
// session and the resourceSubscriptions of subscriptions/listen streams
// through the server's hooks (forgetting a session's subscriptions when it
// ends, a stream's when its request ends) and returns the registry. The
// server must have resource subscriptions enabled for clients to use them.
func InstallSubscriptions(s *server.MCPServer, w Watch) *Subscriptions {
	if w.Interval <= 0 {
		w.Interval = DefaultPollInterval
	}
	if w.WakeInterval <= 0 {
		w.WakeInterval = DefaultWakeInterval
	}
	logger := w.Logger
	if logger == nil {
		logger = slog.Default()
	}
	subs := &Subscriptions{srv: s, watch: w, log: logger,
		sessions: map[string]map[string]bool{}, versions: map[string]int64{}, listens: map[string]listenStream{}, locals: map[string]func(string){}}
	h := s.GetHooks()
	if h == nil {
		h = &server.Hooks{}
		server.WithHooks(h)(s)
	}
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			subs.subscribe(ctx, cs.SessionID(), req.Params.URI)
		}
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			subs.unsubscribe(cs.SessionID(), req.Params.URI)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		subs.dropSession(cs.SessionID())
	})
	h.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		if cs := server.ClientSessionFromContext(ctx); cs != nil && id != nil {
			subs.listen(ctx, listenStream{session: cs, id: id}, req.Params.Notifications.ResourceSubscriptions)
		}
	})
	return subs
}

// listenStream is one subscriptions/listen request: its notifications go
// on its session's channel, tagged with the request's id.
type listenStream struct {
	session server.ClientSession
	id      any
}

// listen subscribes the stream to uris for as long as its request runs
// (until ctx ends).
func (s *Subscriptions) listen(ctx context.Context, l listenStream, uris []string) {
	key := fmt.Sprintf("listen:%p:%v", l.session, l.id)
	s.mu.Lock()
	s.listens[key] = l
	s.mu.Unlock()
	for _, uri := range uris {
		s.subscribe(ctx, key, uri)
	}
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		delete(s.listens, key)
		s.mu.Unlock()
		s.dropSession(key)
	}()
}

// Watch subscribes fn to uri for as long as ctx lives, like a session's
// resources/subscribe: fn(uri) runs, on the watcher's goroutine, within one
// interval of every change of the key behind uri, whichever process or
// server made it. fn must not block (hand the news to a channel). This is
// how in-process readers (the board's event streams) follow specs through
// the one watcher the MCP subscribers share.
func (s *Subscriptions) Watch(ctx context.Context, uri string, fn func(uri string)) {
	s.mu.Lock()
	s.nlocal++
	key := fmt.Sprintf("local:%d", s.nlocal)
	s.locals[key] = fn
	s.mu.Unlock()
	s.subscribe(ctx, key, uri)
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		delete(s.locals, key)
		s.mu.Unlock()
		s.dropSession(key)
	}()
}

// notify sends notifications/resources/updated {uri} to a subscriber.
func (s *Subscriptions) notify(subscriber, uri string) error {
	s.mu.Lock()
	l, isListen := s.listens[subscriber]
	local := s.locals[subscriber]
	s.mu.Unlock()
	if local != nil {
		local(uri)
		return nil
	}
	if !isListen {
		return s.srv.SendNotificationToSpecificClient(subscriber, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: mcp.MethodNotificationResourceUpdated,
		Params: mcp.NotificationParams{Meta: map[string]any{mcp.MetaKeySubscriptionID: l.id}, AdditionalFields: map[string]any{"uri": uri}},
	}}
	select {
	case l.session.NotificationChannel() <- n:
		return nil
	default:
		return server.ErrNotificationChannelBlocked
	}
}

// subscribe records the subscription and its key's version as of now (so
// only later changes notify), and starts the watcher if it is not running.
func (s *Subscriptions) subscribe(ctx context.Context, session, uri string) {
	id := s.watch.Key(uri)
	s.log.Debug("resource subscription", "session", session, "uri", uri, "key", id)
	if id == "" || session == "" {
		return
	}
	base, err := s.watch.Versions(ctx, []string{id})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[session] == nil {
		s.sessions[session] = map[string]bool{}
	}
	s.sessions[session][uri] = true
	if _, known := s.versions[id]; !known {
		if err != nil {
			// Unknown baseline: the first successful read sets it, so a
			// change in between is missed rather than invented.
			s.log.Warn("resource subscription: reading the version failed", "key", id, "err", err)
		} else {
			s.versions[id] = versionOf(base, id)
		}
	}
	if !s.running {
		s.running = true
		go s.run()
	}
}

func (s *Subscriptions) unsubscribe(session, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions[session], uri)
	if len(s.sessions[session]) == 0 {
		delete(s.sessions, session)
	}
	s.forgetUnwatchedLocked()
}

func (s *Subscriptions) dropSession(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, session)
	s.forgetUnwatchedLocked()
}

// forgetUnwatchedLocked drops the versions of keys nobody subscribes to
// any more.
func (s *Subscriptions) forgetUnwatchedLocked() {
	watched := s.watchedLocked()
	for id := range s.versions {
		if _, ok := watched[id]; !ok {
			delete(s.versions, id)
		}
	}
}

// watchedLocked maps each subscribed key to its subscribers and URIs.
func (s *Subscriptions) watchedLocked() map[string][][2]string {
	out := map[string][][2]string{}
	for session, uris := range s.sessions {
		for uri := range uris {
			if id := s.watch.Key(uri); id != "" {
				out[id] = append(out[id], [2]string{session, uri})
			}
		}
	}
	return out
}

func versionOf(m map[string]int64, id string) int64 {
	if v, ok := m[id]; ok {
		return v
	}
	return -1
}

// run looks at the source on each wake and tick until no subscription is
// left.
func (s *Subscriptions) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := s.startWake(ctx)
	every := s.watch.Interval
	if wake != nil {
		every = s.watch.WakeInterval
	}
	lastToken, lastFresh := "", true
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case _, ok := <-wake:
			if !ok {
				s.log.Warn("resource subscriptions: the change feed stopped; polling", "interval", s.watch.Interval)
				wake = nil
				t.Reset(s.watch.Interval)
			}
		}
		s.mu.Lock()
		if len(s.sessions) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if s.watch.Stamp != nil {
			token, fresh := s.watch.Stamp()
			if token == lastToken && !lastFresh {
				continue
			}
			lastToken, lastFresh = token, fresh
		}
		s.poll()
	}
}

// startWake starts Watch.Wake's feed; nil when there is none.
func (s *Subscriptions) startWake(ctx context.Context) <-chan struct{} {
	if s.watch.Wake == nil {
		return nil
	}
	wake, err := s.watch.Wake(ctx)
	if err != nil {
		s.log.Debug("resource subscriptions: no change feed; polling", "interval", s.watch.Interval, "err", err)
		return nil
	}
	return wake
}

// poll reads the subscribed keys' versions once and notifies the
// subscribers of each key whose version moved.
func (s *Subscriptions) poll() {
	s.mu.Lock()
	watched := s.watchedLocked()
	s.mu.Unlock()
	ids := make([]string, 0, len(watched))
	for id := range watched {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now, err := s.watch.Versions(ctx, ids)
	if err != nil {
		s.log.Warn("resource subscriptions: reading versions failed; retrying next interval", "err", err)
		return
	}
	var send [][2]string
	s.mu.Lock()
	for _, id := range ids {
		v := versionOf(now, id)
		old, known := s.versions[id]
		s.versions[id] = v
		if known && old != v {
			send = append(send, watched[id]...)
		}
	}
	s.mu.Unlock()
	for _, to := range send {
		if err := s.notify(to[0], to[1]); err != nil {
			s.log.Debug("resource updated notification not delivered", "session", to[0], "uri", to[1], "err", err)
		}
	}
}
