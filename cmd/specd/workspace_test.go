package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestResolveWorkspace(t *testing.T) {
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	plain := filepath.Join(tmp, "plain", "sub")
	repo := filepath.Join(tmp, "repo")
	deep := filepath.Join(repo, "a", "b")
	wt := filepath.Join(tmp, "wt")
	for _, d := range []string{plain, deep, filepath.Join(repo, ".git", "worktrees", "wt"), wt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A worktree: .git is a file pointing at .git/worktrees/wt, whose
	// commondir points back at the main .git.
	must(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), []byte("../..\n"), 0o644))

	tests := []struct {
		name, explicit, dir, want, how string
	}{
		{"explicit wins", filepath.Join(tmp, "x"), deep, filepath.Join(tmp, "x"), "explicit"},
		{"inside a repository", "", deep, repo, "git"},
		{"worktree shares the main repository", "", wt, repo, "git"},
		{"no repository", "", plain, plain, "cwd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, how := resolveWorkspace(tt.explicit, tt.dir)
			if got != tt.want || how != tt.how {
				t.Fatalf("resolveWorkspace(%q, %q) = %q (%s), want %q (%s)", tt.explicit, tt.dir, got, how, tt.want, tt.how)
			}
		})
	}
}

// TestResolveWorkspaceMatchesGit checks the file-reading resolution against
// git itself on a real repository with a real worktree, where git exists.
func TestResolveWorkspaceMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(tmp, "repo")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(t, os.MkdirAll(repo, 0o755))
	run(repo, "init", "-q")
	run(repo, "commit", "-q", "--allow-empty", "-m", "init")
	run(repo, "worktree", "add", "-q", filepath.Join(tmp, "wt2"))
	for _, dir := range []string{repo, filepath.Join(tmp, "wt2")} {
		if got, _ := resolveWorkspace("", dir); got != repo {
			t.Errorf("resolveWorkspace(%q) = %q, want %q", dir, got, repo)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
