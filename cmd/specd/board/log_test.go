package board_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/specd/specd/cmd/specd/board"
)

// lockedBuffer is a log sink the board's request goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines are the JSON log lines written so far.
func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(l.b.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestBoardReadsLogAtDebug: the reads behind a board page are logged at
// debug, so a person refreshing a page does not flood a server log at the
// default level (info); a read that is refused (a page for a spec that does
// not exist) stays at info.
func TestBoardReadsLogAtDebug(t *testing.T) {
	var sink lockedBuffer
	srv := newBoard(t, false, board.Config{Logger: slog.New(slog.NewJSONHandler(&sink, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for _, p := range []string{"/", "/", "/specs/no-such-spec"} {
		get(t, srv, p, nil)
	}
	levels := map[bool]map[string]int{true: {}, false: {}}
	for _, m := range sink.lines(t) {
		if m["msg"] == "call" {
			ok, _ := m["ok"].(bool)
			levels[ok][m["level"].(string)]++
		}
	}
	if len(levels[true]) != 1 || levels[true]["DEBUG"] == 0 {
		t.Errorf("reads that succeeded were logged at %v, want DEBUG only", levels[true])
	}
	if len(levels[false]) != 1 || levels[false]["INFO"] == 0 {
		t.Errorf("refused reads were logged at %v, want INFO only", levels[false])
	}
	if code := get(t, srv, "/specs/no-such-spec", nil); code != http.StatusNotFound {
		t.Errorf("a missing spec's page: %d", code)
	}
}
