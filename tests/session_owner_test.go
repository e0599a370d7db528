package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// sessionRequest sends one request of method to /mcp with key id's key
// ("": none) naming session sid ("": none), and returns its status. A GET
// that is let in becomes an event stream: the status is read and the stream
// dropped.
func (s *sharedServer) sessionRequest(t testing.TB, method, keyID, sid, body string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+"/mcp", strings.NewReader(body))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if keyID != "" {
		req.Header.Set("Authorization", "Bearer "+s.Keys[keyID])
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestSharedServerSessionBelongsToItsKey: over real HTTP with two keys, a
// session id used with another key, or with none, neither reads the
// owner's stream (GET), posts into the session (POST) nor ends it
// (DELETE): 404 with another key, 401 without one, never 200 or 500; the
// owner's session works through it all and ends on its own DELETE.
func TestSharedServerSessionBelongsToItsKey(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:maintainer", "bob:maintainer"})
	resp, _ := s.post(t, "ann", "", initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("ann's initialize: %d, session %q", resp.StatusCode, sid)
	}
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, tc := range []struct {
		method, key string
		want        int
	}{
		{http.MethodGet, "bob", http.StatusNotFound},
		{http.MethodPost, "bob", http.StatusNotFound},
		{http.MethodDelete, "bob", http.StatusNotFound},
		{http.MethodGet, "", http.StatusUnauthorized},
		{http.MethodPost, "", http.StatusUnauthorized},
		{http.MethodDelete, "", http.StatusUnauthorized},
	} {
		body := ""
		if tc.method == http.MethodPost {
			body = ping
		}
		if got := s.sessionRequest(t, tc.method, tc.key, sid, body); got != tc.want {
			t.Errorf("%s of ann's session with key %q: %d, want %d", tc.method, tc.key, got, tc.want)
		}
		if got := s.sessionRequest(t, http.MethodPost, "ann", sid, ping); got != http.StatusOK {
			t.Fatalf("ann's own ping after %s with key %q: %d, want 200", tc.method, tc.key, got)
		}
	}
	if got := s.sessionRequest(t, http.MethodDelete, "ann", "", ""); got != http.StatusBadRequest {
		t.Errorf("DELETE naming no session: %d, want 400", got)
	}
	if got := s.sessionRequest(t, http.MethodDelete, "ann", sid, ""); got != http.StatusOK {
		t.Fatalf("ann's DELETE of her session: %d, want 200", got)
	}
	if got := s.sessionRequest(t, http.MethodPost, "ann", sid, ping); got != http.StatusNotFound {
		t.Fatalf("ann's ping after her DELETE: %d, want 404", got)
	}
}

// TestSharedServerClaimsHideSessionIDs: a claim (task next with claim, task
// start) records the agent as key id / client name # label; an observer
// reading the task (task info, task list, spec get, the spec and journal
// resources) never sees the holder's transport session id, and the holder
// is still told apart: its own session completes the task, another
// session of the same key and client is CONFLICT.
func TestSharedServerClaimsHideSessionIDs(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:maintainer", "eve:observer"})
	ann := s.client(t, "ann")
	sid := ann.GetSessionId()
	if !strings.HasPrefix(sid, "mcp-session-") {
		t.Fatalf("ann's session id %q", sid)
	}
	specID := taskOK(t, ann, "authoring", map[string]any{"action": "spec-create", "name": "claims"})["spec_id"].(string)
	taskOK(t, ann, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": specID, "phase": map[string]any{"title": "P"},
		"tasks": []any{map[string]any{"title": "A", "file_path": "a.go"}, map[string]any{"title": "B", "file_path": "b.go"}}})
	taskOK(t, ann, "lifecycle", map[string]any{"action": "activate", "spec_id": specID})
	next := taskOK(t, ann, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
	claimed, _ := next["task_id"].(string)
	other := "task-1-2"
	if claimed == other {
		other = "task-1-1"
	}
	start := taskOK(t, ann, "task", map[string]any{"action": "start", "spec_id": specID, "task_id": other})
	holder, _ := start["task"].(map[string]any)["metadata"].(map[string]any)["started_by"].(string)
	if !regexp.MustCompile(`^ann/specd-tests#[0-9a-f]{12}$`).MatchString(holder) {
		t.Fatalf("started_by %q, want ann/specd-tests#<label>", holder)
	}

	eve := s.client(t, "eve")
	var seen []string
	for _, args := range []map[string]any{
		{"action": "info", "spec_id": specID, "task_id": claimed},
		{"action": "info", "spec_id": specID, "task_id": other},
		{"action": "list", "spec_id": specID},
		{"action": "next", "spec_id": specID},
	} {
		b, _ := json.Marshal(call(t, eve, "task", args))
		seen = append(seen, string(b))
	}
	b, _ := json.Marshal(call(t, eve, "spec", map[string]any{"action": "get", "spec_id": specID}))
	seen = append(seen, string(b))
	for _, uri := range []string{"specd://specs", "specd://specs/" + specID, "specd://specs/" + specID + "/journal"} {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := eve.ReadResource(context.Background(), req)
		if err != nil {
			t.Fatalf("resources/read %s: %v", uri, err)
		}
		b, _ := json.Marshal(res)
		seen = append(seen, string(b))
	}
	all := strings.Join(seen, "\n")
	if !strings.Contains(all, holder) {
		t.Fatalf("the observer does not see the holder %q at all:\n%s", holder, all)
	}
	if strings.Contains(all, sid) || strings.Contains(all, strings.TrimPrefix(sid, "mcp-session-")) {
		t.Fatalf("an observer reads ann's session id %s:\n%s", sid, all)
	}

	// Another session of the same key and client is another agent.
	ann2 := s.client(t, "ann")
	env := call(t, ann2, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": claimed, "completion_note": "not mine"})
	if det, _ := data(env)["details"].(map[string]any); errorCode(env) != "CONFLICT" || det["started_by"] != holder {
		t.Fatalf("complete by ann's second session: %v", env)
	}
	if det, _ := data(call(t, ann2, "task", map[string]any{"action": "start", "spec_id": specID, "task_id": other}))["details"].(map[string]any); det["started_by"] != holder {
		t.Fatalf("start by ann's second session: CONFLICT naming %v, want %q", det["started_by"], holder)
	}
	// The holder's own session is still the holder.
	taskOK(t, ann, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": claimed, "completion_note": "done"})
	taskOK(t, ann, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": other, "completion_note": "done"})
}
