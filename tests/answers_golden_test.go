package tests

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/specd/specd/core/mcptool"
)

// volatileKeys are answer fields whose values depend on the machine or the
// moment (sizes of a store file, free disk, durations, uptime, latency
// figures), not on the call: the answer snapshots blank them, keeping the
// key so that a renamed or dropped field still shows.
var volatileKeys = map[string]bool{
	"duration_ms": true, "uptime_seconds": true, "uptime_s": true, "free_bytes": true, "size_bytes": true,
	"started_at": true, "p50_ms": true, "p99_ms": true, "elapsed_ms": true, "output": true,
	"install_id": true, "store_path": true, "path": true, "workspace_root": true, "go_version": true,
}

// tempName matches the random part of t.TempDir names that reach answers
// through the fixture's store (the workspace folder's name).
var tempName = regexp.MustCompile(`Test[A-Za-z_/]*[0-9]{6,}`)

// sessionName matches the per-client session ids of in-process clients.
var sessionName = regexp.MustCompile(`inprocess-[0-9]+`)

// holderLabel matches the per-process label of a claim's agent identity
// (mcptool.HolderOf: "<client name>#<12 hex>").
var holderLabel = regexp.MustCompile(`#[0-9a-f]{12}$`)

// TestAnswersGolden snapshots the answer of every action's happy path (its
// declared Example on a fresh, deterministic fixture (a copy of one): fixed clock and ids),
// data and the meta keys that describe it (pagination, fidelity, warnings),
// so that a change to any answer's shape shows as a diff of one file
// (testdata/answers/<tool>.<action>.json; refresh with -update). It is the
// behaviour check of refactors that move code between tools and the domain.
// It is also TestContractEveryAction's happy-path walk on protocols[0].
func TestAnswersGolden(t *testing.T) {
	t.Parallel()
	_, reg := inProcess(t, newDeps(t, true), protocols[0])
	tmpl := newFixtureTemplate(t, protocols[0], true)
	reads, readFx := tmpl.readClient(t, protocols[0]) // for actions that only read (see TestContractEveryAction)
	for _, tool := range reg.Tools() {
		for _, a := range tool.Describe() {
			act := findAction(tool, a.Name)
			if act.Example == nil {
				continue
			}
			t.Run(tool.Name+"/"+a.Name, func(t *testing.T) {
				t.Parallel()
				c, fx := reads, readFx
				if act.SideEffects == mcptool.EffectWrite {
					c, fx = tmpl.client(t, protocols[0])
				}
				args := exampleArgs(t, c, tool, act, fx)
				env := call(t, c, tool.Name, args)
				if env["success"] != true {
					t.Fatalf("happy path failed: %v", env)
				}
				checkAnswerSchema(t, c, tool.Name, a.Name, env["data"])
				meta, _ := env["meta"].(map[string]any)
				snap := map[string]any{"data": blankVolatile(env["data"])}
				for _, k := range []string{"pagination", "content_fidelity", "dropped_content_ids", "warnings", "warning_details", "deprecated"} {
					if v, ok := meta[k]; ok {
						snap["meta."+k] = blankVolatile(v)
					}
				}
				golden(t, filepath.Join("answers", tool.Name+"."+a.Name+".json"), pretty(t, snap))
			})
		}
	}
}

// blankVolatile returns v with the values of volatileKeys replaced by
// "<volatile>" and temporary folder names by "<tmp>", recursively.
func blankVolatile(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if volatileKeys[k] && e != nil {
				out[k] = "<volatile>"
				continue
			}
			out[k] = blankVolatile(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = blankVolatile(e)
		}
		return out
	case string:
		x = holderLabel.ReplaceAllString(x, "#<label>")
		return sessionName.ReplaceAllString(tempName.ReplaceAllString(x, "<tmp>"), "<session>")
	default:
		return v
	}
}
