package workspacefs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWithinFindsReservedFolders pins Within: lexically and
// case-insensitively at the top, and through symlinks and ".." as the
// kernel resolves them below it; "" for a name outside every folder and
// when none of the folders exists.
func TestWithinFindsReservedFolders(t *testing.T) {
	ws, _ := tree(t)
	must(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, ".specd", "sub"), 0o755))
	must(t, os.Symlink(filepath.Join(".git", "hooks"), filepath.Join(ws, "hooks-link")))
	must(t, os.Symlink(filepath.Join("..", ".specd", "sub"), filepath.Join(ws, "sub", "store-up")))
	d := open(t, ws)
	folders := []string{".git", ".specd"}
	for _, c := range []struct{ name, want string }{
		{".git", ".git"},
		{filepath.Join(".GIT", "config"), ".git"},
		{filepath.Join(".specd", "new", "file"), ".specd"},
		{"hooks-link", ".git"},
		{filepath.Join("hooks-link", "pre-commit"), ".git"},
		{filepath.Join("sub", "store-up", "x"), ".specd"},
		{"doc.txt", ""},
		{filepath.Join("sub", "inner.txt"), ""},
		{filepath.Join("sub", "new", "file"), ""},
		{"link-out", ""},
		{"dangling", ""},
	} {
		if got := d.Within(c.name, folders...); got != c.want {
			t.Errorf("Within(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := d.Within("hooks-link", ".absent"); got != "" {
		t.Errorf("Within with no existing folder = %q", got)
	}
	if got := d.Within(filepath.Join(".absent", "x"), ".absent"); got != ".absent" {
		t.Errorf("Within of an absent folder named lexically = %q", got)
	}
}
