// Package board is specd's live board: server-rendered pages (html/template,
// a little plain JavaScript, all embedded, nothing from another origin)
// that show a person the specs by lifecycle folder with their progress and,
// per spec, the phase tree with statuses, who holds each task, blockers, a
// small dependency graph, the journal and history with diffs. Pages update
// within moments of any change, made by any process or server, through
// server-sent events fed by the MCP server's subscription registry
// (mcptool.Subscriptions.Watch).
//
// It reads through planview, that is through the same tool dispatch as MCP,
// always as an observer: the Access hook applies roles and rate limits to
// its calls as to any MCP call. With API keys configured the board asks
// for a key once (a form) and keeps a server-side session behind an
// HttpOnly, SameSite=Strict cookie that carries a random token, never the
// key; without a session it shows nothing of the plan. A session ends at
// sign-out, at its lifetime or when a newer session of its key replaces it,
// and its open event streams end with it; sign-ins are rate-limited per
// client address and per key, and never evict another key's session.
package board

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/specd/specd/cmd/specd/planview"
	"github.com/specd/specd/core/httpguard"
	"github.com/specd/specd/core/mcptool"
)

//go:embed assets
var assets embed.FS

// Defaults of Config's limits.
const (
	DefaultMaxSessions       = 1024
	DefaultMaxSessionsPerKey = 16
	DefaultSessionTTL        = 12 * time.Hour
	DefaultMaxStreamsPerKey  = 16
	DefaultMaxStreams        = 256
	DefaultLoginRate         = 0.1
	DefaultLoginBurst        = 10
	// MaxFormBytes caps the login form's body.
	MaxFormBytes = 4096
	// heartbeat keeps idle event streams (and the proxies between) open.
	heartbeat = 25 * time.Second
)

// CookieName is the board's session cookie.
const CookieName = "specd_board"

// ContentSecurityPolicy is sent with every page: only this origin's
// scripts, styles and connections; no inline script or style, no frames,
// no plugins.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Config is what the board reads through and its limits.
type Config struct {
	Registry *mcptool.Registry
	Runtime  mcptool.Runtime
	// Subscriptions feeds the live updates; nil: pages never update.
	Subscriptions *mcptool.Subscriptions
	// Keys are the server's API keys; none: the board is open (loopback).
	Keys *httpguard.Keys
	// MaxSessions caps the cookie sessions kept in all: at the cap a
	// sign-in replaces its key's own oldest session, and a key without one
	// is refused (503); another key's session is never evicted.
	MaxSessions int
	// MaxSessionsPerKey caps one key's sessions: a sign-in past it ends
	// that key's oldest session.
	MaxSessionsPerKey int
	// SessionTTL is a cookie session's lifetime.
	SessionTTL time.Duration
	// LoginRate and LoginBurst bound sign-in attempts (POST /login, failed
	// ones included) per client address (an IPv6 address by its /64) and,
	// once the key is known, per key: LoginRate a second on average, at
	// most LoginBurst at once; beyond, 429 with Retry-After.
	LoginRate  float64
	LoginBurst int
	// MaxStreamsPerKey and MaxStreams cap the open event streams per key
	// (the keyless caller counts as one) and in all.
	MaxStreamsPerKey int
	MaxStreams       int
	Logger           *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Board is the board's HTTP handler.
type Board struct {
	cfg    Config
	mux    *http.ServeMux
	pages  map[string]*template.Template
	log    *slog.Logger
	cross  *http.CrossOriginProtection // the form posts' CSRF check
	byAddr *limiter                    // sign-in attempts per client address
	byKey  *limiter                    // sign-ins per key

	mu       sync.Mutex
	sessions map[string]*session // cookie token → live session
	streams  map[string]int      // key id → open event streams
	nstreams int
}

// session is one signed-in browser. ended is closed when the session ends
// (sign-out, lifetime, replaced by a newer session of its key, rotated at
// a sign-in): its open event streams stop.
type session struct {
	keyID   string
	created time.Time
	expires time.Time
	ended   chan struct{}
	timer   *time.Timer // ends the session at its lifetime
}

// New makes the board; next serves every path the board does not (the MCP
// endpoint, /healthz, /metrics). The reads behind its pages log their
// "call" line at debug when they succeed (a refresh does not flood the
// log); refusals and errors stay at info.
func New(cfg Config, next http.Handler) *Board {
	cfg.withDefaults()
	cfg.Runtime.OKLogLevel = slog.LevelDebug
	b := &Board{cfg: cfg, mux: http.NewServeMux(), log: cfg.Logger, cross: http.NewCrossOriginProtection(),
		byAddr: newLimiter(cfg.LoginRate, cfg.LoginBurst), byKey: newLimiter(cfg.LoginRate, cfg.LoginBurst),
		sessions: map[string]*session{}, streams: map[string]int{}, pages: map[string]*template.Template{}}
	for _, p := range []string{"index", "spec", "login"} {
		b.pages[p] = template.Must(template.New(p).Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/"+p+".html"))
	}
	static, _ := fs.Sub(assets, "assets/static")
	b.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	b.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	b.mux.HandleFunc("GET /{$}", b.authed(b.index))
	b.mux.HandleFunc("GET /specs/{id}", b.authed(b.spec))
	b.mux.HandleFunc("GET /events", b.authed(b.events))
	b.mux.HandleFunc("GET /login", b.loginForm)
	b.mux.HandleFunc("POST /login", b.login)
	b.mux.HandleFunc("POST /logout", b.logout)
	if next != nil {
		b.mux.Handle("/", next)
	}
	return b
}

// withDefaults gives every unset (zero or negative) limit its default, and
// the clock and logger theirs.
func (cfg *Config) withDefaults() {
	orDefault(&cfg.MaxSessions, DefaultMaxSessions)
	orDefault(&cfg.MaxSessionsPerKey, DefaultMaxSessionsPerKey)
	orDefault(&cfg.LoginRate, DefaultLoginRate)
	orDefault(&cfg.LoginBurst, DefaultLoginBurst)
	orDefault(&cfg.SessionTTL, DefaultSessionTTL)
	orDefault(&cfg.MaxStreamsPerKey, DefaultMaxStreamsPerKey)
	orDefault(&cfg.MaxStreams, DefaultMaxStreams)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
}

// orDefault sets *v to def unless it is positive.
func orDefault[T int | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// ServeHTTP sets the security headers every board answer carries and
// routes.
//
// Without keys the board answers only requests addressed to a loopback
// host (localhost, 127.0.0.0/8, ::1): such a server listens on loopback
// alone, and a page of another site that re-points its own name at
// 127.0.0.1 (DNS rebinding) sends its own name as Host, so it is refused
// (421) instead of reading the plan.
func (b *Board) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isBoardPath(r.URL.Path) {
		if b.cfg.Keys.Len() == 0 && !loopbackHost(r.Host) {
			http.Error(w, "This board answers only on a loopback address (localhost, 127.0.0.1, [::1]).", http.StatusMisdirectedRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
	}
	b.mux.ServeHTTP(w, r)
}

func isBoardPath(p string) bool {
	return boardPaths[p] || strings.HasPrefix(p, "/specs/") || strings.HasPrefix(p, "/static/")
}

// boardPaths are the board's own paths besides /specs/ and /static/.
var boardPaths = map[string]bool{"/": true, "/login": true, "/logout": true, "/events": true, "/favicon.ico": true}

// viewer is the board's caller: the key behind the session (or none).
type viewer struct {
	keyID  string
	keyed  bool            // the server has keys (a logout button is shown)
	ended  <-chan struct{} // closed when the session ends (nil without keys)
	reader *planview.Reader
	ctx    context.Context
}

// authed resolves the caller: without keys everyone may look; with keys
// the session cookie must name a live session, else a page goes to the
// login form and anything else gets 401. The call context carries an
// observer identity, so every read passes through the roles and the rate
// limit of its key.
func (b *Board) authed(next func(w http.ResponseWriter, r *http.Request, v viewer)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := viewer{keyed: b.cfg.Keys.Len() > 0}
		if v.keyed {
			s, ok := b.sessionOf(r)
			if !ok {
				if r.URL.Path == "/events" || r.URL.Query().Get("part") != "" {
					http.Error(w, "sign in first", http.StatusUnauthorized)
					return
				}
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.Path), http.StatusSeeOther)
				return
			}
			v.keyID, v.ended = s.keyID, s.ended
		}
		v.ctx = httpguard.WithIdentity(r.Context(), httpguard.Identity{KeyID: v.keyID, Role: httpguard.Observer})
		v.reader = &planview.Reader{Registry: b.cfg.Registry, Runtime: b.cfg.Runtime,
			Session: mcptool.Session{ID: "board", ClientName: "specd-board"}}
		next(w, r, v)
	}
}

// sessionOf is the live session the request's cookie names. A session
// found past its lifetime ends here (its streams stop) if its timer has
// not ended it yet.
func (b *Board) sessionOf(r *http.Request) (session, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return session{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[c.Value]
	if !ok {
		return session{}, false
	}
	if !b.cfg.Now().Before(s.expires) {
		b.endSession(c.Value)
		return session{}, false
	}
	return *s, true
}

// errFull is a sign-in refused at MaxSessions: the key holds no session
// it could give up, and another key's is never taken.
type errFull struct{ retryAfter int }

func (e errFull) Error() string {
	return fmt.Sprintf("the board holds its maximum of sessions; try again in %d s", e.retryAfter)
}

// newSession keeps a session for keyID and returns its token. The session
// the browser's cookie named (old, may be "") ends: a sign-in always
// rotates the token. Expired sessions are dropped; past MaxSessionsPerKey,
// or at MaxSessions, the key's own oldest session ends; at MaxSessions a
// key without a session is refused (errFull).
func (b *Board) newSession(keyID, old string) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := b.cfg.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropExpired(now)
	if old != "" {
		b.endSession(old)
	}
	own, oldest := b.sessionsOf(keyID)
	switch {
	case own >= b.cfg.MaxSessionsPerKey || own > 0 && len(b.sessions) >= b.cfg.MaxSessions:
		b.endSession(oldest)
	case len(b.sessions) >= b.cfg.MaxSessions:
		return "", errFull{retryAfter: b.firstExpiry(now)}
	}
	s := &session{keyID: keyID, created: now, expires: now.Add(b.cfg.SessionTTL), ended: make(chan struct{})}
	s.timer = time.AfterFunc(b.cfg.SessionTTL, func() { b.expire(token, s) })
	b.sessions[token] = s
	return token, nil
}

// expire ends session s (token) at its lifetime, unless it has ended.
func (b *Board) expire(token string, s *session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessions[token] == s {
		b.endSession(token)
	}
}

// endSession forgets the session token, stops its timer and tells its
// streams (b.mu held; a token that names no session is ignored).
func (b *Board) endSession(token string) {
	s, ok := b.sessions[token]
	if !ok {
		return
	}
	delete(b.sessions, token)
	s.timer.Stop()
	close(s.ended)
}

// dropExpired ends the sessions expired at now (b.mu held).
func (b *Board) dropExpired(now time.Time) {
	for t, s := range b.sessions {
		if !now.Before(s.expires) {
			b.endSession(t)
		}
	}
}

// sessionsOf counts keyID's sessions and names its oldest (b.mu held).
func (b *Board) sessionsOf(keyID string) (n int, oldest string) {
	var when time.Time
	for t, s := range b.sessions {
		if s.keyID != keyID {
			continue
		}
		if n++; oldest == "" || s.created.Before(when) {
			oldest, when = t, s.created
		}
	}
	return n, oldest
}

// firstExpiry is the whole seconds (at least 1) from now until the first
// session expires (b.mu held).
func (b *Board) firstExpiry(now time.Time) int {
	first := now.Add(b.cfg.SessionTTL)
	for _, s := range b.sessions {
		if s.expires.Before(first) {
			first = s.expires
		}
	}
	return max(int((first.Sub(now)+time.Second-1)/time.Second), 1)
}

// Sessions is the number of cookie sessions kept.
func (b *Board) Sessions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sessions)
}

// safeNext keeps a post-login target on this site's pages.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') ||
		strings.ContainsFunc(next, isControl) { // a browser drops tabs and newlines: "/\t/evil" would become "//evil"
		return "/"
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}

// isControl reports whether c is an ASCII control character.
func isControl(c rune) bool { return c < 0x20 || c == 0x7f }

// loopbackHost reports whether host (a Host header: name or address, with
// an optional port) names this machine's loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loginForm is the sign-in form; a browser that holds a live session (it
// signed in again in another tab) goes on to next.
func (b *Board) loginForm(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if b.cfg.Keys.Len() == 0 {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if _, ok := b.sessionOf(r); ok {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	b.render(w, "login", page{Title: "Sign in", Next: next}, false)
}

// login signs in: a form post of the board's own pages (formFromBoard),
// within the rate of the client's address, with a known key, within the
// rate of that key; the new session's token goes into the cookie, which
// is Secure when the request came over TLS (also at a proxy that says so
// with X-Forwarded-Proto: https).
func (b *Board) login(w http.ResponseWriter, r *http.Request) {
	if !b.formFromBoard(w, r) {
		return
	}
	now := b.cfg.Now()
	if ok, after := b.byAddr.take(clientAddr(r), now); !ok {
		b.signInRefused(w, r, http.StatusTooManyRequests, after, "/", fmt.Sprintf("Too many sign-in attempts from this address: try again in %d s.", after))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form is too large", http.StatusRequestEntityTooLarge)
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	k, ok := b.cfg.Keys.Lookup(strings.TrimSpace(r.PostForm.Get("key")))
	if !ok {
		b.signInRefused(w, r, http.StatusUnauthorized, 0, next, "That key is not known to this server.")
		return
	}
	if ok, after := b.byKey.take(k.ID, now); !ok {
		b.signInRefused(w, r, http.StatusTooManyRequests, after, next, fmt.Sprintf("Too many sign-ins with this key: try again in %d s.", after))
		return
	}
	token, err := b.newSession(k.ID, cookieValue(r))
	if full := (errFull{}); errors.As(err, &full) {
		b.signInRefused(w, r, http.StatusServiceUnavailable, full.retryAfter, next, "The board holds as many sessions as it may: "+full.Error()+".")
		return
	} else if err != nil {
		http.Error(w, "could not start a session", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/", HttpOnly: true, Secure: overTLS(r),
		SameSite: http.SameSiteStrictMode, MaxAge: int(b.cfg.SessionTTL / time.Second)})
	b.log.Info("board sign-in", "key_id", k.ID)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signInRefused answers a refused sign-in with the form, its message and
// status, and Retry-After when retryAfter > 0; the log names the status
// and the client's address (for an operator's ban list), never the key.
func (b *Board) signInRefused(w http.ResponseWriter, r *http.Request, status, retryAfter int, next, msg string) {
	b.log.Info("board sign-in refused", "status", status, "addr", clientAddr(r))
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(status)
	b.render(w, "login", page{Title: "Sign in", Next: next, Error: msg}, false)
}

// formFromBoard refuses (403) a form post a browser sent from another
// origin: net/http's CrossOriginProtection, which trusts Sec-Fetch-Site
// (same-origin or none) where a browser sends it and otherwise compares
// Origin with Host; a request with neither (no browser) passes.
func (b *Board) formFromBoard(w http.ResponseWriter, r *http.Request) bool {
	if err := b.cross.Check(r); err != nil {
		http.Error(w, "cross-origin form post refused", http.StatusForbidden)
		return false
	}
	return true
}

// cookieValue is the session token the request's cookie carries, or "".
func cookieValue(r *http.Request) string {
	if c, err := r.Cookie(CookieName); err == nil {
		return c.Value
	}
	return ""
}

// overTLS reports whether the browser reached the board over TLS: here,
// or at a proxy that says so. A client that claims it falsely only makes
// its own cookie one its browser sends over TLS alone.
func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// logout ends the session the cookie names (its streams stop) and clears
// the cookie.
func (b *Board) logout(w http.ResponseWriter, r *http.Request) {
	if !b.formFromBoard(w, r) {
		return
	}
	if token := cookieValue(r); token != "" {
		b.mu.Lock()
		b.endSession(token)
		b.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, Secure: overTLS(r), SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// events is the server-sent event stream of a page: one "change" event
// (data: the spec id) whenever a watched spec changes. ?spec= names the
// specs, at most 200. Streams are capped per key and in all.
func (b *Board) events(w http.ResponseWriter, r *http.Request, v viewer) {
	ids := r.URL.Query()["spec"]
	if len(ids) == 0 || len(ids) > 200 {
		http.Error(w, "name 1 to 200 specs with ?spec=", http.StatusBadRequest)
		return
	}
	if b.cfg.Subscriptions == nil {
		http.Error(w, "live updates are off", http.StatusNotFound)
		return
	}
	if !b.openStream(v.keyID) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, fmt.Sprintf("too many open board streams for this key (at most %d)", b.cfg.MaxStreamsPerKey), http.StatusTooManyRequests)
		return
	}
	defer b.closeStream(v.keyID)
	stream(r.Context(), w, b.watch(r.Context(), ids), v.ended)
}

// signedOut is the last event of a stream whose session ended: the page
// goes to the sign-in form.
const signedOut = "event: signed-out\ndata: \n\n"

// stream serves an open event stream: its opening (with the client's
// retry delay), then every change and a keep-alive comment each
// heartbeat, until the client goes, a write fails or the session ends
// (ended closes: a signed-out event, then the end).
func stream(ctx context.Context, w http.ResponseWriter, changed <-chan string, ended <-chan struct{}) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the write timeout
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, "retry: 2000\n: open\n\n")
	_ = rc.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		msg, more := nextEvent(ctx, changed, tick.C, ended)
		if msg != "" {
			if _, err := io.WriteString(w, msg); err != nil || rc.Flush() != nil {
				return
			}
		}
		if !more {
			return
		}
	}
}

// watch subscribes to the specs ids until ctx ends and returns the ids of
// the specs that changed. Each subscription reads its spec's version as
// of now, so once the client sees the stream open every later change is
// sent; a change already queued absorbs the next ones (the page reloads
// its part once).
func (b *Board) watch(ctx context.Context, ids []string) <-chan string {
	changed := make(chan string, 16)
	for _, id := range ids {
		b.cfg.Subscriptions.Watch(ctx, "specd://specs/"+id, func(uri string) {
			select {
			case changed <- strings.TrimPrefix(uri, "specd://specs/"):
			default:
			}
		})
	}
	return changed
}

// nextEvent waits for what the stream sends next: a change event, or a
// keep-alive comment at each tick; more is false when the stream ends
// after msg: the client has gone (no msg) or the session ended (the
// signed-out event).
func nextEvent(ctx context.Context, changed <-chan string, tick <-chan time.Time, ended <-chan struct{}) (msg string, more bool) {
	select {
	case <-ctx.Done():
		return "", false
	case <-ended:
		return signedOut, false
	case id := <-changed:
		return fmt.Sprintf("event: change\ndata: %s\n\n", id), true
	case <-tick:
		return ": ping\n\n", true
	}
}

func (b *Board) openStream(keyID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.streams[keyID] >= b.cfg.MaxStreamsPerKey || b.nstreams >= b.cfg.MaxStreams {
		return false
	}
	b.streams[keyID]++
	b.nstreams++
	return true
}

func (b *Board) closeStream(keyID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.streams[keyID]--; b.streams[keyID] <= 0 {
		delete(b.streams, keyID)
	}
	b.nstreams--
}
