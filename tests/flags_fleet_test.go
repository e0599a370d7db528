package tests

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// keyRollout is a flag file that serves the v2 envelope to key alpha only
// (every other flag at its default).
func keyRollout(t testing.TB) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "flags.json")
	must(t, os.WriteFile(file, []byte(flagFile(nil, map[string]string{"response_contract_v2": `{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"off",
		"targeting":{"if":[{"==":[{"var":"targetingKey"},"key:alpha"]},"on","off"]}}`})), 0o644))
	return file
}

// metricsText reads /metrics with key id's key.
func (s *sharedServer) metricsText(t testing.TB, key string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+s.Keys[key])
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// metricValue is the value of one exact series in a Prometheus text page
// (-1 when the series is absent).
func metricValue(text, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// contractIn is response_contract_v2's entry in a capabilities answer.
func contractIn(t testing.TB, caps map[string]any) map[string]any {
	t.Helper()
	for _, f := range caps["flags"].([]any) {
		if f := f.(map[string]any); f["name"] == "response_contract_v2" {
			return f
		}
	}
	t.Fatalf("capabilities lists no response_contract_v2: %v", caps)
	return nil
}

// TestFlagsKeyIdentityOverHTTP: with API keys the client identity is the
// key (key:<id>), for every use of it alike: the answer shape and
// tools/list, server capabilities, rollout health and the variant metric.
// Two sessions with the same client name and different keys get different
// shapes, each reported and counted under the variant it was served.
func TestFlagsKeyIdentityOverHTTP(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	s := startShared(t, []string{"alpha:maintainer", "beta:maintainer", "ops:admin"}, "--flags", keyRollout(t))
	a, b := s.client(t, "alpha"), s.client(t, "beta") // both name themselves specd-tests
	if !isV2(t, a) || !listHasOutputSchema(t, a) {
		t.Fatal("key alpha is targeted for v2 but was served v1")
	}
	if isV2(t, b) || listHasOutputSchema(t, b) {
		t.Fatal("key beta is not targeted but was served v2")
	}
	if f := contractIn(t, data(call(t, a, "server", map[string]any{"action": "capabilities"}))); f["value"] != true || f["variant"] != "on" {
		t.Fatalf("capabilities for the v2 session (key alpha): %v", f)
	}
	caps, _ := callV1(t, b, "server", map[string]any{"action": "capabilities"})
	if f := contractIn(t, caps); f["value"] != false || f["variant"] != "off" {
		t.Fatalf("capabilities for the v1 session (key beta): %v", f)
	}
	for range 3 {
		call(t, a, "spec", map[string]any{"action": "list"})
		callV1(t, b, "spec", map[string]any{"action": "list"})
	}
	rows := map[string]map[string]any{}
	for _, r := range data(call(t, a, "server", map[string]any{"action": "flags"}))["rows"].([]any) {
		r := r.(map[string]any)
		rows[r["flag"].(string)+"/"+r["variant"].(string)] = r
	}
	on, off := rows["response_contract_v2/on"], rows["response_contract_v2/off"]
	if on == nil || off == nil || on["sessions"] != 1.0 || off["sessions"] != 1.0 || on["calls"].(float64) < 5 || off["calls"].(float64) < 5 {
		t.Fatalf("rollout health of response_contract_v2: on %v, off %v", on, off)
	}
	// the metric counts what health counts (plus the health call itself,
	// recorded once it was answered)
	text := s.metricsText(t, "ops")
	if got := metricValue(text, `specd_flag_variants_served_total{flag="response_contract_v2",variant="on"}`); got != on["calls"].(float64)+1 {
		t.Fatalf("variant metric on = %v, health counted %v calls (+1 for the health call)", got, on["calls"])
	}
	if got := metricValue(text, `specd_flag_variants_served_total{flag="response_contract_v2",variant="off"}`); got != off["calls"].(float64) {
		t.Fatalf("variant metric off = %v, health counted %v calls", got, off["calls"])
	}
}

// TestMetricsExportedFromStart: a fresh keyed server exports the flag
// variant and rate-limit rejection counters at 0 before any call, one
// series per registry flag variant and per key.
func TestMetricsExportedFromStart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	s := startShared(t, []string{"alpha:maintainer", "ops:admin"}, "--flags", keyRollout(t))
	text := s.metricsText(t, "ops")
	for _, series := range []string{
		`specd_flag_variants_served_total{flag="response_contract_v2",variant="on"}`,
		`specd_flag_variants_served_total{flag="response_contract_v2",variant="off"}`,
		`specd_flag_variants_served_total{flag="task_batch_operations",variant="off"}`,
		`specd_rate_limit_rejections_total{key="alpha"}`,
		`specd_rate_limit_rejections_total{key="ops"}`,
	} {
		if got := metricValue(text, series); got != 0 {
			t.Fatalf("%s = %v at start, want 0 (-1: absent)\n%s", series, got, text)
		}
	}
}

// TestFlagsCLIWithAPIKey: specd flags --url reaches a keyed server with
// --api-key or SPECD_API_KEY (and is refused without a key); specd flags -h
// lists its own options, not serve's.
func TestFlagsCLIWithAPIKey(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	s := startShared(t, []string{"alpha:maintainer"}, "--flags", keyRollout(t))
	call(t, s.client(t, "alpha"), "spec", map[string]any{"action": "list"})
	run := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(specdBinary(t), append([]string{"flags", "--url", s.URL + "/mcp", "--db", filepath.Join(t.TempDir(), "cli.db")}, args...)...)
		cmd.Env = append(append(os.Environ(), "SPECD_WORKSPACE="+t.TempDir()), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	health := regexp.MustCompile(`(?m)^response_contract_v2\s+on\s+[1-9]\d*\s+[1-9]`)
	if out, err := run(nil, "--api-key", s.Keys["alpha"]); err != nil || !health.MatchString(out) {
		t.Fatalf("--api-key: %v\n%s", err, out)
	}
	if out, err := run([]string{"SPECD_API_KEY=" + s.Keys["alpha"]}); err != nil || !health.MatchString(out) {
		t.Fatalf("SPECD_API_KEY: %v\n%s", err, out)
	}
	if out, err := run(nil); err == nil {
		t.Fatalf("no key: want a failure against a keyed server\n%s", out)
	}
	help, err := exec.Command(specdBinary(t), "flags", "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("specd flags -h: %v\n%s", err, help)
	}
	for _, want := range []string{"-url", "-api-key", "SPECD_API_KEY", "-client-name"} {
		if !strings.Contains(string(help), want) {
			t.Fatalf("specd flags -h lacks %s:\n%s", want, help)
		}
	}
	if strings.Contains(string(help), "-max-sessions-per-key") {
		t.Fatalf("specd flags -h lists serve's options:\n%s", help)
	}
}
