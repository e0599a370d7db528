package flags

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	flagd "github.com/open-feature/go-sdk-contrib/providers/flagd/pkg"
	"github.com/open-feature/go-sdk/openfeature"
	"github.com/open-feature/go-sdk/openfeature/isolated"
	"github.com/open-feature/go-sdk/openfeature/memprovider"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/flags/registry"
)

var _ mcptool.Flags = (*Service)(nil)

// Provider kinds.
const (
	ProviderFile  = "file"  // flagd provider in file mode over a local flag file (default)
	ProviderFlagd = "flagd" // flagd provider syncing from a flagd daemon (in-process evaluation)
)

// Sources of a flag's value, as capabilities and the health table show them.
const (
	SourceFile          = "file"                      // the flag file given with --flags or found in the workspace
	SourceFlagd         = "flagd"                     // a flagd daemon
	SourceDefault       = "default"                   // the registry default (embedded file, flag missing or DISABLED)
	SourceErrorFallback = mcptool.SourceErrorFallback // the provider failed or is not ready; the registry default was used
)

// ShutdownTimeout bounds Close: a provider that does not stop in time is
// left behind.
const ShutdownTimeout = time.Second

// ReadyWait bounds how long Open waits for the flagd provider's first sync.
const ReadyWait = 2 * time.Second

// Options configures Open.
type Options struct {
	// Path is the flag file (flagd JSON). Empty: the embedded default.
	Path string
	// Provider is ProviderFile (default) or ProviderFlagd.
	Provider string
	// FlagdHost and FlagdPort locate the flagd daemon's sync service
	// (ProviderFlagd; defaults localhost:8015).
	FlagdHost string
	FlagdPort int
	// Display names the flag file in answers and remediations (never an
	// absolute server path); empty derives it from Path.
	Display string
	// InstallID is this store's install id (part of the default client
	// identity); ClientID is SPECD_CLIENT_ID, which replaces it when set.
	InstallID string
	ClientID  string
	// LoadInstallID, when InstallID is empty, reads the install id the
	// first time a targeting key needs it (the store is opened on demand,
	// so a server starts even while its store is locked or damaged); a
	// failure is logged once and retried on the next key.
	LoadInstallID func() (string, error)
	// Transport is reported to targeting rules as "transport".
	Transport string
	Logger    *slog.Logger
	// Poll is how often the flag file is checked for edits (default 250 ms).
	Poll time.Duration
}

// Service evaluates specd's flags. It is safe for concurrent use.
type Service struct {
	opts   Options
	api    *openfeature.EvaluationAPI
	client *openfeature.Client
	origin string // SourceFile, SourceFlagd or SourceDefault
	log    *slog.Logger

	warnMu sync.Mutex
	warned map[string]bool

	installMu sync.Mutex
	installID string // LoadInstallID's answer, once it succeeded

	sessMu   sync.Mutex
	sessions map[string]map[string]*sessionEntry // session id → targeting key → entry

	health *health

	statusMu sync.Mutex
	refusal  error // why the flag file's current state is not applied
	wasReady bool  // the provider has been ready once
	lost     bool  // it was ready, then went stale or failed

	ready     chan struct{} // closed at the provider's first ready event
	readyOnce sync.Once

	// Decisions are cached until the provider reports a configuration
	// change (or a change of state): flagd's evaluation costs tens of
	// microseconds, a cached decision a map lookup.
	cacheMu sync.RWMutex
	cache   map[evalKey]mcptool.FlagDecision
	gen     uint64
	onEvent []*func(openfeature.EventDetails) // the registered event callbacks

	// file mode
	mem      *memSync // what the provider evaluates: the last good file
	good     []byte
	rejected string
	// suspect is the broken state (error and bytes) the last poll saw: a
	// broken state is rejected only when two polls in a row see it, so
	// an editor's save caught half-written (truncated, then written)
	// logs nothing.
	suspect string
	stop    chan struct{}
	done    chan struct{}
	stopLog []func() // close the providers' log pipes
}

type sessionEntry struct {
	contract mcptool.FlagDecision
	seen     map[string]bool // flag+variant already counted as a session
}

// Open starts the provider over opts. A flag file that is missing or
// invalid at start is an error (naming the file); later edits that are
// invalid are rejected and the last good configuration stays.
func Open(ctx context.Context, opts Options) (*Service, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.Provider == "" {
		opts.Provider = ProviderFile
	}
	switch opts.Provider {
	case ProviderFile:
		return openFile(ctx, opts)
	case ProviderFlagd:
		return openFlagd(ctx, opts)
	default:
		return nil, fmt.Errorf("--flags-provider must be %s or %s, not %q", ProviderFile, ProviderFlagd, opts.Provider)
	}
}

// openFlagd starts the flagd provider of opts (localhost:8015 unless
// given) and waits for its first sync at most ReadyWait before it serves;
// an invalid port or a provider that cannot be created is an error.
func openFlagd(ctx context.Context, opts Options) (*Service, error) {
	host := opts.FlagdHost
	if host == "" {
		host = "localhost"
	}
	port := opts.FlagdPort
	if port == 0 {
		port = 8015
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("--flagd-port %d is not a port", port)
	}
	if opts.Display == "" {
		opts.Display = fmt.Sprintf("flagd at %s:%d", host, port)
	}
	s := newService(opts, SourceFlagd)
	if err := s.setFlagd(ctx, host, port); err != nil {
		s.stopLogs()
		return nil, err
	}
	// The provider initialises in the background; the first answers
	// wait for its first sync, at most ReadyWait, so a new process does
	// not serve the registry defaults just because flagd had not
	// answered yet. A flagd that is down past that does not hold up
	// start-up: evaluations fall back to the registry defaults (with a
	// FALLBACK_USED warning on the answers) until it is ready.
	t := time.NewTimer(ReadyWait)
	defer t.Stop()
	select {
	case <-s.ready:
	case <-t.C:
		s.log.Warn("flag provider not ready; serving the registry defaults until it syncs", "provider", opts.Provider, "flagd", opts.Display, "waited", ReadyWait)
	case <-ctx.Done():
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.superviseFlagd(host, port)
	return s, nil
}

// setFlagd starts a flagd provider (in-process resolver) on host:port in
// the background. Its initialisation ends at the first sync, or fails after
// ReadyWait or at the first connection error.
func (s *Service) setFlagd(ctx context.Context, host string, port int) error {
	p, stop, err := quietProvider(s.log, func() (*flagd.Provider, error) {
		// an empty offline path: FLAGD_OFFLINE_FLAG_SOURCE_PATH must not
		// turn the provider into flagd's file mode (see openFile)
		return flagd.NewProvider(flagd.WithInProcessResolver(), flagd.WithOfflineFilePath(""), flagd.WithHost(host), flagd.WithPort(uint16(port)),
			flagd.WithDeadline(int(ReadyWait/time.Millisecond)))
	})
	s.stopLog = append(s.stopLog, stop)
	if err != nil {
		return fmt.Errorf("flagd provider: %w", err)
	}
	if err := s.api.SetProvider(ctx, p); err != nil {
		return fmt.Errorf("flagd provider: %w", err)
	}
	return nil
}

// initRetry is how often a flagd provider whose initialisation failed is
// replaced by a new one.
const initRetry = time.Second

// superviseFlagd replaces the flagd provider while its initialisation has
// failed and it has never been ready: the flagd provider (v0.6.0) whose
// first sync did not come in time, or whose connection failed first, stays
// in its error state and reports no later event (neither its first ready
// nor a loss), so a fresh one is started until one gets its first sync.
// From then on the provider reconnects by itself, and its events (lost,
// recovered) reach providerEvent.
func (s *Service) superviseFlagd(host string, port int) {
	defer close(s.done)
	t := time.NewTicker(initRetry)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.ready:
			return
		case <-t.C:
			if st := s.client.State(); st == openfeature.ErrorState || st == openfeature.FatalState {
				s.log.Debug("flagd provider initialisation failed; starting a new one", "state", string(st))
				if err := s.setFlagd(context.Background(), host, port); err != nil {
					s.log.Warn("flagd provider could not be restarted", "err", err)
				}
			}
		}
	}
}

// newService builds a service without a provider.
func newService(opts Options, origin string) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	api := isolated.NewAPI()
	s := &Service{
		opts: opts, api: api, client: api.NewClient(), origin: origin,
		log:    opts.Logger.With("component", "flags"),
		warned: map[string]bool{}, sessions: map[string]map[string]*sessionEntry{},
		health: newHealth(), cache: map[evalKey]mcptool.FlagDecision{},
		ready: make(chan struct{}),
	}
	// one callback per event type: the details do not carry the type
	for _, t := range []openfeature.EventType{openfeature.ProviderConfigChange, openfeature.ProviderReady, openfeature.ProviderError, openfeature.ProviderStale} {
		cb := func(openfeature.EventDetails) {
			s.invalidate()
			s.providerEvent(t)
		}
		s.onEvent = append(s.onEvent, &cb)
		api.AddHandler(t, &cb)
	}
	return s
}

// evalKey is everything an evaluation depends on besides the configuration.
type evalKey struct {
	flag, target, name, version, apiKey, session, tool, action string
}

// maxCached bounds the decision cache; past it the cache starts over.
const maxCached = 100_000

// invalidate drops every cached decision (the provider's configuration or
// state changed).
func (s *Service) invalidate() {
	s.cacheMu.Lock()
	s.gen++
	clear(s.cache)
	s.cacheMu.Unlock()
}

func openFile(ctx context.Context, opts Options) (*Service, error) {
	if opts.Path == "" {
		return openDefault(ctx, opts)
	}
	origin := SourceFile
	if opts.Display == "" {
		opts.Display = filepath.Base(opts.Path)
	}
	data, err := readFile(opts.Path, opts.Display)
	if err != nil {
		return nil, err
	}
	if err := CheckFile(data); err != nil {
		return nil, fmt.Errorf("flag file %s: %w", opts.Display, err)
	}
	s := newService(opts, origin)
	// The provider evaluates only configurations that passed CheckFile,
	// handed over from memory (memSync) rather than through flagd's file
	// sync: that one treats an unreadable or empty file as "no flags",
	// which would silently fall back to defaults, and would need a
	// private copy on disk, which a killed process leaves behind.
	s.mem, s.good = newMemSync(data), data
	// The provider reads FLAGD_* environment variables first, and
	// FLAGD_OFFLINE_FLAG_SOURCE_PATH would turn it into flagd's file mode
	// over that path, dropping memSync: the empty path given here wins.
	p, stop, err := quietProvider(s.log, func() (*flagd.Provider, error) {
		return flagd.NewProvider(flagd.WithInProcessResolver(), flagd.WithOfflineFilePath(""),
			flagd.WithCustomSyncProviderAndUri(s.mem, memSyncURI))
	})
	s.stopLog = append(s.stopLog, stop)
	if err != nil {
		s.stopLogs()
		return nil, fmt.Errorf("flagd file provider: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.api.SetProviderAndWait(wctx, p); err != nil {
		s.shutdown()
		return nil, fmt.Errorf("flagd file provider: %w", err)
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.watch()
	return s, nil
}

// openDefault serves the embedded default file without a flag file to
// watch. It has no targeting (every flag is its default variant), so the
// SDK's in-memory provider answers exactly as flagd would, without flagd's
// start-up (a few milliseconds of every cold start).
func openDefault(ctx context.Context, opts Options) (*Service, error) {
	if opts.Display == "" {
		opts.Display = "the embedded default flags (specd init writes them to .specd/flags.json)"
	}
	var doc struct {
		Flags map[string]struct {
			State          string          `json:"state"`
			Variants       map[string]bool `json:"variants"`
			DefaultVariant string          `json:"defaultVariant"`
		} `json:"flags"`
	}
	if err := json.Unmarshal(DefaultFile, &doc); err != nil {
		return nil, fmt.Errorf("embedded default flags: %w", err)
	}
	fl := map[string]memprovider.InMemoryFlag{}
	for name, f := range doc.Flags {
		variants := map[string]any{}
		for v, b := range f.Variants {
			variants[v] = b
		}
		fl[name] = memprovider.InMemoryFlag{Key: name, State: memprovider.State(f.State), DefaultVariant: f.DefaultVariant, Variants: variants}
	}
	s := newService(opts, SourceDefault)
	if err := s.api.SetProviderAndWait(ctx, memprovider.NewInMemoryProvider(fl)); err != nil {
		return nil, err
	}
	return s, nil
}

// watch checks the flag file every Poll and hands a good edit to the
// provider at once; a broken edit (or a deleted file) seen by two polls in
// a row is logged once and the last good configuration stays.
func (s *Service) watch() {
	defer close(s.done)
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.reload()
		}
	}
}

// reload reads the flag file once and applies it when it changed and is
// valid. A broken state is logged when the poll before saw the same one
// (see suspect), and once until the file changes to another error or a
// good configuration.
func (s *Service) reload() {
	data, err := readFile(s.opts.Path, s.opts.Display)
	if err == nil && bytes.Equal(data, s.good) {
		s.rejected, s.suspect = "", ""
		s.setRefusal(nil)
		return
	}
	if err == nil {
		err = CheckFile(data)
	}
	if err != nil {
		msg := err.Error()
		seen := msg + "\x00" + string(data)
		if msg == s.rejected {
			return
		}
		if seen != s.suspect {
			s.suspect = seen // first sight: the writer may not be done
			return
		}
		s.rejected = msg
		var fr *fileRefusal
		if errors.As(err, &fr) && fr.size > 0 {
			s.log.Warn("flag file edit rejected; keeping the last good configuration", "file", s.opts.Display, "err", msg, "size_bytes", fr.size, "limit_bytes", MaxFileBytes)
		} else {
			s.log.Warn("flag file edit rejected; keeping the last good configuration", "file", s.opts.Display, "err", msg)
		}
		s.setRefusal(err)
		return
	}
	s.mem.set(data)
	s.good, s.rejected, s.suspect = data, "", ""
	s.setRefusal(nil)
	s.log.Info("flag file applied", "file", s.opts.Display)
}

// providerEvent logs the provider's loss once (it was ready, then went
// stale or failed: flagd unreachable) and its recovery once, and releases
// Open's wait at the first ready event.
func (s *Service) providerEvent(t openfeature.EventType) {
	s.statusMu.Lock()
	var lost, recovered bool
	switch t {
	case openfeature.ProviderReady:
		recovered = s.lost
		s.wasReady, s.lost = true, false
	case openfeature.ProviderStale, openfeature.ProviderError:
		lost = s.wasReady && !s.lost
		s.lost = s.lost || s.wasReady
	}
	s.statusMu.Unlock()
	switch {
	case t == openfeature.ProviderReady:
		s.readyOnce.Do(func() { close(s.ready) })
		if recovered {
			s.log.Info("flag provider recovered", "provider", s.opts.Provider, "source", s.opts.Display)
		}
	case lost:
		s.log.Warn("flag provider lost; evaluating from the last configuration it synced until it is back", "provider", s.opts.Provider, "source", s.opts.Display, "event", string(t))
	}
}

// setRefusal records why the flag file's current state is not applied (nil:
// it is).
func (s *Service) setRefusal(err error) {
	s.statusMu.Lock()
	s.refusal = err
	s.statusMu.Unlock()
}

// Warning codes of Status.
const (
	// WarnFlagFileRefused: the flag file's current state was refused (too
	// large, not a regular file, invalid); the last good flags stay.
	WarnFlagFileRefused = "FLAG_FILE_REFUSED"
	// WarnFlagProviderUnavailable: the provider is not ready (flagd not
	// synced yet, or lost).
	WarnFlagProviderUnavailable = "FLAG_PROVIDER_UNAVAILABLE"
)

// Status is the provider's state for health check: its kind, state
// (ready, not_ready, stale, error or fatal) and what is wrong now, if
// anything.
func (s *Service) Status() mcptool.FlagStatus {
	st := mcptool.FlagStatus{Provider: s.opts.Provider, State: stateName(s.client.State())}
	s.statusMu.Lock()
	refusal := s.refusal
	s.statusMu.Unlock()
	switch {
	case refusal != nil:
		st.Warning, st.Problem = WarnFlagFileRefused, refusal.Error()+"; the last good flags stay in force."
		st.Context = map[string]any{"file": s.opts.Display}
		var fr *fileRefusal
		if errors.As(refusal, &fr) && fr.size > 0 {
			st.Context["size_bytes"], st.Context["limit_bytes"] = fr.size, MaxFileBytes
		}
	case st.State != "ready":
		st.Warning = WarnFlagProviderUnavailable
		st.Problem = fmt.Sprintf("The %s flag provider (%s) is %s; decisions use the last configuration it synced, or the registry defaults without one.", s.opts.Provider, s.opts.Display, st.State)
		st.Context = map[string]any{"provider": s.opts.Provider, "state": st.State}
	}
	return st
}

// stateName is an OpenFeature provider state in health check's words.
func stateName(st openfeature.State) string {
	switch st {
	case openfeature.ReadyState:
		return "ready"
	case openfeature.StaleState:
		return "stale"
	case openfeature.ErrorState:
		return "error"
	case openfeature.FatalState:
		return "fatal"
	}
	return "not_ready"
}

// Close stops watching and shuts the provider down, waiting at most
// ShutdownTimeout.
func (s *Service) Close() error {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
	return s.shutdown()
}

func (s *Service) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.api.Shutdown(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = errors.New("flag provider did not shut down within 1s")
		s.log.Warn("flag provider shutdown timed out", "timeout", ShutdownTimeout)
	}
	if err == nil {
		s.stopLogs()
	}
	return err
}

// stopLogs closes the log pipes of every provider started.
func (s *Service) stopLogs() {
	for _, stop := range s.stopLog {
		stop()
	}
	s.stopLog = nil
}

// FileName names the flag file for answers (never an absolute path).
func (s *Service) FileName() string { return s.opts.Display }

// Origin is where values come from when the provider answers: file, flagd
// or default (the embedded file).
func (s *Service) Origin() string { return s.origin }

// TargetingKey is the client identity: SPECD_CLIENT_ID when set, else the
// API key's id, else the client's name plus this install's id.
func (s *Service) TargetingKey(c mcptool.FlagContext) string {
	switch {
	case s.opts.ClientID != "":
		return s.opts.ClientID
	case c.APIKeyID != "":
		return "key:" + c.APIKeyID
	}
	name := c.ClientName
	if name == "" {
		name = "unknown"
	}
	return name + "@" + s.install()
}

// install is Options.InstallID, else what LoadInstallID answers (kept once
// it succeeds; "" while it fails).
func (s *Service) install() string {
	if s.opts.InstallID != "" || s.opts.LoadInstallID == nil {
		return s.opts.InstallID
	}
	s.installMu.Lock()
	defer s.installMu.Unlock()
	if s.installID == "" {
		id, err := s.opts.LoadInstallID()
		if err != nil {
			s.warnMu.Lock()
			seen := s.warned["install_id"]
			s.warned["install_id"] = true
			s.warnMu.Unlock()
			if !seen {
				s.log.Warn("the store's install id could not be read; client identities for flag targeting go without it until it can", "err", err)
			}
			return ""
		}
		s.installID = id
	}
	return s.installID
}

// Gate decides flag for c now. It never fails: a provider that is not
// ready or errs gives the registry default (source error_fallback, logged
// once per cause at warn). Evaluation is in-process (file mode and flagd's
// in-process resolver), so it never waits on the network.
func (s *Service) Gate(ctx context.Context, flag string, c mcptool.FlagContext) mcptool.FlagDecision {
	target := s.TargetingKey(c)
	k := evalKey{flag, target, c.ClientName, c.ClientVersion, c.APIKeyID, c.SessionID, c.Tool, c.Action}
	s.cacheMu.RLock()
	d, ok := s.cache[k]
	gen := s.gen
	s.cacheMu.RUnlock()
	if !ok {
		d = s.evaluate(ctx, flag, target, c)
		if d.Source != SourceErrorFallback {
			s.cacheMu.Lock()
			if s.gen == gen {
				if len(s.cache) >= maxCached {
					clear(s.cache)
				}
				s.cache[k] = d
			}
			s.cacheMu.Unlock()
		}
	}
	if c.SessionID != "" {
		s.countSession(c, d)
	}
	return d
}

// evaluate asks the provider.
func (s *Service) evaluate(ctx context.Context, flag, target string, c mcptool.FlagContext) mcptool.FlagDecision {
	reg, _ := registry.Lookup(flag)
	ec := openfeature.NewEvaluationContext(target, map[string]any{
		"client_name": c.ClientName, "client_version": c.ClientVersion, "session_id": c.SessionID,
		"transport": s.opts.Transport, "tool": c.Tool, "action": c.Action,
	})
	det, err := s.client.BooleanValueDetails(ctx, flag, reg.Default, ec)
	d := mcptool.FlagDecision{Flag: flag, On: det.Value, Variant: det.Variant, Source: s.origin}
	switch {
	case det.Reason == openfeature.DisabledReason ||
		// a flag missing from a configuration the provider holds; a
		// provider without one (flagd not synced yet) is a fault
		(det.ErrorCode == openfeature.FlagNotFoundCode && s.client.State() == openfeature.ReadyState):
		d.On, d.Source = reg.Default, SourceDefault
	case err != nil || det.ErrorCode != "":
		d.On, d.Source = reg.Default, SourceErrorFallback
		s.warnOnce(fmt.Sprintf("provider %s: %s", s.client.State(), det.ErrorCode), flag, det.ErrorMessage)
	}
	if d.Variant == "" || d.Source != s.origin {
		d.Variant = onOff(d.On)
	}
	return d
}

func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

// warnOnce logs a provider fault once per cause (provider state and error
// code), not once per flag or call.
func (s *Service) warnOnce(cause, flag, msg string) {
	s.warnMu.Lock()
	seen := s.warned[cause]
	s.warned[cause] = true
	s.warnMu.Unlock()
	if !seen {
		s.log.Warn("flag provider failed; using the registry defaults", "cause", cause, "flag", flag, "err", msg)
	}
}

// maxSessions bounds the session cache; past it the oldest state is
// dropped wholesale (a dropped session is decided again, from the same
// file, so it gets the same answer).
const maxSessions = 100_000

// Contract is response_contract_v2 for c's session: evaluated on the
// session's first call (MCP initialize) and kept for the session's life, so
// a file edit never changes a running session's shape. A PerRequest context
// (no session) is decided each time, from the same identity, so it gets the
// same answer as long as the configuration is unchanged.
func (s *Service) Contract(ctx context.Context, c mcptool.FlagContext) mcptool.FlagDecision {
	c.Tool, c.Action = "", ""
	if c.PerRequest {
		return s.Gate(ctx, registry.ResponseContractV2, c)
	}
	key := s.TargetingKey(c)
	s.sessMu.Lock()
	if e, ok := s.sessions[c.SessionID][key]; ok {
		s.sessMu.Unlock()
		return e.contract
	}
	s.sessMu.Unlock()
	d := s.Gate(ctx, registry.ResponseContractV2, c)
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	e := s.entry(c.SessionID, key)
	if e.contract.Flag == "" {
		e.contract = d
	}
	return e.contract
}

// entry returns the session entry, creating it; sessMu must be held.
func (s *Service) entry(session, key string) *sessionEntry {
	m := s.sessions[session]
	if m == nil {
		if len(s.sessions) >= maxSessions {
			s.sessions = map[string]map[string]*sessionEntry{}
		}
		m = map[string]*sessionEntry{}
		s.sessions[session] = m
	}
	e := m[key]
	if e == nil {
		e = &sessionEntry{seen: map[string]bool{}}
		m[key] = e
	}
	return e
}

// countSession counts c's session once per flag and variant.
func (s *Service) countSession(c mcptool.FlagContext, d mcptool.FlagDecision) {
	k := d.Flag + "\x00" + d.Variant
	s.sessMu.Lock()
	e := s.entry(c.SessionID, s.TargetingKey(c))
	first := !e.seen[k]
	e.seen[k] = true
	s.sessMu.Unlock()
	if first {
		s.health.session(d.Flag, d.Variant)
	}
}

// Forget drops a finished session's cached decisions.
func (s *Service) Forget(sessionID string) {
	s.sessMu.Lock()
	delete(s.sessions, sessionID)
	s.sessMu.Unlock()
}

// Observe records one finished call for the rollout health of each
// decision that applied to it (errorType "" on success).
func (s *Service) Observe(decisions []mcptool.FlagDecision, errorType string, d time.Duration) {
	for _, dec := range decisions {
		if dec.Flag != "" {
			s.health.call(dec.Flag, dec.Variant, errorType, d)
		}
	}
}

// FlagView is one flag as capabilities lists it.
type FlagView struct {
	registry.Flag
	Value   bool   `json:"value"`
	Variant string `json:"variant"`
	Source  string `json:"source"`
}

// List is Views as mcptool.Flags declares it (server capabilities).
func (s *Service) List(ctx context.Context, c mcptool.FlagContext) any { return s.Views(ctx, c) }

// Views is every registry flag with its value for c (response_contract_v2:
// the session's decision).
func (s *Service) Views(ctx context.Context, c mcptool.FlagContext) []FlagView {
	out := make([]FlagView, 0, len(registry.Flags))
	for _, f := range registry.Flags {
		var d mcptool.FlagDecision
		if f.Name == registry.ResponseContractV2 {
			d = s.Contract(ctx, c)
		} else {
			d = s.Gate(ctx, f.Name, c)
		}
		out = append(out, FlagView{Flag: f, Value: d.On, Variant: d.Variant, Source: d.Source})
	}
	return out
}

// Health is Report as mcptool.Flags declares it (server flags).
func (s *Service) Health() any { return s.Report() }

// Report is the rollout health table since start.
func (s *Service) Report() HealthReport {
	r := s.health.report()
	r.Provider, r.FlagFile = s.opts.Provider, s.opts.Display
	return r
}
