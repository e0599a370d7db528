// Package toolchain recognises the kind of project in a workspace from its
// marker files (go.mod, package.json, pyproject.toml, Cargo.toml, …), the
// test runner and command each kind uses, the programs it needs, and the
// test files it has. It reads the workspace only through core/workspacefs
// and runs nothing: checking a program is finding it on PATH.
package toolchain

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"path"
	"strings"

	"github.com/specd/specd/core/workspacefs"
)

// Kind is one kind of project specd recognises.
type Kind struct {
	Name        string   `json:"kind"`
	Marker      string   `json:"marker"`      // the file that shows it
	TestRunner  string   `json:"test_runner"` // go, npm, pytest, cargo, make
	TestCommand string   `json:"test_command"`
	Programs    []string `json:"programs"` // what it needs on PATH
	testFile    func(name string) bool
}

var kinds = []Kind{
	{Name: "go", Marker: "go.mod", TestRunner: "go", TestCommand: "go test ./...", Programs: []string{"go"},
		testFile: func(n string) bool { return strings.HasSuffix(n, "_test.go") }},
	{Name: "node", Marker: "package.json", TestRunner: "npm", TestCommand: "npm test", Programs: []string{"node", "npm"},
		testFile: func(n string) bool {
			return strings.Contains(n, ".test.") || strings.Contains(n, ".spec.")
		}},
	{Name: "python", Marker: "pyproject.toml", TestRunner: "pytest", TestCommand: "python3 -m pytest", Programs: []string{"python3"},
		testFile: func(n string) bool {
			return strings.HasSuffix(n, ".py") && (strings.HasPrefix(n, "test_") || strings.HasSuffix(n, "_test.py"))
		}},
	{Name: "rust", Marker: "Cargo.toml", TestRunner: "cargo", TestCommand: "cargo test", Programs: []string{"cargo"},
		testFile: func(n string) bool { return strings.HasSuffix(n, ".rs") && strings.Contains(n, "test") }},
	{Name: "make", Marker: "Makefile", TestRunner: "make", TestCommand: "make test", Programs: []string{"make"}},
}

// Detect lists the kinds whose marker file is at the workspace root, in
// the order above (the first is the primary one).
func Detect(ws *workspacefs.Dir) []Kind {
	out := []Kind{}
	for _, k := range kinds {
		if st, err := ws.Stat(k.Marker); err == nil && st.Mode().IsRegular() {
			out = append(out, k)
		}
	}
	return out
}

// Program is one program a project needs and whether it is on PATH.
type Program struct {
	Name  string `json:"name"`
	Found bool   `json:"found"`
}

// Programs checks git, sh and every program the kinds need, once each.
func Programs(ks []Kind) []Program {
	names := []string{"git", "sh"}
	for _, k := range ks {
		for _, p := range k.Programs {
			if !contains(names, p) {
				names = append(names, p)
			}
		}
	}
	out := make([]Program, len(names))
	for i, n := range names {
		_, err := exec.LookPath(n)
		out[i] = Program{Name: n, Found: err == nil}
	}
	return out
}

// AllFound reports whether every program of ps is on PATH.
func AllFound(ps []Program) bool {
	for _, p := range ps {
		if !p.Found {
			return false
		}
	}
	return true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// skipDirs are folders test discovery never enters.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true, ".specd": true, "target": true, "__pycache__": true, ".venv": true}

// TestFiles lists the workspace-relative test files of ks (slash
// separated, in walk order), at most max; more reports whether some were
// left out.
func TestFiles(ctx context.Context, ws *workspacefs.Dir, ks []Kind, max int) (files []string, more bool, err error) {
	files = []string{}
	errFull := errors.New("full")
	err = ws.Walk(ctx, ".", func(e workspacefs.Entry) error {
		base := path.Base(workspacefs.Show(e.Name))
		if e.Type.IsDir() {
			if skipDirs[base] {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type.IsRegular() {
			return nil
		}
		for _, k := range ks {
			if k.testFile != nil && k.testFile(base) {
				if len(files) == max {
					more = true
					return errFull
				}
				files = append(files, workspacefs.Show(e.Name))
				break
			}
		}
		return nil
	})
	if errors.Is(err, errFull) {
		err = nil
	}
	return files, more, err
}
