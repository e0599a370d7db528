package tests

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestLayout enforces the dependency rules of README "Development":
//   - specs and research depend (transitively) on none of mcp-go, bbolt,
//     OpenFeature;
//   - core/store is the only package importing bbolt;
//   - tools depends on bbolt through nothing (it sees the store through
//     interfaces; cmd is where concrete types meet);
//   - flags is the only package importing OpenFeature, and tools does not
//     depend on it (it sees flags through core/mcptool's Flags interface,
//     which *flags.Service implements);
//   - flags/registry, the one place that names each flag and what it
//     gates, imports only the standard library (tools read it);
//   - core/mcptool, the tool framework, depends on no tool, domain or
//     store: not tools, specs, research, flags, core/store nor bbolt (tools
//     are data it is given);
//   - core is the ground floor: no package under core/ depends
//     (transitively) on a package of the project outside core/, and its
//     tests import neither the MCP face (tools) nor the wiring (cmd) nor
//     flags;
//   - no package is named util, common or helpers;
//   - comments cite only what a reader can open (TestLayoutComments, run
//     with this one by make layout);
//   - the sources agree (checkSources): package docs' "imports only" claims
//     are true, core.Error is the one Error type, and the domain (specs,
//     research) names no tools and declares no answer field for a call
//     (a NextCall, or JSON next_call or retry: callFields).
func TestLayout(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Name}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "github.com/specd/specd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const (
		mod      = "github.com/specd/specd/"
		bbolt    = "go.etcd.io/bbolt"
		mcpgo    = "github.com/mark3labs/mcp-go"
		openfeat = "github.com/open-feature/"
	)
	infra := []string{bbolt, mcpgo, openfeat}
	sc := bufio.NewScanner(bytes.NewReader(out))
	checked := 0
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 5)
		pkg, name, imports, deps, testImports := parts[0], parts[1], strings.Fields(parts[2]), strings.Fields(parts[3]), strings.Fields(parts[4])
		rel := strings.TrimPrefix(pkg, mod)
		checked++
		switch name {
		case "util", "utils", "common", "helpers", "helper", "misc":
			t.Errorf("%s: package name %q explains nothing", pkg, name)
		}
		if under(rel, "specs") || under(rel, "research") {
			for _, d := range deps {
				for _, bad := range infra {
					if strings.HasPrefix(d, bad) {
						t.Errorf("%s (domain) depends on %s", pkg, d)
					}
				}
			}
		}
		if under(rel, "core") {
			for _, d := range deps {
				if strings.HasPrefix(d, mod) && !under(strings.TrimPrefix(d, mod), "core") {
					t.Errorf("%s depends on %s; core imports nothing of the project above it", pkg, d)
				}
			}
			for _, imp := range testImports {
				for _, bad := range []string{"tools", "cmd", "flags"} {
					if imp == mod+bad || strings.HasPrefix(imp, mod+bad+"/") {
						t.Errorf("%s's tests import %s; end-to-end tests live in tests/", pkg, imp)
					}
				}
			}
		}
		if rel != "core/store" {
			for _, imp := range imports {
				if strings.HasPrefix(imp, bbolt) {
					t.Errorf("%s imports bbolt; only core/store may", pkg)
				}
			}
		}
		if rel != "flags" {
			for _, imp := range imports {
				if strings.HasPrefix(imp, openfeat) {
					t.Errorf("%s imports OpenFeature; only flags may", pkg)
				}
			}
		}
		if rel == "flags/registry" {
			for _, d := range deps {
				if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
					t.Errorf("%s depends on %s; the flag registry imports only the standard library", pkg, d)
				}
			}
		}
		if under(rel, "core/mcptool") {
			for _, d := range deps {
				for _, bad := range []string{"tools", "specs", "research", "flags", "core/store"} {
					if d == mod+bad || strings.HasPrefix(d, mod+bad+"/") {
						t.Errorf("%s depends on %s; the framework is given tools, it knows none", pkg, d)
					}
				}
				if strings.HasPrefix(d, bbolt) || strings.HasPrefix(d, openfeat) {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
		if under(rel, "tools") {
			for _, d := range deps {
				if strings.HasPrefix(d, openfeat) || d == mod+"flags" {
					t.Errorf("%s depends on %s; tools see flags through mcptool.Flags and flags/registry", pkg, d)
				}
				if strings.HasPrefix(d, bbolt) || d == mod+"core/store" {
					t.Errorf("%s depends on %s; tools reach the store through interfaces", pkg, d)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("go list returned only %d packages", checked)
	}
	checkSources(t)
}

func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
