package errcode

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// declaredCodes parses this package's source and returns every exported
// string constant that is not an error type, by name.
func declaredCodes(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "errcode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || !n.IsExported() || strings.HasPrefix(n.Name, "Type") {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				out[n.Name] = v
			}
		}
	}
	return out
}

// TestEveryDeclaredCodeIsRegistered: a constant without a registry row would
// reach clients as INTERNAL_ERROR.
func TestEveryDeclaredCodeIsRegistered(t *testing.T) {
	codes := declaredCodes(t)
	if len(codes) < 35 {
		t.Fatalf("found only %d code constants", len(codes))
	}
	types := map[string]bool{TypeValidation: true, TypeAuthentication: true, TypeAuthorization: true, TypeNotFound: true,
		TypeConflict: true, TypeRateLimit: true, TypeFeatureFlag: true, TypeInternal: true, TypeUnavailable: true}
	for name, v := range codes {
		r, ok := Lookup(v)
		if !ok {
			t.Errorf("%s = %q has no registry row", name, v)
			continue
		}
		if !types[r.Type] || r.Remediation == "" {
			t.Errorf("bad registry row %+v", r)
		}
	}
	if len(Codes()) != len(table) {
		t.Errorf("the table has %d rows for %d distinct codes: a code is registered twice", len(table), len(Codes()))
	}
}

// TestDomainCodesComeFromThisPackage holds the domain packages (specs,
// research) to one rule: every value that can end up as the Code of their
// errors (core.Error, specd's one error type) is written as errcode.<Name>, so it is declared here and, by
// TestEveryDeclaredCodeIsRegistered, registered. A string literal, a local
// constant or any other expression in a code position fails the test.
//
// Code positions are found from the error type outwards: the value of Code
// in an Error{…} or core.Error{…} literal and the code argument of
// core.NewError and core.Errorf; for a parameter found there, the matching
// argument of every call of that function; for a local variable, every value
// assigned to it; for v.Code with v of a named type T, the Code of every T{…}
// literal.
func TestDomainCodesComeFromThisPackage(t *testing.T) {
	codes := declaredCodes(t)
	for _, dir := range []string{"../../specs", "../../research"} {
		files := parseDir(t, dir)
		bad, checked := checkCodePositions(files, codes)
		for _, b := range bad {
			t.Errorf("%s", b)
		}
		if dir == "../../specs" && checked < 80 {
			t.Errorf("%s: only %d codes checked; the walk lost the error constructors", dir, checked)
		}
	}
}

// TestCodePositionCheckCatches proves the check above fails on the ways an
// unregistered code could slip in.
func TestCodePositionCheckCatches(t *testing.T) {
	codes := declaredCodes(t)
	for _, tc := range []struct {
		name, src string
		bad       int
	}{
		{"registered", `package p
func newErr(code, field string) *Error { return &Error{Code: code, Field: field} }
func f() error { return newErr(errcode.InvalidFormat, "x") }`, 0},
		{"literal through constructor", `package p
func newErr(code, field string) *Error { return &Error{Code: code, Field: field} }
func f() error { return newErr("NO_SUCH_CODE", "x") }`, 1},
		{"literal through core's constructor", `package p
func newErr(code, field string) *core.Error { return core.NewError(code, field, nil) }
func f() error { return newErr("NO_SUCH_CODE", "x") }
func g() error { return core.Errorf("NOPE", "x") }
func h() error { return &core.Error{Code: "NOPE"} }
func k() error { return core.NewError(errcode.InvalidFormat, "x", nil) }`, 3},
		{"registered value as a literal", `package p
func f() error { return &Error{Code: "INVALID_FORMAT"} }`, 1},
		{"unknown errcode name", `package p
func f() error { return &Error{Code: errcode.NoSuchCode} }`, 1},
		{"local constant", `package p
const codeX = "X"
func f() error { return &Error{Code: codeX} }`, 1},
		{"local variable", `package p
func newErr(code, field string) *Error { return &Error{Code: code, Field: field} }
func f(re bool) error {
	code := errcode.InvalidFormat
	if re {
		code = "BAD"
	}
	return newErr(code, "x")
}`, 1},
		{"field of a carrier type", `package p
type violation struct{ Code, Field string }
func newErr(code, field string) *Error { return &Error{Code: code, Field: field} }
func (v violation) err() *Error { return newErr(v.Code, v.Field) }
var vs = []violation{{Code: errcode.MissingRequired}, violation{Code: "NOPE"}}
func g() error { return violation{Code: "NOPE"}.err() }
func h() error { return violation{"NOPE", "f"}.err() }
func k() error { return violation{errcode.MissingRequired, "f"}.err() }`, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if bad, _ := checkCodePositions([]*ast.File{f}, codes); len(bad) != tc.bad {
				t.Fatalf("want %d findings, got %q", tc.bad, bad)
			}
		})
	}
}

func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []*ast.File
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return out
}

// codeCheck is the state of one package's walk.
type codeCheck struct {
	codes   map[string]string
	funcs   map[string][]*ast.FuncDecl // by name (methods and functions)
	carrier map[string]bool            // type names whose Code field is a code position
	bad     []string
	checked int
	seen    map[ast.Expr]bool
	work    []sink
}

type sink struct {
	fn    *ast.FuncDecl // enclosing function, nil at package level
	expr  ast.Expr
	where string
}

// checkCodePositions returns the code positions not written errcode.<Name>
// and how many errcode.<Name> positions it checked.
func checkCodePositions(files []*ast.File, codes map[string]string) ([]string, int) {
	c := &codeCheck{codes: codes, funcs: map[string][]*ast.FuncDecl{}, carrier: map[string]bool{}, seen: map[ast.Expr]bool{}}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				c.funcs[fd.Name.Name] = append(c.funcs[fd.Name.Name], fd)
			}
		}
	}
	c.addCarrier(files, "Error")
	c.constructorCalls(files)
	for len(c.work) > 0 {
		s := c.work[len(c.work)-1]
		c.work = c.work[:len(c.work)-1]
		c.resolve(files, s)
	}
	return c.bad, c.checked
}

func (c *codeCheck) push(fn *ast.FuncDecl, e ast.Expr, where string) {
	if !c.seen[e] {
		c.seen[e] = true
		c.work = append(c.work, sink{fn, e, where})
	}
}

// constructorCalls makes the code argument of every call of core's
// constructors (core.NewError, core.Errorf) a code position.
func (c *codeCheck) constructorCalls(files []*ast.File) {
	for _, f := range files {
		forEachFunc(f, func(fn *ast.FuncDecl, n ast.Node) {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !isIdent(sel.X, "core") || (sel.Sel.Name != "NewError" && sel.Sel.Name != "Errorf") {
				return
			}
			c.push(fn, call.Args[0], "argument 1 of core."+sel.Sel.Name)
		})
	}
}

// addCarrier makes Code of every literal of type name (or core.name) a code
// position.
func (c *codeCheck) addCarrier(files []*ast.File, name string) {
	if c.carrier[name] {
		return
	}
	c.carrier[name] = true
	pos := codeFieldIndex(files, name)
	for _, f := range files {
		forEachFunc(f, func(fn *ast.FuncDecl, n ast.Node) {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return
			}
			if isIdent(cl.Type, name) || isCoreType(cl.Type, name) || cl.Type == nil && c.elemOf(f, cl, name) {
				for i, el := range cl.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Code") {
						c.push(fn, kv.Value, name+"{Code: …}")
					} else if !ok && i == pos {
						c.push(fn, el, name+"{…} (unkeyed)")
					}
				}
			}
		})
	}
}

// elemOf reports whether the untyped literal cl is an element of a literal
// of []name or []*name (e.g. []violation{{Code: …}}).
func (c *codeCheck) elemOf(f *ast.File, cl *ast.CompositeLit, name string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		outer, ok := n.(*ast.CompositeLit)
		if !ok || found {
			return !found
		}
		at, ok := outer.Type.(*ast.ArrayType)
		if !ok {
			return true
		}
		elt := at.Elt
		if st, ok := elt.(*ast.StarExpr); ok {
			elt = st.X
		}
		if !isIdent(elt, name) {
			return true
		}
		for _, e := range outer.Elts {
			if e == cl {
				found = true
			}
		}
		return !found
	})
	return found
}

func (c *codeCheck) resolve(files []*ast.File, s sink) {
	switch e := s.expr.(type) {
	case *ast.ParenExpr:
		c.push(s.fn, e.X, s.where)
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == "errcode" {
			if _, ok := c.codes[e.Sel.Name]; !ok {
				c.fail(s, "errcode."+e.Sel.Name+" is not a declared code")
			}
			c.checked++
			return
		}
		if e.Sel.Name == "Code" {
			if x, ok := e.X.(*ast.Ident); ok && s.fn != nil {
				if tn := paramType(s.fn, x.Name); tn != "" {
					c.addCarrier(files, tn)
					return
				}
			}
		}
		c.fail(s, "a code must be written errcode.<Name>")
	case *ast.Ident:
		if s.fn != nil {
			if i := paramIndex(s.fn, e.Name); i >= 0 {
				c.callArgs(files, s.fn, i)
				return
			}
			if c.localAssignments(s.fn, e.Name, s.where) {
				return
			}
		}
		c.fail(s, "a code must be written errcode.<Name>, not "+e.Name)
	default:
		c.fail(s, "a code must be written errcode.<Name>")
	}
}

func (c *codeCheck) fail(s sink, why string) {
	name := "package level"
	if s.fn != nil {
		name = s.fn.Name.Name
	}
	c.bad = append(c.bad, name+": "+s.where+": "+why)
}

// callArgs makes argument i of every call of fn a code position.
func (c *codeCheck) callArgs(files []*ast.File, fn *ast.FuncDecl, i int) {
	for _, f := range files {
		forEachFunc(f, func(encl *ast.FuncDecl, n ast.Node) {
			call, ok := n.(*ast.CallExpr)
			if !ok || i >= len(call.Args) {
				return
			}
			var name string
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				name = fun.Name
			case *ast.SelectorExpr:
				name = fun.Sel.Name
			}
			if name == fn.Name.Name && (fn.Recv == nil) == isIdentFun(call) {
				c.push(encl, call.Args[i], "argument "+strconv.Itoa(i+1)+" of "+name)
			}
		})
	}
}

// localAssignments makes every value assigned to the local variable name in
// fn a code position; it reports whether name is such a variable.
func (c *codeCheck) localAssignments(fn *ast.FuncDecl, name, where string) bool {
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch a := n.(type) {
		case *ast.AssignStmt:
			for i, l := range a.Lhs {
				if isIdent(l, name) && i < len(a.Rhs) && len(a.Lhs) == len(a.Rhs) {
					found = true
					c.push(fn, a.Rhs[i], where+" via "+name)
				}
			}
		case *ast.ValueSpec:
			for i, l := range a.Names {
				if l.Name == name && i < len(a.Values) {
					found = true
					c.push(fn, a.Values[i], where+" via "+name)
				}
			}
		}
		return true
	})
	return found
}

func forEachFunc(f *ast.File, visit func(*ast.FuncDecl, ast.Node)) {
	for _, d := range f.Decls {
		fd, _ := d.(*ast.FuncDecl)
		ast.Inspect(d, func(n ast.Node) bool {
			if n != nil {
				visit(fd, n)
			}
			return true
		})
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isCoreType reports whether e is core.name.
func isCoreType(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, "core") && sel.Sel.Name == name
}

func isIdentFun(call *ast.CallExpr) bool {
	_, ok := call.Fun.(*ast.Ident)
	return ok
}

// fields lists fn's receiver and parameters in order, receiver first.
func fields(fn *ast.FuncDecl) (recv []*ast.Field, params []*ast.Field) {
	if fn.Recv != nil {
		recv = fn.Recv.List
	}
	return recv, fn.Type.Params.List
}

func paramIndex(fn *ast.FuncDecl, name string) int {
	_, params := fields(fn)
	i := 0
	for _, f := range params {
		for _, n := range f.Names {
			if n.Name == name {
				return i
			}
			i++
		}
	}
	return -1
}

// paramType returns the type name of the receiver or parameter name of fn.
func paramType(fn *ast.FuncDecl, name string) string {
	recv, params := fields(fn)
	for _, f := range append(recv, params...) {
		for _, n := range f.Names {
			if n.Name != name {
				continue
			}
			t := f.Type
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			if id, ok := t.(*ast.Ident); ok {
				return id.Name
			}
		}
	}
	return ""
}

// codeFieldIndex returns the position of field Code in the struct type name
// declared in files, or -1.
func codeFieldIndex(files []*ast.File, name string) int {
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok || ts.Name.Name != name {
					continue
				}
				i := 0
				for _, fl := range st.Fields.List {
					if len(fl.Names) == 0 {
						i++
						continue
					}
					for _, n := range fl.Names {
						if n.Name == "Code" {
							return i
						}
						i++
					}
				}
			}
		}
	}
	return -1
}
