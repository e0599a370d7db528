package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs/specstore"
)

// What a successful answer carries besides its data (README "The
// response-v2 envelope"), checked through a real MCP client.

// TestSpecGetPartialListsEachDropOnce: a spec get cut to fit its budget
// reports the cut once: every dropped id once, one CONTENT_TRUNCATED
// warning whose dropped_count is the number of ids. (The handler's own fit
// and the answer budget's re-fit used to both report, each its own list.)
func TestSpecGetPartialListsEachDropOnce(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[1])
	specID := seedSpec(t, deps.Specs.(*specstore.Repo), 300)
	for i := 0; i < 40; i++ {
		call(t, c, "journal", map[string]any{"action": "add", "spec_id": specID, "title": fmt.Sprintf("Note %d", i), "content": strings.Repeat("y", 3000)})
	}
	degraded := 0
	for mt := 1_000; mt <= 25_000; mt += 1_000 {
		env := call(t, c, "spec", map[string]any{"action": "get", "spec_id": specID, "max_tokens": mt})
		if env["success"] != true {
			t.Fatalf("max_tokens %d: %v", mt, env["data"])
		}
		meta := env["meta"].(map[string]any)
		if meta["content_fidelity"] == nil {
			continue
		}
		degraded++
		ids, _ := meta["dropped_content_ids"].([]any)
		seen := map[any]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("max_tokens %d: %v listed twice among %d dropped ids", mt, id, len(ids))
			}
			seen[id] = true
		}
		var truncated []map[string]any
		for _, w := range meta["warning_details"].([]any) {
			if w := w.(map[string]any); w["code"] == "CONTENT_TRUNCATED" {
				truncated = append(truncated, w)
			}
		}
		if len(truncated) != 1 {
			t.Fatalf("max_tokens %d: %d CONTENT_TRUNCATED warnings for one cut: %v", mt, len(truncated), truncated)
		}
		if n := truncated[0]["context"].(map[string]any)["dropped_count"]; n != float64(len(ids)) {
			t.Fatalf("max_tokens %d: dropped_count %v, %d dropped ids", mt, n, len(ids))
		}
		if w := meta["warnings"].([]any); len(w) != len(meta["warning_details"].([]any)) {
			t.Fatalf("max_tokens %d: %d warnings, %d details", mt, len(w), len(meta["warning_details"].([]any)))
		}
	}
	if degraded == 0 {
		t.Fatal("no max_tokens degraded the answer: the test checks nothing")
	}
}

// TestDigestNeverLongerThanSource: a source too short to compress gives a
// digest that keeps the source text (as its summary) with
// compression_ratio 1, says so in a warning, and still validates against
// its source; a source that compresses carries no such warning.
func TestDigestNeverLongerThanSource(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[1])
	const html = "<p>Foxes are quick. Dogs sleep all day long.</p>"
	env := call(t, c, "research", map[string]any{"action": "digest-create", "text": html, "query": "foxes"})
	if env["success"] != true {
		t.Fatalf("digest-create: %v", env)
	}
	p := data(env)["payload"].(map[string]any)
	digest, original := p["digest_chars"].(float64), p["original_chars"].(float64)
	if digest > original {
		t.Fatalf("digest of %v characters from a %v-character source: %v", digest, original, p)
	}
	if p["summary"] != "Foxes are quick. Dogs sleep all day long." || p["compression_ratio"] != 1.0 {
		t.Fatalf("the source text is not kept: %v", p)
	}
	if !hasWarning(env, "DIGEST_NOT_COMPRESSED") {
		t.Fatalf("no DIGEST_NOT_COMPRESSED warning: %v", env["meta"])
	}
	v := call(t, c, "research", map[string]any{"action": "digest-validate", "payload": p, "text": html})
	if v["success"] != true || data(v)["valid"] != true {
		t.Fatalf("the kept digest does not validate: %v", v["data"])
	}
	// Longer than a summary may be, but not long enough for summary, key
	// points and snippets together: the key points and the last snippets go.
	const sentence = "Foxes run across the open field at dawn while the farm sleeps. Nothing else moves. "
	mid := strings.Repeat(sentence, 40)
	env = call(t, c, "research", map[string]any{"action": "digest-create", "text": mid, "query": "foxes"})
	if p := data(env)["payload"].(map[string]any); p["digest_chars"].(float64) > p["original_chars"].(float64) || !hasWarning(env, "DIGEST_NOT_COMPRESSED") || len(p["key_points"].([]any)) != 0 {
		t.Fatalf("a %d-character source: %v %v", len(mid), p, env["meta"])
	}
	long := strings.Repeat(sentence, 400)
	env = call(t, c, "research", map[string]any{"action": "digest-create", "text": long, "query": "foxes"})
	if p := data(env)["payload"].(map[string]any); p["digest_chars"].(float64) >= p["original_chars"].(float64) || hasWarning(env, "DIGEST_NOT_COMPRESSED") || len(p["key_points"].([]any)) == 0 {
		t.Fatalf("a long source: %v %v", p["compression_ratio"], env["meta"])
	}
}

// hasWarning reports whether env's meta carries a warning with code.
func hasWarning(env map[string]any, code string) bool {
	ws, _ := env["meta"].(map[string]any)["warning_details"].([]any)
	for _, w := range ws {
		if w.(map[string]any)["code"] == code {
			return true
		}
	}
	return false
}

// maxLoopBytes bounds what the normal loop costs an agent to read: task
// next with claim, task prepare of the claimed task, task complete.
const maxLoopBytes = 2400

// TestLoopCost prints the bytes of the three answers of the normal loop
// and fails above maxLoopBytes; each answer must still carry what the
// agent acts on (the task and its description and file, its
// dependencies and context, the progress and the next call).
func TestLoopCost(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[1])
	fx := fixture(t, c)
	specID := fx["$spec_id"]
	next, nb := callSized(t, c, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
	taskID, _ := data(next)["task_id"].(string)
	if next["success"] != true || data(next)["claimed"] != true || data(next)["title"] != "First task" ||
		data(next)["metadata"].(map[string]any)["description"] != "do a" || data(next)["metadata"].(map[string]any)["file_path"] != "a.go" {
		t.Fatalf("next: %v", next)
	}
	prep, pb := callSized(t, c, "task", map[string]any{"action": "prepare", "spec_id": specID, "task_id": taskID})
	pd := data(prep)
	if prep["success"] != true || pd["task_id"] != taskID || pd["task"].(map[string]any)["metadata"].(map[string]any)["description"] != "do a" ||
		pd["dependencies"].(map[string]any)["can_start"] != true || pd["context"].(map[string]any)["phase"] == nil {
		t.Fatalf("prepare: %v", prep)
	}
	done, cb := callSized(t, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": taskID, "completion_note": "done"})
	cd := data(done)
	if done["success"] != true || cd["status"] != "completed" || cd["progress"] == nil || cd["phase"] == nil {
		t.Fatalf("complete: %v", done)
	}
	t.Logf("loop: next %d + prepare %d + complete %d = %d bytes (budget %d)", nb, pb, cb, nb+pb+cb, maxLoopBytes)
	nc, _ := cd["next_calls"].([]any)
	if len(nc) == 0 {
		t.Fatalf("complete names no next call: %v", cd)
	}
	if nb+pb+cb > maxLoopBytes {
		t.Fatalf("the loop costs %d bytes, over %d", nb+pb+cb, maxLoopBytes)
	}
	// The next call runs as given and leads on: the next task, claimed.
	first := nc[0].(map[string]any)
	again := call(t, c, first["tool"].(string), first["args"].(map[string]any))
	if again["success"] != true || data(again)["task_id"] == taskID || data(again)["claimed"] != true {
		t.Fatalf("complete's next call %v: %v", first, again)
	}
}

// TestNextCallsLeadOn: successes with an obvious next step name it in
// data.next_calls, and each runs as given and does that step: spec-create
// → phase-add, an empty spec list → spec-create, a spec with no phase →
// its task list names phase-add, the last completion → lifecycle complete.
func TestNextCallsLeadOn(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[1])
	follow := func(what string, env map[string]any) map[string]any {
		t.Helper()
		nc, _ := data(env)["next_calls"].([]any)
		if env["success"] != true || len(nc) != 1 {
			t.Fatalf("%s: want one next call: %v", what, env)
		}
		next := nc[0].(map[string]any)
		got := call(t, c, next["tool"].(string), next["args"].(map[string]any))
		if got["success"] != true {
			t.Fatalf("%s: next call %v failed: %v", what, next, got["data"])
		}
		return got
	}
	created := follow("empty spec list", call(t, c, "spec", map[string]any{"action": "list"}))
	specID := data(created)["spec_id"].(string)
	if list := call(t, c, "spec", map[string]any{"action": "list"}); data(list)["count"] != 1.0 || data(list)["next_calls"] != nil {
		t.Fatalf("spec list after the first spec: %v", list)
	}
	emptyTasks := call(t, c, "task", map[string]any{"action": "list", "spec_id": specID})
	phase := follow("spec-create", created)
	if data(phase)["spec_id"] != specID {
		t.Fatalf("phase-add on another spec: %v", phase)
	}
	follow("task list of a spec without phases", emptyTasks)
	if list := call(t, c, "task", map[string]any{"action": "list", "spec_id": specID}); data(list)["count"].(float64) == 0 || data(list)["next_calls"] != nil {
		t.Fatalf("task list of a spec with phases: %v", list)
	}
	// Complete every task through the loop; the last completion names
	// lifecycle complete, which completes the spec.
	call(t, c, "lifecycle", map[string]any{"action": "activate", "spec_id": specID})
	for i := 0; ; i++ {
		next := call(t, c, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
		if data(next)["found"] != true {
			t.Fatalf("ran out of tasks before the spec was complete: %v", next)
		}
		done := call(t, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": data(next)["task_id"], "completion_note": "done"})
		nc := data(done)["next_calls"].([]any)[0].(map[string]any)
		if nc["tool"] == "lifecycle" {
			end := follow("the last completion", done)
			if data(end)["spec_id"] != specID {
				t.Fatalf("lifecycle complete: %v", end)
			}
			return
		}
		if nc["tool"] != "task" || nc["args"].(map[string]any)["action"] != "next" || i > 20 {
			t.Fatalf("complete's next call: %v", nc)
		}
	}
}

// TestDeadlineHoldsForCPUBoundWork: with a 1 ms call deadline, reads that
// spend their time computing (spec get and validate of a large spec, a
// 4.5 MB digest-create) answer the dispatcher's deadline refusal —
// UNAVAILABLE with details.timeout_ms and a recovery — instead of
// running to the end; with the usual deadline they succeed.
func TestDeadlineHoldsForCPUBoundWork(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	specID := seedSpec(t, deps.Specs.(*specstore.Repo), 1500)
	big := strings.Repeat("Foxes run across the open field at dawn while the farm sleeps. ", 4_500_000/64)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"spec", map[string]any{"action": "get", "spec_id": specID}},
		{"spec", map[string]any{"action": "validate", "spec_id": specID}},
		{"research", map[string]any{"action": "digest-create", "text": big, "query": "foxes"}},
	}
	// The harness's 10 s deadline is a wall-clock budget: under -race on a
	// loaded machine the 4.5 MB digest alone has taken longer. What is
	// checked here is that the work completes when given time, so give it.
	roomy := *deps
	roomy.Runtime.Deadline = 5 * time.Minute
	normal, _ := inProcess(t, &roomy, protocols[1])
	for _, cl := range calls {
		// (validate of this spec reports more than the budget holds: it
		// ran to the end all the same.)
		if env := call(t, normal, cl.tool, cl.args); env["success"] != true && errorCode(env) != "PAYLOAD_TOO_LARGE" {
			t.Fatalf("%s %v with the usual deadline: %v", cl.tool, cl.args["action"], errorCode(env))
		}
	}
	short := *deps
	short.Runtime.Deadline = time.Millisecond
	c, _ := inProcess(t, &short, protocols[1])
	for _, cl := range calls {
		env := call(t, c, cl.tool, cl.args)
		if env["success"] != false || errorCode(env) != "UNAVAILABLE" || data(env)["details"].(map[string]any)["timeout_ms"] != 1.0 {
			t.Fatalf("%s %v under a 1 ms deadline: %v %v", cl.tool, cl.args["action"], errorCode(env), env["error"])
		}
	}
}

// TestVerificationExecuteReportsTimeoutAndCut: a verify command the
// timeout kills says so in a VERIFY_TIMED_OUT warning, and output cut to
// its end sets content_fidelity partial with a CONTENT_TRUNCATED warning;
// a short run carries neither.
func TestVerificationExecuteReportsTimeoutAndCut(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	db := storetest.Open(t).Path()
	on := stdioOnStore(t, db, protocols[1], "--enable-verification-execute", "--flags", writeFlagFile(t, map[string]string{"verification_execute": "on"}))
	specID, _ := seedWorkSpec(t, on)
	run := func(command string, record bool) map[string]any {
		t.Helper()
		taskOK(t, on, "task", map[string]any{"action": "update-metadata", "spec_id": specID, "task_id": "verify-1-1", "command": command})
		env := call(t, on, "verification", map[string]any{"action": "execute", "spec_id": specID, "verify_id": "verify-1-1", "timeout_seconds": 1, "record": record})
		if env["success"] != true {
			t.Fatalf("%s: %v", command, env)
		}
		return env
	}
	if env := run("echo ok", false); hasWarning(env, "VERIFY_TIMED_OUT") || env["meta"].(map[string]any)["content_fidelity"] != nil {
		t.Fatalf("a short run: %v", env["meta"])
	}
	for _, record := range []bool{false, true} {
		if env := run("echo started; sleep 30", record); data(env)["timed_out"] != true || !hasWarning(env, "VERIFY_TIMED_OUT") {
			t.Fatalf("timed out (record %v): %v %v", record, data(env), env["meta"])
		}
		env := run("yes specd | head -c 30000", record)
		meta := env["meta"].(map[string]any)
		if data(env)["output_truncated"] != true || meta["content_fidelity"] != "partial" || !hasWarning(env, "CONTENT_TRUNCATED") {
			t.Fatalf("cut output (record %v): %v", record, meta)
		}
	}
}

// TestListsCarryTotalCount: spec history, whose count is known without
// reading the versions, carries meta.pagination.total_count on every page,
// equal to the versions its pages list.
func TestListsCarryTotalCount(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[1])
	specID := fixture(t, c)["$spec_id"]
	for i := 0; i < 4; i++ {
		call(t, c, "authoring", map[string]any{"action": "phase-add", "spec_id": specID, "title": fmt.Sprintf("Extra %d", i)})
	}
	args := map[string]any{"action": "history", "spec_id": specID, "limit": 2}
	seen, totals := 0, map[any]bool{}
	pageThrough(t, c, call(t, c, "spec", args), "spec", args, 25_000, 20, func(page map[string]any) {
		seen += len(data(page)["versions"].([]any))
		totals[page["meta"].(map[string]any)["pagination"].(map[string]any)["total_count"]] = true
	})
	if len(totals) != 1 || totals[float64(seen)] != true || seen < 5 {
		t.Fatalf("total_count %v over pages listing %d versions", totals, seen)
	}
}
