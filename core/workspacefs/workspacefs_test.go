package workspacefs

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// tree makes a workspace and a sibling "outside" folder holding a victim
// file, with these links in the workspace:
//
//	ws/doc.txt               regular file
//	ws/sub/inner.txt         regular file
//	ws/link-in.txt  -> sub/inner.txt            (relative, inside)
//	ws/sub/up.txt   -> ../doc.txt               (relative, inside)
//	ws/link-out     -> ../outside               (top-level escape)
//	ws/sub/deep-out -> ../../outside/victim.txt (escape below the top)
//	ws/abs-in.txt   -> <ws>/doc.txt             (absolute: refused by os.Root)
//	ws/dangling     -> nowhere
//	ws/pipe.txt, ws/specs/pipe.json             FIFOs
func tree(t *testing.T) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "sub"), filepath.Join(ws, "specs"), outside} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(ws, "doc.txt"), []byte("inside"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "sub", "inner.txt"), []byte("inner"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "victim.txt"), []byte("SECRET"), 0o644))
	must(t, os.Symlink("sub/inner.txt", filepath.Join(ws, "link-in.txt")))
	must(t, os.Symlink("../doc.txt", filepath.Join(ws, "sub", "up.txt")))
	must(t, os.Symlink("../outside", filepath.Join(ws, "link-out")))
	must(t, os.Symlink("../../outside/victim.txt", filepath.Join(ws, "sub", "deep-out")))
	must(t, os.Symlink(filepath.Join(ws, "doc.txt"), filepath.Join(ws, "abs-in.txt")))
	must(t, os.Symlink("nowhere", filepath.Join(ws, "dangling")))
	must(t, syscall.Mkfifo(filepath.Join(ws, "pipe.txt"), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(ws, "specs", "pipe.json"), 0o644))
	return ws, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, ws string) *Dir {
	t.Helper()
	d, err := Open(ws)
	must(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

// within runs fn and fails the test if it takes longer than a few seconds
// (a FIFO open that blocks would otherwise hang the test binary).
func within(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("call blocked for 5 s")
	}
}

// noServerPath fails when err's envelope payload shows an absolute path of
// the test's temp tree.
func noServerPath(t *testing.T, err error, prefixes ...string) {
	t.Helper()
	b, _ := json.Marshal(core.AsError(err).Payload("r"))
	for _, p := range prefixes {
		if strings.Contains(string(b), p) {
			t.Errorf("answer shows a server path %s: %s", p, b)
		}
	}
}

func codeOf(err error) string {
	var e *core.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestRel(t *testing.T) {
	ws, outside := tree(t)
	d := open(t, ws)
	cases := []struct {
		name, want string
	}{
		{"specs", "specs"},
		{"specs/../doc.txt", "doc.txt"},
		{".", "."},
		{filepath.Join(ws, "specs"), "specs"},
		{ws, "."},
		{"", ""},
		{"a\x00b", ""},
		{"..", ""},
		{"../ws/doc.txt", ""},
		{"specs/../../outside", ""},
		{outside, ""},
		{"/etc/passwd", ""},
		{"/proc/self/cwd", ""},
		{"/proc/self/exe", ""},
	}
	for _, c := range cases {
		got, err := d.Rel(c.name)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("Rel(%q) = %q, %v; want %q", c.name, got, err, c.want)
		}
		if err != nil {
			if codeOf(err) != errcode.InvalidFormat {
				t.Errorf("Rel(%q): code %s, want INVALID_FORMAT", c.name, codeOf(err))
			}
			if !filepath.IsAbs(c.name) {
				noServerPath(t, err, ws, outside)
			}
		}
	}
}

func TestReadFile(t *testing.T) {
	ws, outside := tree(t)
	d := open(t, ws)
	sock, err := net.Listen("unix", filepath.Join(ws, "sock"))
	must(t, err)
	defer sock.Close()
	must(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("x", 2000)), 0o644))
	cases := []struct {
		name, want, code string
	}{
		{"doc.txt", "inside", ""},
		{"link-in.txt", "inner", ""}, // symlink inside: followed
		{"sub/up.txt", "inside", ""}, // symlink below, pointing inside: followed
		{"../outside/victim.txt", "", errcode.InvalidFormat},
		{"link-out/victim.txt", "", errcode.InvalidFormat}, // symlink escape at the top
		{"sub/deep-out", "", errcode.InvalidFormat},        // symlink escape below the top
		{"abs-in.txt", "", errcode.InvalidFormat},          // absolute symlinks are refused
		{"dangling", "", errcode.InvalidFormat},
		{"pipe.txt", "", errcode.InvalidFormat}, // FIFO: refused, not waited on
		{"specs/pipe.json", "", errcode.InvalidFormat},
		{"sock", "", errcode.InvalidFormat},
		{"sub", "", errcode.InvalidFormat},
		{"missing.txt", "", errcode.NotFound},
		{"big.txt", "", errcode.PayloadTooLarge},
		{"doc.txt\x00x", "", errcode.InvalidFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			within(t, func() {
				var got []byte
				rel, err := d.Rel(c.name)
				if err == nil {
					got, err = d.ReadFile(context.Background(), rel, 1000)
				}
				if c.code == "" {
					if err != nil || string(got) != c.want {
						t.Errorf("got %q, %v; want %q", got, err, c.want)
					}
					return
				}
				if codeOf(err) != c.code {
					t.Errorf("got %q, %v; want %s", got, err, c.code)
				}
				if strings.Contains(string(got), "SECRET") {
					t.Error("outside content came back")
				}
				noServerPath(t, err, ws, outside)
			})
		})
	}
}

func TestReadFileHonoursDeadline(t *testing.T) {
	ws, _ := tree(t)
	d := open(t, ws)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := d.ReadFile(ctx, "doc.txt", 1000); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expired deadline: %v", err)
	}
	// A read under way stops at the next chunk once its context ends.
	must(t, os.WriteFile(filepath.Join(ws, "large.txt"), make([]byte, 20*readChunk), 0o644))
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, err := d.ReadFile(cctx, "large.txt", 1<<30); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestWalkReportsFIFOsWithoutOpening(t *testing.T) {
	ws, _ := tree(t)
	must(t, os.Symlink("../sub", filepath.Join(ws, "specs", "linked-dir")))
	d := open(t, ws)
	var got []string
	within(t, func() {
		must(t, d.Walk(context.Background(), "specs", func(e Entry) error {
			got = append(got, Show(e.Name)+":"+e.Type.Type().String())
			return nil
		}))
	})
	want := "specs/linked-dir:L---------,specs/pipe.json:p---------"
	if strings.Join(got, ",") != want {
		t.Fatalf("walk = %v, want %s", got, want)
	}
	if err := d.Walk(context.Background(), "doc.txt", func(Entry) error { return nil }); codeOf(err) != errcode.InvalidFormat {
		t.Fatalf("walk of a file: %v", err)
	}
	within(t, func() {
		if err := d.Walk(context.Background(), "pipe.txt", func(Entry) error { return nil }); codeOf(err) != errcode.InvalidFormat {
			t.Errorf("walk of a FIFO: %v", err)
		}
	})
	if err := d.Walk(context.Background(), "link-out", func(Entry) error { return nil }); codeOf(err) != errcode.InvalidFormat {
		t.Fatalf("walk through a symlink out: %v", err)
	}
}

func TestWritesStayInside(t *testing.T) {
	ws, outside := tree(t)
	d := open(t, ws)
	ctx := context.Background()
	// A plain write, then one replacing a symlink that points out: the link
	// is replaced, the outside file untouched.
	must(t, d.WriteFileAtomic(ctx, filepath.Join("out", "pending", "a.json"), []byte("A")))
	must(t, os.Symlink("../../../outside/victim.txt", filepath.Join(ws, "out", "pending", "b.json")))
	must(t, d.WriteFileAtomic(ctx, filepath.Join("out", "pending", "b.json"), []byte("B")))
	if b, _ := os.ReadFile(filepath.Join(ws, "out", "pending", "b.json")); string(b) != "B" {
		t.Fatalf("b.json = %q", b)
	}
	// Folders that lead out, at the top and below it.
	must(t, os.Symlink("../../outside", filepath.Join(ws, "out", "active")))
	must(t, os.WriteFile(filepath.Join(ws, "afile"), []byte("x"), 0o644))
	refused := []struct{ name, code string }{
		{filepath.Join("link-out", "x.json"), errcode.InvalidFormat},
		{filepath.Join("link-out", "new", "deep", "x.json"), errcode.InvalidFormat},
		{filepath.Join("out", "active", "victim.txt"), errcode.InvalidFormat},
		{filepath.Join("out", "active", "mk", "x.json"), errcode.InvalidFormat},
		{filepath.Join("afile", "x.json"), errcode.InvalidFormat},    // a file where a folder is needed
		{filepath.Join("dangling", "x.json"), errcode.InvalidFormat}, // a dangling symlink
		{"sub", errcode.InvalidFormat},                               // a folder where a file is needed
	}
	for _, c := range refused {
		err := d.WriteFileAtomic(ctx, c.name, []byte("EVIL"))
		if codeOf(err) != c.code {
			t.Errorf("write %s: %v, want %s", c.name, err, c.code)
		}
		noServerPath(t, err, ws, outside)
	}
	for _, c := range []string{filepath.Join("out", "active", "victim.txt"), filepath.Join("link-out", "victim.txt")} {
		if err := d.RemoveFile(c); codeOf(err) != errcode.InvalidFormat {
			t.Errorf("remove %s: %v", c, err)
		}
	}
	// A link inside that points out is itself removed; its target stays.
	if err := d.RemoveFile(filepath.Join("sub", "deep-out")); err != nil {
		t.Errorf("remove of a link: %v", err)
	}
	if err := d.RemoveFile(filepath.Join("out", "pending", "missing.json")); err != nil {
		t.Errorf("remove of nothing: %v", err)
	}
	for _, c := range []string{"afile", "dangling", "link-out", filepath.Join("out", "active")} {
		if err := d.MkdirAll(c); codeOf(err) != errcode.InvalidFormat {
			t.Errorf("mkdir %s: %v", c, err)
		}
		if err := d.CheckFolder(c); codeOf(err) != errcode.InvalidFormat {
			t.Errorf("check folder %s: %v", c, err)
		}
	}
	// Outside: the victim intact, nothing new.
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries, want 1", len(entries))
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim.txt")); string(b) != "SECRET" {
		t.Errorf("victim changed: %q", b)
	}
	// No temporary files left behind.
	_ = filepath.WalkDir(ws, func(p string, e fs.DirEntry, err error) error {
		if e != nil && strings.HasPrefix(e.Name(), ".specd-tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestOpenWithoutWorkspace(t *testing.T) {
	if _, err := Open(""); codeOf(err) != errcode.Unavailable {
		t.Fatalf("empty workspace: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); codeOf(err) != errcode.Unavailable {
		t.Fatalf("missing workspace: %v", err)
	}
}
