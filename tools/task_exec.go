package tools

import (
	"context"
	"errors"
	"io"
	"log/slog"
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
// empty, stdout and stderr interleaved into one bounded buffer. It
// guarantees:
//
//   - the exit status recorded is the shell's own, taken as soon as the
//     shell exits, even when it left a background child holding the output
//     (sleep 60 & echo started is exit 0, not a timeout);
//   - then the command's whole process group is killed (unix), so no child
//     outlives the call; output still buffered by the group is read for at
//     most outputDrain before the pipe is closed;
//   - on timeout or cancellation the group is killed likewise;
//   - the server process is non-dumpable first (ProtectProcess), so the
//     command cannot read the server's environment through /proc.
func runVerification(ctx context.Context, command, dir string, timeout time.Duration) runResult {
	ProtectProcess(nil)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out tailBuffer
	cmd := exec.CommandContext(rctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = minimalEnv()
	// The command writes into a pipe of our own: exec then runs no copying
	// goroutine, so Wait returns when sh exits, not when the last holder
	// of its output does.
	pr, pw, err := os.Pipe()
	if err != nil {
		return runResult{ExitCode: -1, Output: "specd: could not create a pipe: " + err.Error() + "\n"}
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.WaitDelay = outputDrain
	killGroup(cmd)
	start := time.Now()
	err = cmd.Start()
	_ = pw.Close() // the children hold their own copies
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&out, pr)
		close(copied)
	}()
	if err == nil {
		err = cmd.Wait()
		killGroupNow(cmd)
	}
	res := runResult{ExitCode: -1, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	res.TimedOut = errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	select {
	case <-copied:
	case <-time.After(outputDrain): // a descendant escaped the group and keeps the pipe
		_ = pr.Close()
		<-copied
	}
	_ = pr.Close()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &exitErr) && exitErr.Exited():
		res.ExitCode = exitErr.ExitCode()
	case !res.TimedOut && cmd.ProcessState == nil:
		_, _ = out.Write([]byte("specd: could not start sh: " + err.Error() + "\n"))
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

// outputDrain bounds how long output is read after the shell exited and its
// group was killed.
const outputDrain = 2 * time.Second

var protectOnce sync.Once

// ProtectProcess marks the server process non-dumpable on Linux (see
// protectProcess), once; runVerification calls it before its first command,
// and serve calls it at start. A failure is logged, not fatal.
func ProtectProcess(log *slog.Logger) {
	protectOnce.Do(func() {
		if err := protectProcess(); err != nil {
			if log == nil {
				log = slog.Default()
			}
			log.Warn("could not mark the process non-dumpable; commands run by verification execute may read its environment", "err", err)
		}
	})
}
