package flags

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
)

// stderrMu serialises the swap of os.Stderr in quietProvider.
var stderrMu sync.Mutex

// quietProvider runs newProvider with os.Stderr pointed at a pipe, so the
// zap logger the flagd provider builds for itself (JSON at info level,
// straight to os.Stderr, not configurable) writes into the pipe instead; its
// lines are forwarded to log at debug level. specd logs through log/slog
// only. The returned stop closes the pipe once the provider is shut down.
func quietProvider[T any](log *slog.Logger, newProvider func() (T, error)) (T, func(), error) {
	r, w, err := os.Pipe()
	if err != nil {
		p, err := newProvider()
		return p, func() {}, err
	}
	stderrMu.Lock()
	saved := os.Stderr
	os.Stderr = w
	p, perr := newProvider()
	os.Stderr = saved
	stderrMu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct {
				Level string `json:"level"`
				Msg   string `json:"msg"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				line.Msg = sc.Text()
			}
			log.Debug("flagd: "+line.Msg, "flagd_level", line.Level)
		}
		r.Close()
	}()
	return p, func() { w.Close(); <-done }, perr
}
