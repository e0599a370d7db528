// Package gitdiff summarises the uncommitted changes of a git work tree
// (git diff --numstat against HEAD), for pr get-context. It runs git with
// a minimal environment and a timeout, and answers only paths relative to
// the work tree.
package gitdiff

import (
	"bytes"
	"context"
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
	Truncated bool   `json:"truncated,omitempty"`
}

// timeout bounds each git command.
const timeout = 10 * time.Second

func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	return cmd.Output()
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
	if out, err := git(ctx, dir, "rev-parse", "--abbrev-ref", "HEAD"); err == nil {
		s.Branch = strings.TrimSpace(string(out))
	} else {
		s.Reason = "the workspace is not a git work tree with a commit"
		return s
	}
	out, err := git(ctx, dir, "diff", "--numstat", "HEAD")
	if err != nil {
		s.Reason = "git diff failed"
		return s
	}
	s.Available = true
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		f := strings.SplitN(string(line), "\t", 3)
		if len(f) != 3 {
			continue
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
			continue
		}
		s.Files = append(s.Files, File{Path: f[2], Additions: a, Deletions: d})
	}
	return s
}
