// Package procrun runs a workspace command in its own process group with a
// deadline and capped output: sh -c in a given directory, a minimal
// environment, stdin empty, stdout and stderr interleaved into a buffer that
// keeps the last OutputKeep bytes. Nothing outlives a call: the command's
// whole group is killed when the shell exits, on timeout and on
// cancellation, and on Linux so is every process that left the group but
// carries the call's SPECD_RUN_ID or descends from one that does (the
// server is a child subreaper, so such orphans stay beneath it). Protect makes the calling process non-dumpable so the
// commands cannot read its environment through /proc.
//
// It knows nothing of specs or tools: verification execute and test run
// call Run and turn the Result into their answers.
package procrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// OutputKeep is how many bytes of a command's output Run keeps (the last
// ones): enough for 10,000 characters of any encoding, bounded so a runaway
// command cannot exhaust memory.
const OutputKeep = 64 << 10

// Result is what one command did. Its fields match specs.CommandRun, so a
// caller converts it with specs.CommandRun(res).
type Result struct {
	ExitCode   int  // -1 when the command did not exit normally (killed, not started)
	TimedOut   bool // the timeout killed it
	Output     string
	Dropped    bool // output beyond OutputKeep bytes was dropped from the front
	TotalBytes int64
	DurationMS float64 // wall time, rounded down to 0.01 ms
}

// tailBuffer keeps the last OutputKeep bytes written to it.
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
	if over := len(t.buf) - OutputKeep; over > 0 {
		t.buf = append(t.buf[:0:0], t.buf[over:]...)
		t.dropped = true
	}
	return len(p), nil
}

var runCount atomic.Uint64

// newRunID returns a mark no other Run of any server shares: this
// process's id, a counter and random bits.
func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%d-%s", os.Getpid(), runCount.Add(1), hex.EncodeToString(b[:]))
}

// minimalEnv is the environment a command gets: PATH, HOME
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

// Run runs command with sh -c in dir, with minimalEnv plus SPECD_RUN_ID, stdin
// empty, stdout and stderr interleaved into one bounded buffer. It
// guarantees:
//
//   - the exit status recorded is the shell's own, taken as soon as the
//     shell exits, even when it left a background child holding the output
//     (sleep 60 & echo started is exit 0, not a timeout);
//   - then the command's whole process group is killed (unix), and on Linux
//     every process that carries this call's SPECD_RUN_ID, is in the group
//     or descends from one of those (setsid, double forks) is killed and
//     reaped (see sweep), so no child outlives the call; output still buffered by the group is read for at
//     most outputDrain before the pipe is closed;
//   - on timeout or cancellation the group is killed likewise;
//   - the calling process is non-dumpable first (Protect), so the command
//     cannot read the server's environment through /proc.
//
// A command that cannot start is ExitCode -1 with the reason in Output; a
// cancelled ctx kills the group like a timeout, but TimedOut stays false
// (the caller checks ctx.Err()).
func Run(ctx context.Context, command, dir string, timeout time.Duration) Result {
	Protect(nil)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out tailBuffer
	cmd := exec.CommandContext(rctx, "sh", "-c", command)
	cmd.Dir = dir
	runID := newRunID()
	cmd.Env = append(minimalEnv(), runIDVar+"="+runID)
	becomeSubreaper()
	// The command writes into a pipe of our own: exec then runs no copying
	// goroutine, so Wait returns when sh exits, not when the last holder
	// of its output does.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{ExitCode: -1, Output: "specd: could not create a pipe: " + err.Error() + "\n"}
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
		sweep(cmd.Process.Pid, runID)
	}
	res := Result{ExitCode: -1, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	res.TimedOut = errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	drain(copied, pr)
	res.ExitCode = exitStatus(err, cmd, res.TimedOut, &out)
	out.mu.Lock()
	res.Output, res.Dropped, res.TotalBytes = string(out.buf), out.dropped, out.total
	out.mu.Unlock()
	res.DurationMS = float64(int64(res.DurationMS*100)) / 100
	return res
}

// drain waits until copied closes (the copy of the output reached the
// pipe's end), at most outputDrain before it closes pr to end the copy
// (a descendant escaped the group and keeps the pipe open); pr is closed
// either way.
func drain(copied <-chan struct{}, pr *os.File) {
	select {
	case <-copied:
	case <-time.After(outputDrain):
		_ = pr.Close()
		<-copied
	}
	_ = pr.Close()
}

// exitStatus is the ExitCode of a Run whose Wait (or Start) returned err:
// the shell's exit status when it exited, -1 when it timed out, was killed
// by a signal or did not start; a shell that did not start (not on a
// timeout) has the reason written to out.
func exitStatus(err error, cmd *exec.Cmd, timedOut bool, out io.Writer) int {
	var exitErr *exec.ExitError
	switch {
	case timedOut:
		return -1
	case err == nil:
		return 0
	case errors.As(err, &exitErr) && exitErr.Exited():
		return exitErr.ExitCode()
	case cmd.ProcessState == nil:
		_, _ = out.Write([]byte("specd: could not start sh: " + err.Error() + "\n"))
	}
	return -1
}

// outputDrain bounds how long output is read after the shell exited and its
// group was killed.
const outputDrain = 2 * time.Second

var protectOnce sync.Once

// Protect marks the calling process non-dumpable on Linux (see
// protectProcess), once per process; Run calls it before its first command,
// and serve calls it at start. A failure is logged (to log, or slog's
// default when nil), never fatal.
func Protect(log *slog.Logger) {
	protectOnce.Do(func() {
		if err := protectProcess(); err != nil {
			if log == nil {
				log = slog.Default()
			}
			log.Warn("could not mark the process non-dumpable; commands run by verification execute may read its environment", "err", err)
		}
	})
}
