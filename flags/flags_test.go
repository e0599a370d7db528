package flags

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"github.com/open-feature/go-sdk/openfeature/memprovider"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/flags/registry"
)

// syncBuffer is a log sink safe for the watcher goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo})), buf
}

func boolFlag(def string, eval memprovider.ContextEvaluator) memprovider.InMemoryFlag {
	return memprovider.InMemoryFlag{State: memprovider.Enabled, DefaultVariant: def,
		Variants: map[string]any{"on": true, "off": false}, ContextEvaluator: eval}
}

// memService is a service over the SDK's in-memory provider.
func memService(t *testing.T, fl map[string]memprovider.InMemoryFlag) (*Service, *memprovider.InMemoryProvider, *syncBuffer) {
	t.Helper()
	log, buf := testLogger()
	s := newService(Options{Logger: log, InstallID: "install-1", Transport: "stdio"}, SourceFile)
	p := memprovider.NewInMemoryProvider(fl)
	if err := s.api.SetProviderAndWait(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p, buf
}

func TestRegistryMatchesDefaultFile(t *testing.T) {
	var doc struct {
		Flags map[string]struct {
			Variants       map[string]bool `json:"variants"`
			DefaultVariant string          `json:"defaultVariant"`
		} `json:"flags"`
	}
	if err := json.Unmarshal(DefaultFile, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Flags) != len(registry.Flags) {
		t.Fatalf("default file has %d flags, registry %d", len(doc.Flags), len(registry.Flags))
	}
	for _, f := range registry.Flags {
		ff, ok := doc.Flags[f.Name]
		if !ok {
			t.Fatalf("default file lacks %s", f.Name)
		}
		if ff.Variants[ff.DefaultVariant] != f.Default {
			t.Errorf("%s: default file says %v, registry %v", f.Name, ff.Variants[ff.DefaultVariant], f.Default)
		}
		if f.Description == "" || f.Owner == "" || len(f.Gates) == 0 {
			t.Errorf("%s: incomplete registry entry", f.Name)
		}
	}
	if err := CheckFile(DefaultFile); err != nil {
		t.Fatal(err)
	}
	// openDefault serves it with the in-memory provider, which knows no
	// targeting rules
	if bytes.Contains(DefaultFile, []byte("targeting")) {
		t.Fatal("the embedded default file must not use targeting")
	}
}

func TestCheckFile(t *testing.T) {
	flag := func(body string) string { return `{"flags":{"response_contract_v2":` + body + `}}` }
	cases := []struct {
		name, file, want string
	}{
		{"valid", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}`), ""},
		{"valid fractional", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"fractional":[["on",50],["off",50]]}}`), ""},
		{"valid if", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"if":[{"==":[{"var":"client_name"},"x"]},"off","on"]}}`), ""},
		{"unknown flag any variant type", `{"flags":{"mine":{"state":"ENABLED","variants":{"a":"x"},"defaultVariant":"a"}}}`, ""},
		{"invalid JSON", `{"flags":{`, "not valid JSON"},
		{"trailing data", `{"flags":{}} x`, "not valid JSON"},
		{"no flags", `{}`, `no "flags"`},
		{"bad state", flag(`{"state":"ON","variants":{"on":true},"defaultVariant":"on"}`), "state must be"},
		{"no variants", flag(`{"state":"ENABLED","variants":{},"defaultVariant":"on"}`), "no variants"},
		{"unknown default variant", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"maybe"}`), `defaultVariant "maybe" is not one of its variants (off, on)`},
		{"non-bool variant", flag(`{"state":"ENABLED","variants":{"on":"yes"},"defaultVariant":"on"}`), `variant "on" must be true or false`},
		{"targeting not object", flag(`{"state":"ENABLED","variants":{"on":true},"defaultVariant":"on","targeting":[1]}`), "targeting must be a JSON object"},
		{"fractional unknown variant", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"fractional":[["on",50],["of",50]]}}`), `targeting names variant "of"`},
		{"if unknown else", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"if":[{"==":[{"var":"client_name"},"x"]},"on","els"]}}`), `targeting names variant "els"`},
		{"if two args unknown", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"if":[{"==":[{"var":"client_name"},"x"]},"nope"]}}`), `targeting names variant "nope"`},
		{"if condition literal is no variant", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"if":["cond","on","off"]}}`), ""},
		{"if inside if", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"if":[{"==":[{"var":"client_name"},"x"]},{"if":["c","deep","on"]},"off"]}}`), `targeting names variant "deep"`},
		{"if below another operator", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"and":[{"if":["c","under","on"]}]}}`), `targeting names variant "under"`},
		{"fractional empty bucket", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"fractional":[[],["on",50]]}}`), ""},
		{"targeting null", flag(`{"state":"ENABLED","variants":{"on":true},"defaultVariant":"on","targeting":null}`), ""},
		{"null default variant", flag(`{"state":"DISABLED","variants":{"on":true},"defaultVariant":null}`), ""},
		{"flag not an object", `{"flags":{"mine":1}}`, `flag "mine": json: cannot unmarshal`},
		{"if unknown variant", flag(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"if":[{"==":[{"var":"client_name"},"x"]},"onn","off"]}}`), `targeting names variant "onn"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckFile([]byte(c.file))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestEvaluateInMemory(t *testing.T) {
	byClient := func(_ memprovider.InMemoryFlag, ctx openfeature.FlattenedContext) (any, openfeature.ProviderResolutionDetail) {
		if ctx["client_name"] == "old-agent" {
			return false, openfeature.ProviderResolutionDetail{Variant: "off", Reason: openfeature.TargetingMatchReason}
		}
		return true, openfeature.ProviderResolutionDetail{Variant: "on", Reason: openfeature.TargetingMatchReason}
	}
	s, _, buf := memService(t, map[string]memprovider.InMemoryFlag{
		registry.ResponseContractV2:  boolFlag("on", &byClient),
		registry.TaskBatchOperations: boolFlag("off", nil),
		registry.ContentArchive:      {State: memprovider.Disabled, DefaultVariant: "off", Variants: map[string]any{"on": true, "off": false}},
		registry.ResearchDigests:     {State: memprovider.Enabled, DefaultVariant: "x", Variants: map[string]any{"x": "not a bool"}},
	})
	ctx := context.Background()
	cases := []struct {
		flag, client string
		want         mcptool.FlagDecision
	}{
		{registry.ResponseContractV2, "new-agent", mcptool.FlagDecision{Flag: registry.ResponseContractV2, On: true, Variant: "on", Source: SourceFile}},
		{registry.ResponseContractV2, "old-agent", mcptool.FlagDecision{Flag: registry.ResponseContractV2, On: false, Variant: "off", Source: SourceFile}},
		{registry.TaskBatchOperations, "a", mcptool.FlagDecision{Flag: registry.TaskBatchOperations, On: false, Variant: "off", Source: SourceFile}},
		// DISABLED in the file, and missing from it: the registry default.
		{registry.ContentArchive, "a", mcptool.FlagDecision{Flag: registry.ContentArchive, On: true, Variant: "on", Source: SourceDefault}},
		{registry.VerificationExecute, "a", mcptool.FlagDecision{Flag: registry.VerificationExecute, On: false, Variant: "off", Source: SourceDefault}},
		// a provider error (type mismatch): the registry default, flagged.
		{registry.ResearchDigests, "a", mcptool.FlagDecision{Flag: registry.ResearchDigests, On: true, Variant: "on", Source: SourceErrorFallback}},
	}
	for _, c := range cases {
		if got := s.Gate(ctx, c.flag, mcptool.FlagContext{ClientName: c.client}); got != c.want {
			t.Errorf("%s for %s: %+v, want %+v", c.flag, c.client, got, c.want)
		}
	}
	s.Gate(ctx, registry.ResearchDigests, mcptool.FlagContext{ClientName: "b"})
	if n := strings.Count(buf.String(), "flag provider failed"); n != 1 {
		t.Fatalf("provider failure logged %d times, want once:\n%s", n, buf)
	}
}

func TestTargetingKey(t *testing.T) {
	s := newService(Options{InstallID: "inst"}, SourceDefault)
	if got := s.TargetingKey(mcptool.FlagContext{ClientName: "claude-code"}); got != "claude-code@inst" {
		t.Fatal(got)
	}
	if got := s.TargetingKey(mcptool.FlagContext{ClientName: "claude-code", APIKeyID: "k1"}); got != "key:k1" {
		t.Fatal(got)
	}
	s.opts.ClientID = "ci-42"
	if got := s.TargetingKey(mcptool.FlagContext{ClientName: "claude-code", APIKeyID: "k1"}); got != "ci-42" {
		t.Fatal(got)
	}
}

func TestContractOncePerSession(t *testing.T) {
	s, p, _ := memService(t, map[string]memprovider.InMemoryFlag{registry.ResponseContractV2: boolFlag("on", nil)})
	ctx := context.Background()
	c := mcptool.FlagContext{SessionID: "s1", ClientName: "agent"}
	if !s.Contract(ctx, c).On {
		t.Fatal("want v2")
	}
	p.UpdateFlags(map[string]memprovider.InMemoryFlag{registry.ResponseContractV2: boolFlag("off", nil)})
	// the provider's change event clears the decision cache
	waitFor(t, "evaluate to follow the change", func() bool { return !s.Gate(ctx, registry.ResponseContractV2, c).On })
	if !s.Contract(ctx, c).On {
		t.Fatal("a running session changed shape")
	}
	if s.Contract(ctx, mcptool.FlagContext{SessionID: "s2", ClientName: "agent"}).On {
		t.Fatal("a new session did not get the new decision")
	}
	s.Forget("s1")
	if s.Contract(ctx, c).On {
		t.Fatal("a forgotten session kept its decision")
	}
	s.Gate(ctx, registry.TaskBatchOperations, c) // cached now
	p.UpdateFlags(map[string]memprovider.InMemoryFlag{registry.ResponseContractV2: boolFlag("off", nil), registry.TaskBatchOperations: boolFlag("off", nil)})
	waitFor(t, "the gate to follow the change", func() bool { return !s.Gate(ctx, registry.TaskBatchOperations, c).On })
}

func TestHealthCounts(t *testing.T) {
	s, _, _ := memService(t, map[string]memprovider.InMemoryFlag{registry.ResponseContractV2: boolFlag("on", nil), registry.TaskBatchOperations: boolFlag("off", nil)})
	ctx := context.Background()
	for i := range 3 {
		c := mcptool.FlagContext{SessionID: fmt.Sprint("s", i), ClientName: "a"}
		d := s.Contract(ctx, c)
		for j := range 100 {
			et := ""
			if j%10 == 0 {
				et = "validation"
			}
			s.Observe([]mcptool.FlagDecision{d}, et, time.Duration(j+1)*time.Millisecond)
		}
		g := s.Gate(ctx, registry.TaskBatchOperations, c)
		s.Gate(ctx, registry.TaskBatchOperations, c)
		s.Observe([]mcptool.FlagDecision{d, g}, "feature_flag", time.Millisecond)
	}
	r := s.Report()
	want := map[string]HealthRow{
		registry.ResponseContractV2 + "/on":   {Sessions: 3, Calls: 303, Errors: map[string]int64{"validation": 30, "feature_flag": 3}},
		registry.TaskBatchOperations + "/off": {Sessions: 3, Calls: 3, Errors: map[string]int64{"feature_flag": 3}},
	}
	if len(r.Rows) != len(want) {
		t.Fatalf("rows %+v", r.Rows)
	}
	for _, row := range r.Rows {
		w := want[row.Flag+"/"+row.Variant]
		if row.Sessions != w.Sessions || row.Calls != w.Calls || fmt.Sprint(row.Errors) != fmt.Sprint(w.Errors) {
			t.Errorf("%s/%s: %+v, want %+v", row.Flag, row.Variant, row, w)
		}
	}
	// 303 calls of 1..100 ms (plus 3 of 1 ms): p50 ≈ 50 ms, p99 ≈ 99 ms within a bucket (~25%).
	p := r.Rows[0]
	if p.P50MS < 45 || p.P50MS > 65 || p.P99MS < 95 || p.P99MS > 130 {
		t.Fatalf("percentiles p50=%v p99=%v", p.P50MS, p.P99MS)
	}
}

func TestBuckets(t *testing.T) {
	prev := -1
	for us := 1; us < 5_000_000; us = us*11/10 + 1 {
		d := time.Duration(us) * time.Microsecond
		b := bucketOf(d)
		if b < prev {
			t.Fatalf("bucket of %v went down", d)
		}
		prev = b
		if up := bucketUpper(b); up*1000 < float64(us) || up*1000 > float64(us)*1.6+2 {
			t.Fatalf("%v µs in bucket %d with upper %v ms", us, b, up)
		}
	}
}

// writeFile replaces path atomically, as editors that save through a
// rename do.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := writeAtomic(path, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

func contractFile(targeting string, def string) string {
	tg := ""
	if targeting != "" {
		tg = `,"targeting":` + targeting
	}
	return `{"flags":{"response_contract_v2":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"` + def + `"` + tg + `},
	"task_batch_operations":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}}}`
}

func openFileService(t *testing.T, data string) (*Service, string, *syncBuffer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, data)
	log, buf := testLogger()
	s, err := Open(context.Background(), Options{Path: path, Logger: log, InstallID: "i", Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path, buf
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFractionalSplit evaluates 1,000 client ids through the real flagd
// file provider with a 50/50 fractional rule.
func TestFractionalSplit(t *testing.T) {
	s, _, _ := openFileService(t, contractFile(`{"fractional":[["on",50],["off",50]]}`, "on"))
	ctx := context.Background()
	on := 0
	for i := range 1000 {
		c := mcptool.FlagContext{ClientName: fmt.Sprintf("client-%04d", i)}
		d := s.Gate(ctx, registry.ResponseContractV2, c)
		if d.Source != SourceFile {
			t.Fatalf("source %q", d.Source)
		}
		if d.On {
			on++
		}
		if again := s.Gate(ctx, registry.ResponseContractV2, c); again.On != d.On {
			t.Fatalf("client %d flipped between two evaluations", i)
		}
	}
	if on < 450 || on > 550 {
		t.Fatalf("%d of 1000 clients got v2, want 45–55%%", on)
	}
	t.Logf("%d of 1000 on", on)
}

// turnContractOff checks that a session of s (over the flag file at path,
// which turns the v2 contract on) gets v2, edits the file to turn it off
// and waits until new sessions get it off. It returns the probe: whether
// the session of that id gets v2.
func turnContractOff(t *testing.T, s *Service, path string) (sess func(id string) bool) {
	t.Helper()
	ctx := context.Background()
	sess = func(id string) bool { return s.Contract(ctx, mcptool.FlagContext{SessionID: id, ClientName: "a"}).On }
	if !sess("before") {
		t.Fatal("want v2 before the edit")
	}
	writeFile(t, path, contractFile("", "off"))
	n := 0
	waitFor(t, "the edit to apply to new sessions", func() bool { n++; return !sess(fmt.Sprint("new-", n)) })
	return sess
}

func TestFileEditAndBrokenEdit(t *testing.T) {
	s, path, buf := openFileService(t, contractFile("", "on"))
	sess := turnContractOff(t, s, path)
	n := 0
	if !sess("before") {
		t.Fatal("a running session changed shape")
	}
	// The provider may see the copied file before the poller logs it.
	waitFor(t, "the log of the applied edit", func() bool { return strings.Contains(buf.String(), "flag file applied") })

	broken := []struct{ name, data string }{
		{"invalid JSON", `{"flags": {"response_contract_v2": `},
		{"unknown variant", contractFile("", "maybe")},
		{"empty", ""},
	}
	for _, b := range broken {
		if err := os.WriteFile(path, []byte(b.data), 0o644); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the warning for "+b.name, func() bool { return strings.Count(buf.String(), "edit rejected") >= 1 })
		time.Sleep(100 * time.Millisecond) // several polls: still one warning per edit
		if got := strings.Count(buf.String(), "edit rejected"); got != 1 {
			t.Fatalf("%s: %d warnings, want 1:\n%s", b.name, got, buf)
		}
		if !strings.Contains(buf.String(), "file=flags.json") {
			t.Fatalf("%s: warning does not name the file:\n%s", b.name, buf)
		}
		n++
		if sess(fmt.Sprint("broken-", n)) {
			t.Fatalf("%s: new session fell back to the default instead of the last good config", b.name)
		}
		// reset the log for the next broken edit
		buf.mu.Lock()
		buf.b.Reset()
		buf.mu.Unlock()
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the warning for a deleted file", func() bool { return strings.Contains(buf.String(), "edit rejected") })
	if sess("deleted") {
		t.Fatal("deleted file fell back to defaults")
	}
	// a good edit after broken ones applies again
	writeFile(t, path, contractFile("", "on"))
	waitFor(t, "recovery", func() bool { n++; return sess(fmt.Sprint("again-", n)) })
}

func TestOpenRejectsBrokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, contractFile("", "maybe"))
	_, err := Open(context.Background(), Options{Path: path})
	if err == nil || !strings.Contains(err.Error(), "flags.json") || !strings.Contains(err.Error(), "defaultVariant") {
		t.Fatalf("err %v", err)
	}
	if _, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "none.json")}); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestEmbeddedDefault(t *testing.T) {
	s, err := Open(context.Background(), Options{InstallID: "i"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, f := range registry.Flags {
		d := s.Gate(context.Background(), f.Name, mcptool.FlagContext{ClientName: "x"})
		if d.On != f.Default || d.Source != SourceDefault {
			t.Errorf("%s: %+v", f.Name, d)
		}
	}
}

// TestFlagdDown: a flagd that does not answer holds start-up at most
// ReadyWait (logged once) and never a call; values are the registry
// defaults, logged once at warn; Close is bounded.
func TestFlagdDown(t *testing.T) {
	log, buf := testLogger()
	start := time.Now()
	s, err := Open(context.Background(), Options{Provider: ProviderFlagd, FlagdHost: "127.0.0.1", FlagdPort: 1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	// Start-up waits for the first sync at most ReadyWait; the bound tells
	// "bounded" from "waits for flagd", not fast from slow.
	if el := time.Since(start); el > ReadyWait+3*time.Second {
		t.Fatalf("start-up waited %v on a down flagd", el)
	}
	if n := strings.Count(buf.String(), "flag provider not ready"); n != 1 {
		t.Fatalf("%d not-ready warnings at start-up:\n%s", n, buf)
	}
	// across the provider's start-up deadline (500 ms): not ready, then failed
	for end := time.Now().Add(700 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		for _, f := range registry.Flags {
			t0 := time.Now()
			d := s.Gate(context.Background(), f.Name, mcptool.FlagContext{ClientName: "x", SessionID: "s"})
			if el := time.Since(t0); el > 250*time.Millisecond {
				t.Fatalf("evaluation waited %v", el)
			}
			if d.On != f.Default || d.Source != SourceErrorFallback {
				t.Fatalf("%+v", d)
			}
		}
	}
	// One warning per cause (the provider's state and error code, e.g.
	// "provider NOT_READY: PROVIDER_NOT_READY"), never one per flag or call.
	// Which codes a down flagd goes through depends on timing, so only the
	// once-each rule is checked, on the whole quoted cause.
	causes := map[string]int{}
	for _, line := range strings.Split(buf.String(), "\n") {
		if i := strings.Index(line, "cause="); i >= 0 && strings.Contains(line, "flag provider failed") {
			c, err := strconv.QuotedPrefix(line[i+len("cause="):])
			if err != nil {
				t.Fatalf("unquoted cause in %q", line)
			}
			causes[c]++
		}
	}
	if len(causes) == 0 {
		t.Fatalf("no provider fault logged:\n%s", buf)
	}
	for c, n := range causes {
		if n != 1 {
			t.Fatalf("cause %s logged %d times:\n%s", c, n, buf)
		}
	}
	t0 := time.Now()
	s.Close()
	if el := time.Since(t0); el > ShutdownTimeout+200*time.Millisecond {
		t.Fatalf("Close took %v", el)
	}
}

// TestHalfWrittenSaveIsNotRejected: an editor that truncates the flag file
// and then writes it is seen by the poller in between (an empty file). That
// state must not be logged as a rejected edit; a broken state that stays
// for two polls is, once. The polls are driven by hand (no ticker).
func TestHalfWrittenSaveIsNotRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, contractFile("", "on"))
	log, buf := testLogger()
	s, err := Open(context.Background(), Options{Path: path, Logger: log, InstallID: "i", Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	warnings := func() int { return strings.Count(buf.String(), "edit rejected") }
	steps := []struct {
		name     string
		data     string // "-" deletes the file
		warnings int    // after this poll
		value    bool   // the contract flag for a new session after it
	}{
		{"truncated mid-save", "", 0, true},
		{"the save completes", contractFile("", "off"), 0, false},
		{"truncated again", "", 0, false},
		{"the same broken state a poll later", "", 1, false},
		{"and again", "", 1, false},
		{"a good edit", contractFile("", "on"), 1, true},
		{"deleted", "-", 1, true},
		{"still deleted", "-", 2, true},
	}
	for i, st := range steps {
		if st.data == "-" {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		} else {
			writeFile(t, path, st.data)
		}
		s.reload()
		if got := warnings(); got != st.warnings {
			t.Fatalf("%s: %d rejection warnings, want %d:\n%s", st.name, got, st.warnings, buf)
		}
		waitFor(t, st.name+": the provider's view", func() bool {
			return s.Contract(context.Background(), mcptool.FlagContext{SessionID: fmt.Sprint("s", i, time.Now().UnixNano()), ClientName: "a"}).On == st.value
		})
	}
}

// TestFileModeWritesNothing: a service over a flag file puts nothing on
// disk — no private copy in the temp directory (a server killed with
// SIGKILL, or a caller that never calls Close, would leave it behind) and
// nothing beside the flag file — yet an edit of the file still reaches new
// sessions, and Close leaves the temp directory as it found it.
func TestFileModeWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir on Unix
	if os.TempDir() != tmp {
		t.Skipf("os.TempDir ignores TMPDIR here (%s)", os.TempDir())
	}
	s, path, _ := openFileService(t, contractFile("", "on"))
	listing := func(dir string) []string {
		t.Helper()
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	turnContractOff(t, s, path)
	if got := listing(tmp); len(got) != 0 {
		t.Fatalf("the open service left %v in the temp directory", got)
	}
	if got := listing(filepath.Dir(path)); len(got) != 1 || got[0] != "flags.json" {
		t.Fatalf("the flag file's directory holds %v, want only flags.json", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := listing(tmp); len(got) != 0 {
		t.Fatalf("after Close the temp directory holds %v", got)
	}
}

// writeAtomic replaces path with data through a rename in the same
// directory, so a watcher of path never reads a half-written file.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".flags-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// TestFileModeIgnoresFlagdFileEnv: the flagd provider reads its settings
// from FLAGD_* environment variables, and FLAGD_OFFLINE_FLAG_SOURCE_PATH
// turns its in-process resolver into flagd's file mode over that path,
// dropping a custom sync. A server started where that variable is set (a
// shell that also runs flagd tooling) must still evaluate its own flag
// file, edits included, as the file mode did when it named its file to the
// provider itself.
func TestFileModeIgnoresFlagdFileEnv(t *testing.T) {
	other := filepath.Join(t.TempDir(), "other.json")
	writeFile(t, other, contractFile("", "off"))
	t.Setenv("FLAGD_OFFLINE_FLAG_SOURCE_PATH", other)
	s, path, _ := openFileService(t, contractFile("", "on"))
	ctx := context.Background()
	n := 0
	sess := func() bool {
		n++
		return s.Contract(ctx, mcptool.FlagContext{SessionID: fmt.Sprint("s-", n), ClientName: "a"}).On
	}
	if !sess() {
		t.Fatal("the flag file says on; the service answered off (the FLAGD_OFFLINE_FLAG_SOURCE_PATH file)")
	}
	writeFile(t, path, contractFile("", "off"))
	waitFor(t, "the edit to apply to new sessions", func() bool { return !sess() })
}

// TestFlagdModeIgnoresFlagdFileEnv: with --flags-provider flagd the flags
// come from the flagd daemon named, never from a file that
// FLAGD_OFFLINE_FLAG_SOURCE_PATH names (the provider would otherwise turn
// into flagd's file mode over it): with the daemon down, every flag is the
// registry default, source error_fallback.
func TestFlagdModeIgnoresFlagdFileEnv(t *testing.T) {
	other := filepath.Join(t.TempDir(), "other.json")
	var fl []string
	for _, f := range registry.Flags {
		fl = append(fl, fmt.Sprintf(`%q:{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":%q}`, f.Name, onOff(!f.Default)))
	}
	writeFile(t, other, `{"flags":{`+strings.Join(fl, ",")+`}}`)
	t.Setenv("FLAGD_OFFLINE_FLAG_SOURCE_PATH", other)
	log, _ := testLogger()
	s, err := Open(context.Background(), Options{Provider: ProviderFlagd, FlagdHost: "127.0.0.1", FlagdPort: 1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, f := range registry.Flags {
		if d := s.Gate(context.Background(), f.Name, mcptool.FlagContext{ClientName: "x"}); d.On != f.Default || d.Source != SourceErrorFallback {
			t.Errorf("%s: %+v, want the registry default %v from error_fallback", f.Name, d, f.Default)
		}
	}
}
