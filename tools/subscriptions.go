package tools

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// Resource subscriptions (resources/subscribe in protocol 2025-11-25 and
// older; the resourceSubscriptions of a subscriptions/listen stream in
// 2026-07-28): a session subscribed to specd://specs/{spec_id} or
// specd://specs/{spec_id}/journal gets notifications/resources/updated
// {uri} when that spec's version changes — created, changed, rolled back or
// deleted — whichever process changed it. Any other URI is accepted (the
// protocol has no "not subscribable" answer and clients subscribe to what
// they read) and never notified.
//
// How a change is seen: specd processes share the store file and take
// turns on its lock, so a process learns of another's commit only from the
// file. One watcher goroutine per server runs while at least one
// subscription exists. Every SubscriptionPollInterval it takes the store's
// ChangeStamp (one stat, no lock); only when the stamp says the file may have
// changed does it read the versions of the subscribed specs (one read
// transaction under the lock) and notify the sessions subscribed to the
// specs whose version moved. A quiet store therefore costs one stat per
// interval; a busy one costs one short read per interval, whatever the
// number of subscriptions. Notifications arrive within one interval of
// the commit (plus the lock wait of that read).

// On etcd (several specd servers on one cluster) the stamp is the revision
// of the newest spec change the store's watch has seen, so a change made
// through any server moves every server's stamp and a quiet cluster costs
// no reads at all.
//
// SubscriptionPollInterval is how often the watcher looks at the store.
const SubscriptionPollInterval = 500 * time.Millisecond

// specWatchStore is what the watcher needs of the store beyond SpecRepo;
// *store.Store has it. Without it, every interval reads the versions.
type specWatchStore interface {
	// ChangeStamp describes the file from one stat, without the lock; see
	// store.ChangeStamp.
	ChangeStamp() (token string, fresh bool)
	// SpecVersions reads the versions of the specs that exist, in one read.
	SpecVersions(ctx context.Context, ids []string) (map[string]int64, error)
}

// subscriptions is the per-server subscription registry and its watcher.
type subscriptions struct {
	srv      *server.MCPServer
	d        *Deps
	log      *slog.Logger
	interval time.Duration

	mu       sync.Mutex
	sessions map[string]map[string]bool // subscriber → subscribed URIs
	// listens are the subscribers that are subscriptions/listen streams
	// (keyed "listen:…"); the others are session ids (resources/subscribe).
	listens  map[string]listenStream
	versions map[string]int64 // spec id → version last seen (-1: absent)
	running  bool
}

// installSubscriptions tracks resources/subscribe and unsubscribe per
// session through the server's hooks (forgetting a session's subscriptions
// when it ends) and returns the registry.
func installSubscriptions(s *server.MCPServer, d *Deps) *subscriptions {
	logger := d.Runtime.Logger
	if logger == nil {
		logger = slog.Default()
	}
	subs := &subscriptions{srv: s, d: d, log: logger, interval: SubscriptionPollInterval,
		sessions: map[string]map[string]bool{}, versions: map[string]int64{}, listens: map[string]listenStream{}}
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
func (s *subscriptions) listen(ctx context.Context, l listenStream, uris []string) {
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

// notify sends notifications/resources/updated {uri} to a subscriber.
func (s *subscriptions) notify(subscriber, uri string) error {
	s.mu.Lock()
	l, isListen := s.listens[subscriber]
	s.mu.Unlock()
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

// subscribe records the subscription and the spec's version as of now (so
// only later changes notify), and starts the watcher if it is not running.
func (s *subscriptions) subscribe(ctx context.Context, session, uri string) {
	id := subscribedSpec(uri)
	s.log.Debug("resource subscription", "session", session, "uri", uri, "spec_id", id)
	if id == "" || session == "" {
		return
	}
	base, err := s.readVersions(ctx, []string{id})
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
			s.log.Warn("resource subscription: reading the spec version failed", "spec_id", id, "err", err)
		} else {
			s.versions[id] = versionOf(base, id)
		}
	}
	if !s.running {
		s.running = true
		go s.watch()
	}
}

func (s *subscriptions) unsubscribe(session, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions[session], uri)
	if len(s.sessions[session]) == 0 {
		delete(s.sessions, session)
	}
	s.forgetUnwatchedLocked()
}

func (s *subscriptions) dropSession(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, session)
	s.forgetUnwatchedLocked()
}

// forgetUnwatchedLocked drops the versions of specs nobody subscribes to
// any more.
func (s *subscriptions) forgetUnwatchedLocked() {
	watched := s.watchedLocked()
	for id := range s.versions {
		if _, ok := watched[id]; !ok {
			delete(s.versions, id)
		}
	}
}

// watchedLocked maps each subscribed spec id to its subscribers' session
// ids and URIs.
func (s *subscriptions) watchedLocked() map[string][][2]string {
	out := map[string][][2]string{}
	for session, uris := range s.sessions {
		for uri := range uris {
			if id := subscribedSpec(uri); id != "" {
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

func (s *subscriptions) readVersions(ctx context.Context, ids []string) (map[string]int64, error) {
	if w, ok := s.d.Specs.(specWatchStore); ok {
		return w.SpecVersions(ctx, ids)
	}
	out := map[string]int64{}
	for _, id := range ids {
		err := s.d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			out[id] = sp.Header.Version
			return nil
		})
		if err != nil && core.AsError(err).Code != errcode.SpecNotFound {
			return nil, err
		}
	}
	return out, nil
}

// watch polls until no subscription is left.
func (s *subscriptions) watch() {
	w, stamped := s.d.Specs.(specWatchStore)
	lastToken, lastFresh := "", true
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for range t.C {
		s.mu.Lock()
		if len(s.sessions) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if stamped {
			token, fresh := w.ChangeStamp()
			if token == lastToken && !lastFresh {
				continue
			}
			lastToken, lastFresh = token, fresh
		}
		s.poll()
	}
}

// poll reads the subscribed specs' versions once and notifies the
// subscribers of each spec whose version moved.
func (s *subscriptions) poll() {
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
	now, err := s.readVersions(ctx, ids)
	if err != nil {
		s.log.Warn("resource subscriptions: reading spec versions failed; retrying next interval", "err", err)
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
