package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Comments cite only what a reader of the repository can open: a file of
// the repository, an RFC, the MCP specification; or they state the rule
// themselves. These patterns are citations of documents that are not in
// the repository (design pages, the tracker, the seed documents); each
// names what it found.
var unopenableCitations = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bcontract\s+(?:§\s*\d+|section\s+\d+)`),
	regexp.MustCompile(`(?i)\bissues?\s+\d+`),
	regexp.MustCompile(`(?i)\bseeds?\s+0\d\d\b`),
}

// sectionSign matches a section reference; it is a citation a reader can
// follow only right after an RFC's number ("RFC 8785 §3.2.3").
var sectionSign = regexp.MustCompile(`§\s*\d+(?:\.\d+)*`)

// rfcBefore matches text that ends with an RFC's number.
var rfcBefore = regexp.MustCompile(`RFC\s+\d+\s*$`)

// citedBefore matches text that ends with a citation unopenableCitations
// already reports, so that its section is not reported twice.
var citedBefore = regexp.MustCompile(`(?i)(?:contract|issues?\s+\d+)\s*$`)

// markdownName matches the name of a markdown document.
var markdownName = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b`)

// TestLayoutComments (make layout) holds every comment of every Go file
// of the module (tests included), and README.md, to unopenableCitations, sections only of
// RFCs, markdown documents only the repository's, and pkg.Name references
// only to names that package declares (staleNames).
func TestLayoutComments(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	docs, files := repoFiles(t, root)
	decls := map[string]map[string]bool{}
	comments := map[string][]*ast.CommentGroup{}
	for _, rel := range files {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, rel), nil, parser.ParseComments)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		pkg := filepath.Base(filepath.Dir(rel))
		if decls[pkg] == nil {
			decls[pkg] = map[string]bool{}
		}
		for name := range declaredNames(f) {
			decls[pkg][name] = true
		}
		comments[rel] = f.Comments
	}
	checked := 0
	for _, rel := range files {
		for _, g := range comments[rel] {
			checked++
			for _, bad := range badCitations(g.Text(), docs) {
				t.Errorf("%s: a comment cites %q, which a reader cannot open: cite a file of the repository, an RFC or the MCP specification, or state the rule", rel, bad)
			}
			for _, bad := range staleNames(g.Text(), decls) {
				t.Errorf("%s: a comment names %s, which its package does not declare", rel, bad)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("checked only %d comments: the walk lost the sources", checked)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range badCitations(string(readme), docs) {
		t.Errorf("README.md cites %q, which a reader cannot open: state the rule, or cite a file of the repository, an RFC or the MCP specification", bad)
	}
}

// repoFiles lists the module's markdown documents (by path and by base
// name, testdata included) and its Go files (outside testdata), skipping
// hidden folders and bin.
func repoFiles(t *testing.T, root string) (docs map[string]bool, goFiles []string) {
	t.Helper()
	docs = map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(rel, ".go") && !strings.Contains("/"+rel, "/testdata/"):
			goFiles = append(goFiles, rel)
		case strings.HasSuffix(rel, ".md"):
			docs[rel], docs[d.Name()] = true, true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs, goFiles
}

// badCitations lists what text cites that a reader of the repository
// cannot open.
func badCitations(text string, docs map[string]bool) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	for _, re := range unopenableCitations {
		out = append(out, re.FindAllString(text, -1)...)
	}
	for _, loc := range sectionSign.FindAllStringIndex(text, -1) {
		before := text[:loc[0]]
		if !rfcBefore.MatchString(before) && !citedBefore.MatchString(before) {
			word := strings.LastIndex(strings.TrimRight(before, " "), " ") + 1
			out = append(out, text[word:loc[1]])
		}
	}
	for _, name := range markdownName.FindAllString(text, -1) {
		if !docs[strings.TrimPrefix(name, "./")] {
			out = append(out, name)
		}
	}
	return out
}

// qualifiedName matches pkg.Name in prose: a lower-case package name, a
// dot, an exported identifier.
var qualifiedName = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)`)

// staleNames lists the pkg.Name references of text whose pkg is a package
// of the module (by its folder's name) that declares no Name (at top
// level or as a method), in its code or its tests.
func staleNames(text string, decls map[string]map[string]bool) []string {
	var out []string
	for _, m := range qualifiedName.FindAllStringSubmatch(text, -1) {
		if names, ok := decls[m[1]]; ok && !names[m[2]] {
			out = append(out, m[0])
		}
	}
	return out
}

// declaredNames are the exported names f declares at top level, methods
// included (a comment may name a method as pkg.Method).
func declaredNames(f *ast.File) map[string]bool {
	out := map[string]bool{}
	add := func(id *ast.Ident) {
		if id != nil && unicode.IsUpper([]rune(id.Name)[0]) {
			out[id.Name] = true
		}
	}
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			add(x.Name)
		case *ast.GenDecl:
			for _, s := range x.Specs {
				switch sp := s.(type) {
				case *ast.TypeSpec:
					add(sp.Name)
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						add(n)
					}
				}
			}
		}
	}
	return out
}

// TestLayoutCommentChecksCatch proves the comment checks find what they look
// for, and only that.
func TestLayoutCommentChecksCatch(t *testing.T) {
	t.Parallel()
	docs := map[string]bool{"README.md": true, "core/jcs/testdata/README.md": true}
	text := "Caps of contract §4 (issue 11 §4, Issues 3 and 5; seed 001; design/contract.md).\n" +
		"Also: the example of §3.2, page §9.\n" +
		"Fine: RFC 8785 §3.2.3, RFC 7493 §2, README.md, core/jcs/testdata/README.md, a seed value, issue-free, the 2 issues."
	got := strings.Join(badCitations(text, docs), " | ")
	want := "contract §4 | issue 11 | Issues 3 | seed 001 | of §3.2 | page §9 | design/contract.md"
	if got != want {
		t.Errorf("citations %s, want %s", got, want)
	}
	decls := map[string]map[string]bool{"tools": {"Deps": true}, "core": {"Error": true}}
	if got := strings.Join(staleNames("tools.Dispatch and tools.Deps, core.Error, core.Flags, fmt.Errorf, e.g. Foo", decls), " | "); got != "tools.Dispatch | core.Flags" {
		t.Errorf("stale names %s", got)
	}
}
