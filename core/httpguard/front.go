package httpguard

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config is the front door's policy.
type Config struct {
	Keys              *Keys    // nil or empty: no authentication (loopback only)
	AllowedOrigins    []string // origins (scheme://host[:port]) besides the same origin
	MaxBodyBytes      int64    // cap of one request body
	MaxSessionsPerKey int      // live MCP sessions one key may hold
	// Endpoint is the MCP endpoint's path ("/mcp"; not /healthz or
	// /metrics): a request for exactly it goes to the guarded MCP handler
	// without the routing of Handler's mux, which picks that handler for
	// it anyway (ExactPath). Empty: every request is routed.
	Endpoint string
	Sessions *Sessions
	Metrics  *Metrics
	Logger   *slog.Logger
}

// Handler serves /healthz (no authentication, no details), /metrics (admin
// key when keys are configured) and, for every other path, mcp behind the
// origin check, authentication, the body cap and the session cap.
//
// A session belongs to the key that opened it: a request naming a session
// (Mcp-Session-Id) that is not live, or that another key opened, is 404
// NOT_FOUND whatever its method (GET, POST, DELETE), so a session id seen
// elsewhere lets no other caller read the session's stream, post into it or
// end it. Where keys are configured every request needs one, DELETE
// included (401 without); only a keyless server, which listens on loopback
// alone, ends a session on its id by itself. A DELETE that names no session
// is 400 MISSING_REQUIRED.
//
// Refusals are JSON bodies {"error": code, "message": …}: 401
// UNAUTHORIZED with WWW-Authenticate, 403 FORBIDDEN (origin, or /metrics
// without an admin key), 413 PAYLOAD_TOO_LARGE (announced length over the
// cap; a body that grows over it while read is refused by the reader
// below the MCP handler), 429 RATE_LIMIT_EXCEEDED (session cap).
func Handler(cfg Config, mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	if cfg.Metrics != nil {
		mux.Handle("/metrics", cfg.guard(cfg.Metrics.Handler(), true))
	}
	guarded := cfg.guard(mcp, false)
	mux.Handle("/", guarded)
	if cfg.Endpoint == "" {
		return mux
	}
	return ExactPath(cfg.Endpoint, guarded, mux)
}

// ExactPath serves a request whose URL path is exactly path with h and
// every other request with rest. It is for an rest that routes path to h
// itself (a ServeMux whose pattern for it is h's): the request then skips
// the mux's pattern matching, which costs about half a microsecond and
// four allocations per request, and arrives without r.Pattern set.
func ExactPath(path string, h, rest http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path {
			h.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}

// guard puts next behind the front door's checks, in this order: origin,
// API key, admin role (adminOnly), session ownership, body cap, session
// cap. A request that passes reaches next with its Identity in the
// context; a GET (the server's message stream) without a write deadline.
func (cfg Config) guard(next http.Handler, adminOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cfg.originAllowed(r) {
			cfg.refuse(w, http.StatusForbidden, "origin", "FORBIDDEN", fmt.Sprintf("Origin %q is not allowed; the operator can add it with --allowed-origins.", r.Header.Get("Origin")))
			return
		}
		id, ok := cfg.identify(w, r)
		if !ok {
			return
		}
		if adminOnly && id.Role != Admin {
			cfg.refuse(w, http.StatusForbidden, "forbidden", "FORBIDDEN", fmt.Sprintf("Key %s has role %s; /metrics needs role admin.", id.KeyID, id.Role))
			return
		}
		if !adminOnly && !cfg.sessionAllowed(w, r, id) {
			return
		}
		if !cfg.bodyAllowed(w, r) || !cfg.underSessionCap(w, r, id) {
			return
		}
		if r.Method == http.MethodGet {
			// A GET is the long-lived stream of server messages: the write
			// timeout would cut it, so it is lifted for this request only.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		}
		next.ServeHTTP(w, r.WithContext(WithIdentity(r.Context(), id)))
	})
}

// identify is the caller's identity: the key the bearer token names, or
// Admin when no keys are configured. A token that names no key is refused
// (401 UNAUTHORIZED with WWW-Authenticate) and ok is false.
func (cfg Config) identify(w http.ResponseWriter, r *http.Request) (id Identity, ok bool) {
	if cfg.Keys.Len() == 0 {
		return Identity{Role: Admin}, true
	}
	k, ok := cfg.Keys.Lookup(bearer(r))
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="specd"`)
		cfg.refuse(w, http.StatusUnauthorized, "unauthorized", "UNAUTHORIZED", "A valid API key is required: send Authorization: Bearer <key>.")
		return Identity{}, false
	}
	return Identity{KeyID: k.ID, Role: k.Role}, true
}

// bodyAllowed refuses a body whose announced length is over the cap (413
// PAYLOAD_TOO_LARGE, closing the connection) and otherwise caps the
// reading of r's body, so a body that grows past the cap while read fails
// below.
func (cfg Config) bodyAllowed(w http.ResponseWriter, r *http.Request) bool {
	if cfg.MaxBodyBytes <= 0 {
		return true
	}
	if r.ContentLength > cfg.MaxBodyBytes {
		w.Header().Set("Connection", "close")
		cfg.refuse(w, http.StatusRequestEntityTooLarge, "body_too_large", "PAYLOAD_TOO_LARGE", fmt.Sprintf("The body (%d bytes) is over the %d-byte cap.", r.ContentLength, cfg.MaxBodyBytes))
		return false
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, cfg.MaxBodyBytes)
	}
	return true
}

// underSessionCap refuses a request that opens a session (a POST naming
// none) when the caller's key already holds MaxSessionsPerKey live ones
// (429 RATE_LIMIT_EXCEEDED, Retry-After 60).
func (cfg Config) underSessionCap(w http.ResponseWriter, r *http.Request, id Identity) bool {
	if cfg.Sessions == nil || cfg.MaxSessionsPerKey <= 0 || r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return true
	}
	if cfg.Sessions.Count(id.KeyID) < cfg.MaxSessionsPerKey {
		return true
	}
	w.Header().Set("Retry-After", "60")
	cfg.refuse(w, http.StatusTooManyRequests, "session_cap", "RATE_LIMIT_EXCEEDED",
		fmt.Sprintf("This key holds %d live sessions, the cap; end one (DELETE) or let one idle out before opening another.", cfg.MaxSessionsPerKey))
	return false
}

// sessionAllowed reports whether r may go on to the MCP handler as far as
// its session is concerned, and refuses it otherwise: a named session must
// be live and opened by the caller's key (else 404 NOT_FOUND, the answer
// for an unknown id, so a foreign id is not told apart from a made-up one),
// and a DELETE must name one (else 400 MISSING_REQUIRED: there is nothing to
// end, and mcp-go would answer 500). Without a session store every request
// may go on.
func (cfg Config) sessionAllowed(w http.ResponseWriter, r *http.Request, id Identity) bool {
	if cfg.Sessions == nil {
		return true
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		if r.Method == http.MethodDelete {
			cfg.refuse(w, http.StatusBadRequest, "session_missing", "MISSING_REQUIRED", "DELETE ends a session: name it in the Mcp-Session-Id header.")
			return false
		}
		return true
	}
	if owner, live := cfg.Sessions.Owner(sid); !live || owner != id.KeyID {
		cfg.refuse(w, http.StatusNotFound, "session_unknown", "NOT_FOUND", "No live session with this id for this key: open a new one (POST initialize without Mcp-Session-Id).")
		return false
	}
	return true
}

// refuse writes a JSON refusal and counts it.
func (cfg Config) refuse(w http.ResponseWriter, status int, reason, code, msg string) {
	cfg.Metrics.Rejected(reason)
	if cfg.Logger != nil {
		cfg.Logger.Info("http refused", "status", status, "reason", reason)
	}
	b, _ := json.Marshal(map[string]any{"error": code, "message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// bearer is the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const p = "bearer "
	if len(h) > len(p) && strings.EqualFold(h[:len(p)], p) {
		return strings.TrimSpace(h[len(p):])
	}
	return ""
}

// originAllowed: no Origin header (not a browser), the request's own origin
// (Origin host equals Host), or one of AllowedOrigins.
func (cfg Config) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	for _, a := range cfg.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimRight(a, "/"), o) {
			return true
		}
	}
	u, err := url.Parse(o)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// IsLoopback reports whether addr (host:port) listens on loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
