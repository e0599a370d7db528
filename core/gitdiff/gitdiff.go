// Package gitdiff summarises the uncommitted changes of a git work tree
// (git diff --numstat against HEAD), for pr get-context. It runs git with
// a minimal environment and a timeout, reads at most MaxOutput bytes of
// its output, and answers only paths relative to the work tree.
package gitdiff

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// File is one changed file.
type File struct {
	Path      string `json:"path"`
	Additions int    `json:"additions"` // -1 for a binary file
	Deletions int    `json:"deletions"`
}

// Summary is the diff summary.
type Summary struct {
	Available bool   `json:"available"`        // git ran in a work tree
	Reason    string `json:"reason,omitempty"` // why not, when not
	Branch    string `json:"branch,omitempty"`
	Files     []File `json:"files"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	// Truncated: Files stops short of every changed file (more than the
	// caller's max, or git's output passed MaxOutput).
	Truncated bool `json:"truncated,omitempty"`
	// PartialTotals: git's output passed MaxOutput, so Additions and
	// Deletions count only the files read before the cut.
	PartialTotals bool `json:"partial_totals,omitempty"`
}

// timeout bounds each git command.
const timeout = 10 * time.Second

// MaxOutput bounds the bytes of `git diff --numstat` read for one summary
// (about 15,000 files of ordinary path length). Past it git is stopped
// and the summary is marked Truncated and PartialTotals: a work tree with
// a huge diff cannot make the server hold its whole output.
var MaxOutput int64 = 1 << 20

// maxLine bounds one numstat line (a path longer than this is not kept).
const maxLine = 64 << 10

func command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	return cmd
}

// Diff summarises the changes in dir against HEAD (staged and not), at
// most max files. A folder that is not a git work tree, or no git, is
// Available false with the reason, not an error.
func Diff(ctx context.Context, dir string, max int) Summary {
	s := Summary{Files: []File{}}
	if _, err := exec.LookPath("git"); err != nil {
		s.Reason = "git is not installed"
		return s
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := command(ctx, dir, "rev-parse", "--abbrev-ref", "HEAD").Output()
	if err != nil {
		s.Reason = "the workspace is not a git work tree with a commit"
		return s
	}
	s.Branch = strings.TrimSpace(string(out))
	if err := numstat(ctx, dir, max, &s); err != nil {
		s = Summary{Files: []File{}, Branch: s.Branch, Reason: "git diff failed"}
		return s
	}
	s.Available = true
	return s
}

// numstat streams `git diff --numstat HEAD` into s, reading at most
// MaxOutput bytes; past that it stops git and marks s partial.
func numstat(ctx context.Context, dir string, max int, s *Summary) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := command(ctx, dir, "diff", "--numstat", "HEAD")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	// One byte more than the cap tells "exactly MaxOutput bytes" from "cut".
	lr := &io.LimitedReader{R: pipe, N: MaxOutput + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 4096), maxLine)
	sc.Split(wholeLines)
	for sc.Scan() {
		s.add(sc.Bytes(), max)
	}
	cut := sc.Err() != nil || lr.N == 0
	if cut {
		// A line past maxLine or output past the cap: stop git rather than
		// read the rest.
		stop()
	}
	werr := cmd.Wait()
	if cut {
		s.Truncated, s.PartialTotals = true, true
		return nil
	}
	return werr
}

// wholeLines splits at newlines and drops an unterminated tail: git ends
// every numstat line with one, so a tail is the line the output cap cut.
func wholeLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF {
		return len(data), nil, nil
	}
	return 0, nil, nil
}

// add counts one numstat line ("<added>\t<deleted>\t<path>").
func (s *Summary) add(line []byte, max int) {
	f := strings.SplitN(string(line), "\t", 3)
	if len(f) != 3 {
		return
	}
	a, errA := strconv.Atoi(f[0])
	d, errD := strconv.Atoi(f[1])
	if errA != nil || errD != nil {
		a, d = -1, 0
	} else {
		s.Additions += a
		s.Deletions += d
	}
	if len(s.Files) == max {
		s.Truncated = true
		return
	}
	s.Files = append(s.Files, File{Path: f[2], Additions: a, Deletions: d})
}
