package tools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"time"
)

// verifyOutputKeep is how many bytes of a command's output execute keeps
// (the last ones): enough for 10,000 characters of any encoding, bounded so
// a runaway command cannot exhaust memory.
const verifyOutputKeep = 64 << 10

// runResult is what one verification command did.
type runResult struct {
	ExitCode   int  // -1 when the command did not exit normally (killed, not started)
	TimedOut   bool // the timeout killed it
	Output     string
	Dropped    bool // output beyond verifyOutputKeep bytes was dropped from the front
	TotalBytes int64
	DurationMS float64
}

// tailBuffer keeps the last verifyOutputKeep bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	total   int64
	dropped bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - verifyOutputKeep; over > 0 {
		t.buf = append(t.buf[:0:0], t.buf[over:]...)
		t.dropped = true
	}
	return len(p), nil
}

// minimalEnv is the environment a verification command gets: PATH, HOME
// and LANG from the server's own environment, nothing else.
func minimalEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// runVerification runs command with sh -c in dir, with minimalEnv, stdin
// empty, stdout and stderr interleaved into one bounded buffer. On timeout
// or cancellation the whole process group is killed (unix) and Wait gives
// up on inherited pipes after a short delay.
func runVerification(ctx context.Context, command, dir string, timeout time.Duration) runResult {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out tailBuffer
	cmd := exec.CommandContext(rctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = minimalEnv()
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 2 * time.Second
	killGroup(cmd)
	start := time.Now()
	err := cmd.Run()
	res := runResult{ExitCode: -1, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	res.TimedOut = errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &exitErr) && exitErr.Exited():
		res.ExitCode = exitErr.ExitCode()
	case !res.TimedOut && cmd.ProcessState == nil:
		out.Write([]byte("specd: could not start sh: " + err.Error() + "\n"))
	}
	if res.TimedOut {
		res.ExitCode = -1
	}
	out.mu.Lock()
	res.Output, res.Dropped, res.TotalBytes = string(out.buf), out.dropped, out.total
	out.mu.Unlock()
	res.DurationMS = float64(int64(res.DurationMS*100)) / 100
	return res
}
