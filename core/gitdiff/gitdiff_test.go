package gitdiff

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git work tree with one commit of files a.txt..., then
// changes n of them (one added line each) and adds one binary file.
func repo(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	for i := 0; i < n; i++ {
		write(t, dir, fmt.Sprintf("file-%04d.txt", i), "one\n")
	}
	write(t, dir, "keep.txt", "x\n")
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	for i := 0; i < n; i++ {
		write(t, dir, fmt.Sprintf("file-%04d.txt", i), "one\ntwo\nthree\n")
	}
	return dir
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	small := repo(t, 3)
	many := repo(t, 300)
	tests := []struct {
		name      string
		dir       string
		max       int
		capBytes  int64
		files     int
		additions int
		truncated bool
		partial   bool
		available bool
	}{
		{name: "not a work tree", dir: t.TempDir(), max: 10, capBytes: 1 << 20},
		{name: "all files", dir: small, max: 10, capBytes: 1 << 20, files: 3, additions: 6, available: true},
		{name: "max files, totals whole", dir: many, max: 5, capBytes: 1 << 20, files: 5, additions: 600, truncated: true, available: true},
		// Each line is "2\t0\tfile-NNNN.txt\n" (19 bytes): 100 bytes hold 5
		// whole lines; the sixth is cut and must not be counted.
		{name: "output cap", dir: many, max: 1000, capBytes: 100, files: 5, additions: 10, truncated: true, partial: true, available: true},
		{name: "cap exactly the output", dir: small, max: 10, capBytes: 3 * 19, files: 3, additions: 6, available: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := MaxOutput
			MaxOutput = tc.capBytes
			defer func() { MaxOutput = old }()
			s := Diff(context.Background(), tc.dir, tc.max)
			if s.Available != tc.available || len(s.Files) != tc.files || s.Additions != tc.additions ||
				s.Truncated != tc.truncated || s.PartialTotals != tc.partial {
				t.Fatalf("got available=%v files=%d additions=%d truncated=%v partial=%v (reason %q), want %v %d %d %v %v",
					s.Available, len(s.Files), s.Additions, s.Truncated, s.PartialTotals, s.Reason,
					tc.available, tc.files, tc.additions, tc.truncated, tc.partial)
			}
			for _, f := range s.Files {
				if !strings.HasPrefix(f.Path, "file-") || !strings.HasSuffix(f.Path, ".txt") || filepath.IsAbs(f.Path) {
					t.Fatalf("path %q: want a whole work-tree-relative name", f.Path)
				}
			}
			if !tc.available && s.Reason == "" {
				t.Fatal("an unavailable diff must say why")
			}
		})
	}
}
