package main

import (
	"os"
	"path/filepath"
	"strings"
)

// resolveWorkspace picks the workspace root: explicit (flag or SPECD_WORKSPACE)
// if given; else the parent of the git common directory of the repository
// containing dir, so every worktree of one repository shares one store; else
// dir itself. It reads .git files directly (no git process), following
// "gitdir:" pointers and the "commondir" file that worktrees carry.
func resolveWorkspace(explicit, dir string) (root, how string) {
	if explicit != "" {
		abs, err := filepath.Abs(explicit)
		if err == nil {
			return abs, "explicit"
		}
		return explicit, "explicit"
	}
	if common, ok := gitCommonDir(dir); ok {
		return filepath.Dir(common), "git"
	}
	return dir, "cwd"
}

// gitCommonDir finds the git common directory for dir, walking up.
func gitCommonDir(dir string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		st, err := os.Stat(dotgit)
		if err == nil {
			if st.IsDir() {
				return dotgit, true
			}
			return commonFromGitFile(dotgit)
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// commonFromGitFile follows a worktree's ".git" file ("gitdir: <path>") and
// that directory's "commondir" file to the shared git directory.
func commonFromGitFile(file string) (string, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	line := strings.TrimSpace(string(b))
	gitdir, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", false
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(file), gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		return filepath.Clean(common), true
	}
	return gitdir, true
}
