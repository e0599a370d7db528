// Command specd-load drives a running `specd serve --transport http` on
// loopback, for the load figures of README "Running a shared server for a team"
// (never run by the tests).
//
//	specd-load -url http://127.0.0.1:7777 -key KEY mixed -clients 16 -specs 10 -duration 60s
//	specd-load -url … -key … -pid PID abuse body|sessions|slow|idle
//	specd-load -url … -driver raw|mcp-go -clients 16 -specs 4 -duration 10s writes
//	specd-load -stdio 'bin/specd serve --db /tmp/x.db' -clients 1 -specs 1 -duration 10s writes
//
// writes: clients add tasks (only writes) to the specs for the duration,
// each acknowledged task id is kept, then every spec's tasks are read back
// (task list, all pages) and every acknowledged id must be there; it prints
// the driver, writes/s, p50, p99, the failed calls and the missing count,
// and fails when a call failed or an acknowledged id is missing. Over HTTP
// the clients and the read-back are the raw driver by default (raw.go: a
// lean streamable-HTTP MCP client on its own HTTP/1.1 client, httpconn.go,
// reading answers with a targeted scan, scan.go, so that the driver takes
// less of the cores it shares with the server); -driver mcp-go uses mcp-go's
// client for both, as the setup always does. With -stdio each client is its
// own `specd serve` process on stdio (the command is split on spaces) on
// mcp-go, instead of an HTTP connection. -cpuprofile FILE writes the
// driver's own CPU profile.
//
// mixed: clients (mcp-go streamable-HTTP) loop over reads (task list, task
// progress) and writes (task add) on the specs for the duration, then the
// tasks each spec holds are counted against the adds that succeeded.
// abuse: one attack runs while a fresh client (new connection, initialize,
// one call) is timed every 250 ms and the server's RSS is sampled.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:7777", "server base URL (loopback)")
	key := flag.String("key", "", "API key (Bearer)")
	probeKey := flag.String("probe-key", "", "API key of the fresh client probed during an attack (default -key)")
	pid := flag.Int("pid", 0, "server process id, for RSS")
	clients := flag.Int("clients", 16, "concurrent clients (mixed)")
	nspecs := flag.Int("specs", 10, "specs (mixed)")
	dur := flag.Duration("duration", 60*time.Second, "how long (mixed)")
	writes := flag.Float64("writes", 0.3, "share of writes (mixed)")
	count := flag.Int("count", 0, "attack size (abuse; default per attack)")
	stdio := flag.String("stdio", "", "connect over stdio to this command instead of -url (writes)")
	driver := flag.String("driver", "", "client of the writes workers over HTTP: raw (default) or mcp-go; stdio and the other modes use mcp-go")
	cpuprofile := flag.String("cpuprofile", "", "write the driver's own CPU profile (pprof) of the whole run to this file")
	flag.Parse()
	stop := func() {}
	if *cpuprofile != "" {
		var err error
		if stop, err = startCPUProfile(*cpuprofile); err != nil {
			fmt.Fprintln(os.Stderr, "specd-load:", err)
			os.Exit(1)
		}
	}
	l := &load{url: strings.TrimRight(*url, "/"), key: *key, probeKey: *probeKey, stdio: strings.Fields(*stdio)}
	if l.probeKey == "" {
		l.probeKey = l.key
	}
	var err error
	l.driver, err = pickDriver(*driver, flag.Arg(0), len(l.stdio) > 0)
	switch {
	case err != nil: // a -driver the mode cannot use
	case flag.Arg(0) == "mixed":
		err = l.mixed(*clients, *nspecs, *dur, *writes)
	case flag.Arg(0) == "abuse":
		err = l.abuse(flag.Arg(1), *count, *pid)
	case flag.Arg(0) == "writes":
		err = l.writes(*clients, *nspecs, *dur)
	default:
		err = fmt.Errorf("usage: specd-load [flags] mixed | writes | abuse body|sessions|slow|idle")
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "specd-load:", err)
		os.Exit(1)
	}
}

// startCPUProfile starts profiling the driver's CPU into the file at path;
// stop ends the profile and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

type load struct {
	url, key, probeKey string
	stdio              []string // command of a stdio server, when set
	driver             string   // client of the writes workers: raw or mcp-go
}

// pickDriver is the client the writes workers use: asked ("" for the
// default), raw over HTTP and mcp-go over stdio; raw only drives writes
// over HTTP.
func pickDriver(asked, mode string, stdio bool) (string, error) {
	rawFits := mode == "writes" && !stdio
	switch {
	case asked == "mcp-go" || asked == "" && !rawFits:
		return "mcp-go", nil
	case asked == "raw" && !rawFits:
		return "", errors.New("-driver raw drives writes over HTTP only (stdio and the other modes use mcp-go)")
	case asked == "raw" || asked == "":
		return "raw", nil
	}
	return "", fmt.Errorf("-driver %q: raw or mcp-go", asked)
}

func (l *load) connect(ctx context.Context) (*client.Client, error) { return l.connectAs(ctx, l.key) }

func (l *load) connectAs(ctx context.Context, key string) (*client.Client, error) {
	if len(l.stdio) > 0 {
		return l.connectStdio(ctx)
	}
	return l.connectHTTP(ctx, key)
}

// connectStdio starts the stdio server command (its stderr discarded) and
// initializes a client on it.
func (l *load) connectStdio(ctx context.Context) (*client.Client, error) {
	tr := transport.NewStdioWithOptions(l.stdio[0], nil, l.stdio[1:], transport.WithCommandStderrWriter(io.Discard))
	if err := tr.Start(ctx); err != nil {
		return nil, err
	}
	return l.initialize(ctx, client.NewClient(tr))
}

// connectHTTP opens a streamable-HTTP client of the server (Bearer key
// when given) and initializes it.
func (l *load) connectHTTP(ctx context.Context, key string) (*client.Client, error) {
	var opts []transport.StreamableHTTPCOption
	if key != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	}
	opts = append(opts, transport.WithHTTPBasicClient(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}))
	tr, err := transport.NewStreamableHTTP(l.url+"/mcp", opts...)
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return l.initialize(ctx, c)
}

func (l *load) initialize(ctx context.Context, c *client.Client) (*client.Client, error) {
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: "specd-load", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// call returns the envelope of one tool call.
func call(ctx context.Context, c *client.Client, tool string, args map[string]any) (map[string]any, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	var env map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, err
	}
	if env["success"] != true {
		return env, fmt.Errorf("%s %v: %v", tool, args["action"], env["error"])
	}
	return env, nil
}

func dataOf(env map[string]any) map[string]any { m, _ := env["data"].(map[string]any); return m }

type spec struct{ id, phase string }

// mixed creates nspecs specs (one phase each), runs clients workers of
// random calls against them for dur (see mixedCall), then prints the call
// figures and the specs whose task count is not their count before plus the
// adds that succeeded (lost writes).
func (l *load) mixed(clients, nspecs int, dur time.Duration, writeShare float64) error {
	ctx := context.Background()
	c, err := l.connect(ctx)
	if err != nil {
		return err
	}
	specs, err := createLoadSpecs(ctx, c, nspecs)
	if err != nil {
		return err
	}
	before, err := taskCounts(ctx, c, specs)
	if err != nil {
		return err
	}
	st := &mixedStats{added: make([]atomic.Int64, nspecs)}
	end := time.Now().Add(dur)
	runClients(clients, func() {
		l.worker(ctx, len(specs), end, &st.callStats, func(cc *client.Client, i, n int) error {
			return mixedCall(ctx, cc, specs[i], n, writeShare, &st.added[i])
		})
	})
	slices.Sort(st.lat)
	lost, err := lostWrites(ctx, c, specs, before, st.added)
	if err != nil {
		return err
	}
	fmt.Printf("mixed: clients=%d specs=%d duration=%s calls=%d throughput=%.0f/s p50=%s p99=%s errors=%d writes_ok=%d specs_with_lost_writes=%d\n",
		clients, nspecs, dur, len(st.lat), float64(len(st.lat))/dur.Seconds(), pct(st.lat, 0.50), pct(st.lat, 0.99), st.errs.Load(), st.totalAdded(), lost)
	st.printErrors()
	return nil
}

// runClients runs n copies of work at once and waits for all of them.
func runClients(n int, work func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	wg.Wait()
}

// callStats collects what the workers saw: every call's latency and the
// errors (count and distinct texts).
type callStats struct {
	mu      sync.Mutex
	lat     []time.Duration
	errs    atomic.Int64
	errKind sync.Map
}

// fail counts err and remembers its text.
func (st *callStats) fail(err error) {
	st.errs.Add(1)
	st.errKind.Store(err.Error(), true)
}

// addLatencies adds a worker's latencies, once, at its end.
func (st *callStats) addLatencies(mine []time.Duration) {
	st.mu.Lock()
	st.lat = append(st.lat, mine...)
	st.mu.Unlock()
}

// printErrors prints each distinct error text.
func (st *callStats) printErrors() {
	st.errKind.Range(func(k, _ any) bool { fmt.Println("  error:", k); return true })
}

// mixedStats are the mixed workers' figures: the calls', and the
// successful adds per spec.
type mixedStats struct {
	callStats
	added []atomic.Int64
}

// totalAdded is the number of successful adds on all specs.
func (st *mixedStats) totalAdded() int64 {
	var n int64
	for i := range st.added {
		n += st.added[i].Load()
	}
	return n
}

// createLoadSpecs creates n specs, each with one phase "load" not linked to
// another, and returns their ids and phase ids.
func createLoadSpecs(ctx context.Context, c *client.Client, n int) ([]spec, error) {
	specs := make([]spec, n)
	for i := range specs {
		env, err := call(ctx, c, "authoring", map[string]any{"action": "spec-create", "name": fmt.Sprintf("load %d %d", i, time.Now().UnixNano())})
		if err != nil {
			return nil, err
		}
		id := dataOf(env)["spec_id"].(string)
		env, err = call(ctx, c, "authoring", map[string]any{"action": "phase-add", "spec_id": id, "title": "load", "link_previous": false})
		if err != nil {
			return nil, err
		}
		specs[i] = spec{id: id, phase: dataOf(env)["phase_id"].(string)}
	}
	return specs, nil
}

// worker is one mcp-go client of a run: its own connection (a failed
// connect is one error), then loop with op on it.
func (l *load) worker(ctx context.Context, nspecs int, end time.Time, st *callStats, op func(cc *client.Client, i, n int) error) {
	cc, err := l.connect(ctx)
	if err != nil {
		st.fail(err)
		return
	}
	defer cc.Close()
	loop(nspecs, end, st, func(i, n int) error { return op(cc, i, n) })
}

// loop runs op on a random one of nspecs specs (i) until end, n counting
// the calls, every failed op one error of st; its latencies (each op's) are
// added to st once at the end.
func loop(nspecs int, end time.Time, st *callStats, op func(i, n int) error) {
	var mine []time.Duration
	for n := 0; time.Now().Before(end); n++ {
		i := rand.IntN(nspecs)
		t0 := time.Now()
		err := op(i, n)
		mine = append(mine, time.Since(t0))
		if err != nil {
			st.fail(err)
		}
	}
	st.addLatencies(mine)
}

// mixedCall makes one call on s: with probability writeShare a task add
// (counted in added when it succeeds), otherwise a task list (limit 10) or a
// task progress, evenly.
func mixedCall(ctx context.Context, cc *client.Client, s spec, n int, writeShare float64, added *atomic.Int64) error {
	var err error
	switch r := rand.Float64(); {
	case r < writeShare:
		_, err = call(ctx, cc, "task", addArgs(s, n))
		if err == nil {
			added.Add(1)
		}
	case r < (1+writeShare)/2:
		_, err = call(ctx, cc, "task", map[string]any{"action": "list", "spec_id": s.id, "limit": 10})
	default:
		_, err = call(ctx, cc, "task", map[string]any{"action": "progress", "spec_id": s.id})
	}
	return err
}

// addArgs are the arguments of the n-th task add of a worker on s.
func addArgs(s spec, n int) map[string]any {
	return map[string]any{"action": "add", "spec_id": s.id, "parent": s.phase, "title": fmt.Sprintf("load task %d", n)}
}

// lostWrites counts the specs whose task count is not before plus added,
// printing each.
func lostWrites(ctx context.Context, c *client.Client, specs []spec, before []int, added []atomic.Int64) (int, error) {
	lost := 0
	for i, s := range specs {
		n, err := taskCount(ctx, c, s.id)
		if err != nil {
			return 0, err
		}
		if want := before[i] + int(added[i].Load()); n != want {
			lost++
			fmt.Printf("spec %s: %d tasks, want %d\n", s.id, n, want)
		}
	}
	return lost, nil
}

// taskCounts is each spec's number of task nodes.
func taskCounts(ctx context.Context, c *client.Client, specs []spec) ([]int, error) {
	counts := make([]int, len(specs))
	for i, s := range specs {
		n, err := taskCount(ctx, c, s.id)
		if err != nil {
			return nil, err
		}
		counts[i] = n
	}
	return counts, nil
}

// taskCount is the number of task nodes in a spec (task progress).
func taskCount(ctx context.Context, c *client.Client, id string) (int, error) {
	env, err := call(ctx, c, "task", map[string]any{"action": "progress", "spec_id": id})
	if err != nil {
		return 0, err
	}
	d := dataOf(env)
	for _, k := range []string{"total_tasks", "total"} {
		if v, ok := d[k].(float64); ok {
			return int(v), nil
		}
	}
	return 0, fmt.Errorf("task progress without a total: %v", d)
}

func pct(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	return s[min(int(float64(len(s))*p), len(s)-1)].Round(10 * time.Microsecond)
}

// abuse runs one attack while probing with fresh clients and sampling RSS.
func (l *load) abuse(kind string, count, pid int) error {
	ctx, cancel := context.WithCancel(context.Background())
	var p probes
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.probe(ctx, pid, &p)
	}()
	t0 := time.Now()
	err := l.attack(kind, count)
	took := time.Since(t0)
	time.Sleep(time.Second)
	cancel()
	wg.Wait()
	slices.Sort(p.lat)
	fmt.Printf("abuse %s: attack_took=%s rss_max=%.1fMB rss_after=%.1fMB fresh_client p50=%s max=%s probes=%d probe_errors=%d\n",
		kind, took.Round(time.Millisecond), float64(p.maxRSS)/(1<<20), float64(rss(pid))/(1<<20), pct(p.lat, 0.5), pct(p.lat, 1), len(p.lat), len(p.errs))
	for _, e := range p.errs[:min(3, len(p.errs))] {
		fmt.Println("  probe error:", e)
	}
	return err
}

// probes are what the fresh-client probes of an attack saw.
type probes struct {
	lat    []time.Duration
	errs   []string
	maxRSS int64
}

// probe times a fresh client every 250 ms until ctx ends, sampling pid's
// RSS after each.
func (l *load) probe(ctx context.Context, pid int, p *probes) {
	for ctx.Err() == nil {
		t0 := time.Now()
		err := l.probeOnce()
		p.lat = append(p.lat, time.Since(t0))
		if err != nil {
			p.errs = append(p.errs, err.Error())
		}
		p.maxRSS = max(p.maxRSS, rss(pid))
		time.Sleep(250 * time.Millisecond)
	}
}

// probeOnce is one fresh client (probe key, new connection, initialize)
// making one liveness call, within 5 s.
func (l *load) probeOnce() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := l.connectAs(ctx, l.probeKey)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = call(ctx, c, "health", map[string]any{"action": "liveness"})
	return err
}

// attackSizes are the abuse cases with their default sizes.
var attackSizes = map[string]int{"body": 300, "sessions": 20000, "slow": 1000, "idle": 20000}

// attack runs one abuse case with count as its size (0: the case's
// default): body, sessions, slow or idle.
func (l *load) attack(kind string, count int) error {
	def, ok := attackSizes[kind]
	if !ok {
		return fmt.Errorf("abuse: body, sessions, slow or idle")
	}
	if count == 0 {
		count = def
	}
	switch kind {
	case "body":
		l.attackBody(count)
	case "sessions":
		l.attackSessions(count)
	default:
		l.attackHeld(kind, count)
	}
	return nil
}

// attackBody posts one JSON-RPC request whose body streams mb megabytes and
// prints the answer (or the transport error when the server closes the
// upload).
func (l *load) attackBody(mb int) {
	pr, pw := io.Pipe()
	go func() {
		chunk := []byte(strings.Repeat("x", 1<<20))
		_, _ = pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`))
		for i := 0; i < mb; i++ {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.CloseWithError(io.EOF)
	}()
	req, _ := http.NewRequest(http.MethodPost, l.url+"/mcp", pr)
	req.Header.Set("Content-Type", "application/json")
	if l.key != "" {
		req.Header.Set("Authorization", "Bearer "+l.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println("  body: transport error (server closed the upload):", err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("  body: %d %s", resp.StatusCode, b)
}

// attackSessions sends count initialize requests, 32 at a time, never
// closing the sessions they open, and prints the count of each HTTP status
// (0 for a transport error).
func (l *load) attackSessions(count int) {
	codes := map[int]int{}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"abuse","version":"1"}}}`
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := 0; i < count; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			req, _ := http.NewRequest(http.MethodPost, l.url+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if l.key != "" {
				req.Header.Set("Authorization", "Bearer "+l.key)
			}
			code := 0
			if resp, err := hc.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				code = resp.StatusCode
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Printf("  sessions: status counts %v\n", codes)
}

// attackHeld opens count TCP connections that send nothing (idle) or part
// of a request header (slow, then one header byte a second), holds them 15 s
// and prints how many the server still holds open.
func (l *load) attackHeld(kind string, count int) {
	host := strings.TrimPrefix(l.url, "http://")
	auth := ""
	if l.key != "" {
		auth = "Authorization: Bearer " + l.key + "\r\n"
	}
	conns, failed := dialHeld(kind, host, auth, count)
	fmt.Printf("  %s: opened %d, failed %d; holding them 15 s\n", kind, len(conns), failed)
	hold(kind, conns)
	fmt.Printf("  %s: %d of %d still open after 15 s\n", kind, closeCountingOpen(conns), len(conns))
}

// dialHeld opens count connections to host, each sending the start of a
// request header (with auth) when kind is slow, and nothing when idle; it
// returns them and how many dials failed.
func dialHeld(kind, host, auth string, count int) (conns []net.Conn, failed int) {
	for i := 0; i < count; i++ {
		c, err := net.DialTimeout("tcp", host, 2*time.Second)
		if err != nil {
			failed++
			continue
		}
		if kind == "slow" {
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\n%s", host, auth)
		}
		conns = append(conns, c)
	}
	return conns, failed
}

// hold keeps conns 15 s: a slow attack writes one header byte a second on
// each, forever; an idle one sends nothing.
func hold(kind string, conns []net.Conn) {
	if kind != "slow" {
		time.Sleep(15 * time.Second)
		return
	}
	for j := 0; j < 15; j++ {
		for _, c := range conns {
			_, _ = c.Write([]byte("X"))
		}
		time.Sleep(time.Second)
	}
}

// closeCountingOpen closes conns and returns how many the server still held:
// only a read that times out means the server still holds the connection (a
// 408 answer, EOF or a reset all mean closed).
func closeCountingOpen(conns []net.Conn) int {
	open := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				open++
			}
		}
		c.Close()
	}
	return open
}

// rss is the resident set of pid in bytes (0 when unknown).
func rss(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}

// writes: clients add tasks to nspecs specs until dur has passed, keeping
// every acknowledged task id; then every spec's tasks are read back and
// every acknowledged id must be among them. It prints the figures and
// fails when an acknowledged write is missing or a call failed.
func (l *load) writes(clients, nspecs int, dur time.Duration) error {
	ctx := context.Background()
	c, err := l.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	specs, err := createLoadSpecs(ctx, c, nspecs)
	if err != nil {
		return err
	}
	st := newWriteStats(nspecs)
	start := time.Now()
	end := start.Add(dur)
	runClients(clients, func() {
		if l.driver == "raw" {
			l.rawWriter(specs, end, st)
			return
		}
		l.worker(ctx, len(specs), end, &st.callStats, func(cc *client.Client, i, n int) error {
			env, err := call(ctx, cc, "task", addArgs(specs[i], n))
			if err != nil {
				return err
			}
			return st.ack(i, findString(dataOf(env), "task_id")) // each acknowledged id kept
		})
	})
	elapsed := time.Since(start)
	slices.Sort(st.lat)
	read := mcpPages(ctx, c)
	if l.driver == "raw" { // the raw driver reads back too, on a session of its own
		rc, err := rawConnect(l.url, l.key)
		if err != nil {
			return err
		}
		defer rc.close()
		read = rc.listPage
	}
	total, missing, err := missingAcked(read, specs, st.acked)
	if err != nil {
		return err
	}
	fmt.Printf("writes: driver=%s clients=%d specs=%d duration=%s acked=%d writes/s=%.0f p50=%s p99=%s errors=%d missing=%d\n",
		l.driver, clients, nspecs, dur, total, float64(total)/elapsed.Seconds(), pct(st.lat, 0.50), pct(st.lat, 0.99), st.errs.Load(), missing)
	st.printErrors()
	if missing > 0 || st.errs.Load() > 0 {
		return fmt.Errorf("%d acknowledged writes missing, %d calls failed", missing, st.errs.Load())
	}
	return nil
}

// writeStats are the write workers' figures: the calls', and the task ids
// each spec's adds acknowledged (under mu).
type writeStats struct {
	callStats
	acked []map[string]bool
}

func newWriteStats(nspecs int) *writeStats {
	st := &writeStats{acked: make([]map[string]bool, nspecs)}
	for i := range st.acked {
		st.acked[i] = map[string]bool{}
	}
	return st
}

// rawWriter is one raw-driver client of the writes run (see raw.go): its
// own session and connection (a failed connect is one error), task adds on
// specs until end, each acknowledged id kept in st.
func (l *load) rawWriter(specs []spec, end time.Time, st *writeStats) {
	rc, err := rawConnect(l.url, l.key)
	if err != nil {
		st.fail(err)
		return
	}
	defer rc.close()
	prefixes := make([][]byte, len(specs))
	for i, s := range specs {
		prefixes[i] = addPrefix(s)
	}
	loop(len(specs), end, &st.callStats, func(i, n int) error {
		id, err := rc.add(prefixes[i], n)
		if err != nil {
			return err
		}
		return st.ack(i, id)
	})
}

// ack keeps the task id (from its answer) of a task add on spec i; an
// answer without one is an error.
func (st *writeStats) ack(i int, id string) error {
	if id == "" {
		return errNoTaskID
	}
	st.mu.Lock()
	st.acked[i][id] = true
	st.mu.Unlock()
	return nil
}

// missingAcked reads every spec's tasks back and counts the acknowledged
// ids (total) and those not among them (missing), printing the first 10
// missing.
func missingAcked(read pageReader, specs []spec, acked []map[string]bool) (total, missing int, err error) {
	for i, s := range specs {
		have, err := taskIDs(read, s.id)
		if err != nil {
			return 0, 0, err
		}
		for id := range acked[i] {
			total++
			if !have[id] {
				missing++
				if missing <= 10 {
					fmt.Printf("spec %s: acknowledged task %s is missing\n", s.id, id)
				}
			}
		}
	}
	return total, missing, nil
}

// findString returns the first string under key in v (depth first).
func findString(v any, key string) string {
	var children []any
	switch t := v.(type) {
	case map[string]any:
		if s, ok := t[key].(string); ok {
			return s
		}
		children = slices.Collect(maps.Values(t))
	case []any:
		children = t
	}
	for _, x := range children {
		if s := findString(x, key); s != "" {
			return s
		}
	}
	return ""
}

// pageReader reads one page of a spec's tasks (task list, limit 100,
// from cursor; "" for the first page): it adds the page's task ids to out
// and returns the number of tasks the page held and the next page's
// cursor ("" after the last page).
type pageReader func(specID, cursor string, out map[string]bool) (n int, next string, err error)

// mcpPages reads pages with the mcp-go client c.
func mcpPages(ctx context.Context, c *client.Client) pageReader {
	return func(specID, cursor string, out map[string]bool) (int, string, error) {
		args := map[string]any{"action": "list", "spec_id": specID, "limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		env, err := call(ctx, c, "task", args)
		if err != nil {
			return 0, "", err
		}
		return addTaskIDs(out, env), nextCursor(env), nil
	}
}

// taskIDs reads every task id of a spec (task list, every page).
func taskIDs(read pageReader, id string) (map[string]bool, error) {
	out := map[string]bool{}
	cursor := ""
	for {
		n, next, err := read(id, cursor, out)
		if err != nil {
			return nil, err
		}
		if next == "" || n == 0 {
			return out, nil
		}
		cursor = next
	}
}

// addTaskIDs adds the task ids of a task list answer to out and returns
// the number of tasks the page held.
func addTaskIDs(out map[string]bool, env map[string]any) int {
	tasks, _ := dataOf(env)["tasks"].([]any)
	for _, t := range tasks {
		m, _ := t.(map[string]any)
		if tid, _ := m["task_id"].(string); tid != "" {
			out[tid] = true
		}
	}
	return len(tasks)
}

// nextCursor is a list answer's next page cursor ("" on the last page).
func nextCursor(env map[string]any) string {
	meta, _ := env["meta"].(map[string]any)
	p, _ := meta["pagination"].(map[string]any)
	next, _ := p["cursor"].(string)
	return next
}
