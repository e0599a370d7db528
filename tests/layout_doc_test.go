package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/specd/specd"

// layoutPackage is one package of the module as go list describes it.
type layoutPackage struct {
	path, rel, dir string
	files          []string // non-test Go files
	imports        []string
}

// layoutPackages lists the module's packages.
func layoutPackages(t *testing.T) []layoutPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .GoFiles \" \"}}|{{join .Imports \" \"}}", modulePath+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []layoutPackage
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 4)
		pkgs = append(pkgs, layoutPackage{path: parts[0], rel: strings.TrimPrefix(parts[0], modulePath+"/"), dir: parts[1],
			files: strings.Fields(parts[2]), imports: strings.Fields(parts[3])})
	}
	return pkgs
}

// checkSources checks what the sources say (TestLayout): the "imports
// only" claims of package doc comments are true; core declares the one
// exported type named Error; the domain (specs, research) fills no tool
// slot with a tool name (toolSlots) and declares no answer field for a
// call (callFields).
func checkSources(t *testing.T) {
	claims, errorTypes := 0, 0
	for _, p := range layoutPackages(t) {
		files := parseLayoutFiles(t, p)
		claims += checkImportClaims(t, p, files)
		if n := exportedErrorTypes(files); n > 0 {
			errorTypes += n
			if p.rel != "core" {
				t.Errorf("%s declares a type Error: specd has one error type, core.Error", p.path)
			}
		}
		if under(p.rel, "specs") || under(p.rel, "research") {
			for _, s := range toolSlots(files) {
				t.Errorf("%s names a tool (%s): the domain names no tools; return a domain fact the tools turn into the call", p.path, s)
			}
			for _, f := range callFields(files) {
				t.Errorf("%s declares an answer field for a call (%s): calls are named by tools; return a specs.NextStep", p.path, f)
			}
		}
	}
	if claims < 2 || errorTypes != 1 {
		t.Errorf("checked %d imports-only claims and found %d Error types: the walk lost the sources", claims, errorTypes)
	}
}

// parseLayoutFiles parses p's non-test files with their comments.
func parseLayoutFiles(t *testing.T, p layoutPackage) []*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	var out []*ast.File
	for _, name := range p.files {
		f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
		out = append(out, f)
	}
	return out
}

// importsOnlyClaim matches the one form a package doc comment may use to
// say what the package imports: "imports only the standard library",
// optionally followed by "and the packages under D/" (D a directory of
// the module, e.g. core).
var importsOnlyClaim = regexp.MustCompile(`imports\s+only\s+the\s+standard\s+library(?:\s+and\s+the\s+packages\s+under\s+([a-z][a-z0-9/]*)/)?`)

// checkImportClaims holds the "imports only" claim of a package doc
// comment, where there is one, to the package's real imports (a standard
// library path has no dot in its first element). It returns how many
// claims it checked.
func checkImportClaims(t *testing.T, p layoutPackage, files []*ast.File) int {
	checked := 0
	for _, f := range files {
		if f.Doc == nil {
			continue
		}
		doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
		for _, m := range importsOnlyClaim.FindAllStringSubmatch(doc, -1) {
			checked++
			for _, bad := range importsBeyond(p.imports, m[1]) {
				t.Errorf("%s: its doc says it %q, but it imports %s", p.path, m[0], bad)
			}
		}
	}
	return checked
}

// importsBeyond lists the imports that are neither standard library nor,
// when under is set, a package of the module under that directory.
func importsBeyond(imports []string, under string) []string {
	var out []string
	for _, imp := range imports {
		first, _, _ := strings.Cut(imp, "/")
		if !strings.Contains(first, ".") {
			continue
		}
		if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok && under != "" && (rel == under || strings.HasPrefix(rel, under+"/")) {
			continue
		}
		out = append(out, imp)
	}
	return out
}

// exportedErrorTypes lists the declarations of an exported type named Error
// in files: specd has one error type, core.Error.
func exportedErrorTypes(files []*ast.File) int {
	n := 0
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					if s.(*ast.TypeSpec).Name.Name == "Error" {
						n++
					}
				}
			}
		}
	}
	return n
}

// toolSlots finds the string literals in files that denote a tool: a
// literal is a tool name exactly when it fills a tool slot, so these are
// the positions checked, and nothing else:
//   - the value of a Tool or SuggestedTool field in a composite literal
//     (NextCall{Tool: "task"}, core.Recovery{…});
//   - the value under the key "tool" or "suggested_tool" in a map literal;
//   - the value assigned to a .Tool or .SuggestedTool field;
//   - the tool argument (the first) of a WithRecovery call, unless "".
//
// Matching tool names anywhere else would be wrong both ways: "spec" and
// "task" are also argument and field names in the domain (details.field
// "spec"), and prose for a reader ("re-read the spec (spec get)") is not a
// call. A constant or variable holding a tool name would still have to
// reach one of these slots as a literal somewhere in the package, and is
// found there.
func toolSlots(files []*ast.File) []string {
	var out []string
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	isToolField := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name == "Tool" || x.Name == "SuggestedTool"
		case *ast.SelectorExpr:
			return x.Sel.Name == "Tool" || x.Sel.Name == "SuggestedTool"
		}
		return false
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.KeyValueExpr:
				if s, ok := lit(x.Value); ok && isToolField(x.Key) {
					out = append(out, "Tool: "+strconv.Quote(s))
				}
				if k, ok := lit(x.Key); ok && (k == "tool" || k == "suggested_tool") {
					out = append(out, strconv.Quote(k)+": …")
				}
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					if s, ok := lit(x.Rhs[min(i, len(x.Rhs)-1)]); ok && isToolField(l) {
						out = append(out, ".Tool = "+strconv.Quote(s))
					}
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithRecovery" && len(x.Args) > 0 {
					if s, ok := lit(x.Args[0]); ok && s != "" {
						out = append(out, "WithRecovery("+strconv.Quote(s)+", …)")
					}
				}
			}
			return true
		})
	}
	return out
}

// callFields finds the struct fields in files that hold a call for the
// answer: a field of type NextCall (any package, pointer or not) or one
// encoded as JSON "next_call" or "retry". Only tools fill such fields, so
// a domain type that declares one is an answer shape in the wrong place.
func callFields(files []*ast.File) []string {
	var out []string
	isCall := func(e ast.Expr) bool {
		if st, ok := e.(*ast.StarExpr); ok {
			e = st.X
		}
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name == "NextCall"
		case *ast.SelectorExpr:
			return x.Sel.Name == "NextCall"
		}
		return false
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fld := range st.Fields.List {
				name := "(embedded)"
				if len(fld.Names) > 0 {
					name = fld.Names[0].Name
				}
				jsonName := ""
				if fld.Tag != nil {
					if tag, err := strconv.Unquote(fld.Tag.Value); err == nil {
						jsonName, _, _ = strings.Cut(reflect.StructTag(tag).Get("json"), ",")
					}
				}
				switch {
				case isCall(fld.Type):
					out = append(out, name+" NextCall")
				case jsonName == "next_call" || jsonName == "retry":
					out = append(out, name+` json:"`+jsonName+`"`)
				}
			}
			return true
		})
	}
	return out
}

// TestLayoutChecksCatch proves the source checks of TestLayout find what
// they look for, and only that.
func TestLayoutChecksCatch(t *testing.T) {
	t.Parallel()
	parse := func(src string) []*ast.File {
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		return []*ast.File{f}
	}
	slots := toolSlots(parse(`package p
var a = NextCall{Tool: "task", Args: map[string]any{"action": "list"}}
var b = map[string]any{"tool": "spec"}
func f(e *core.Error, c *NextCall) {
	e.WithRecovery("lifecycle", nil, nil)
	e.WithRecovery("", nil, matches)
	c.Tool = "research"
}
var fine = newErr(errcode.InvalidFormat, "spec", "the spec (spec get) is not valid JSON")
var alsoFine = map[string]any{"field": "task", "action": "spec"}
`))
	if got, want := strings.Join(slots, " | "), `Tool: "task" | "tool": … | WithRecovery("lifecycle", …) | .Tool = "research"`; got != want {
		t.Errorf("tool slots %s, want %s", got, want)
	}
	fields := callFields(parse(`package p
type A struct {
	Next *core.NextCall
	Retry NextCall
	R map[string]any ` + "`json:\"retry,omitempty\"`" + `
	N string ` + "`json:\"next_call\"`" + `
	Step NextStep ` + "`json:\"step\"`" + `
	RetryCount int ` + "`json:\"retry_count\"`" + `
	Hidden NextStep ` + "`json:\"-\"`" + `
}
`))
	if got, want := strings.Join(fields, " | "), `Next NextCall | Retry NextCall | R json:"retry" | N json:"next_call"`; got != want {
		t.Errorf("call fields %s, want %s", got, want)
	}
	if n := exportedErrorTypes(parse("package p\ntype Error struct{}\ntype errorBox struct{}\ntype (\n\tError2 int\n)\n")); n != 1 {
		t.Errorf("found %d Error types, want 1", n)
	}
	p := layoutPackage{path: "x", imports: []string{"fmt", modulePath + "/core/fuzzy", modulePath + "/specs"}}
	if got := importsBeyond(p.imports, "core"); len(got) != 1 || got[0] != modulePath+"/specs" {
		t.Errorf("beyond core: %v", got)
	}
	if got := importsBeyond(p.imports, ""); len(got) != 2 {
		t.Errorf("beyond the standard library: %v", got)
	}
	if m := importsOnlyClaim.FindStringSubmatch("It imports only the standard library and the packages under core/: no MCP."); m == nil || m[1] != "core" {
		t.Errorf("claim: %q", m)
	}
}
