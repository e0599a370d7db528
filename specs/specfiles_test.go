package specs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// The services in this file's subjects run over a real bbolt store and a
// real workspace folder (t.TempDir()).

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, root, name string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openWS(t *testing.T, root string) *workspacefs.Dir {
	t.Helper()
	ws, err := workspacefs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func code(err error) string { return core.AsError(err).Code }

const basicID = "csv-export-2025-11-03-001"

func TestImportFilesReportsEachFile(t *testing.T) {
	cycle := fixture(t, "foundry_cycle.json")
	badID := strings.Replace(string(fixture(t, "foundry_basic.json")), basicID, "../etc", 1)
	tests := []struct {
		name    string
		files   map[string]string
		path    string
		opts    specs.ImportOptions
		stored  []string          // specs stored before the import
		want    map[string]string // file → outcome
		wantLc  map[string]string // file → lifecycle
		reason  map[string]string // file → part of the reason
		wantIDs int               // specs stored after
		wantErr string
	}{
		{name: "folder maps lifecycle", path: "specs", opts: specs.ImportOptions{AutoFix: true},
			files: map[string]string{"specs/active/a.json": string(fixture(t, "foundry_basic.json")), "specs/notes.txt": "x", "specs/.hidden/h.json": "{"},
			want:  map[string]string{"active/a.json": "imported"}, wantIDs: 1,
			wantLc: map[string]string{"active/a.json": "active"}},
		{name: "single file named by base", path: "specs/pending/a.json", opts: specs.ImportOptions{AutoFix: true},
			files: map[string]string{"specs/pending/a.json": string(fixture(t, "foundry_basic.json"))},
			want:  map[string]string{"a.json": "imported"}, wantIDs: 1, wantLc: map[string]string{"a.json": "pending"}},
		{name: "not json fails", path: "in", opts: specs.ImportOptions{AutoFix: true},
			files: map[string]string{"in/x.json": "{not json"},
			want:  map[string]string{"x.json": "failed"}, reason: map[string]string{"x.json": "not a spec document"}},
		{name: "path id rejected", path: "in", opts: specs.ImportOptions{AutoFix: true},
			files: map[string]string{"in/x.json": badID},
			want:  map[string]string{"x.json": "rejected"}, reason: map[string]string{"x.json": "not an id"}},
		{name: "cycle rejected", path: "in", opts: specs.ImportOptions{AutoFix: true},
			files: map[string]string{"in/c.json": string(cycle)},
			want:  map[string]string{"c.json": "rejected"}, reason: map[string]string{"c.json": "dependency cycle"}},
		{name: "existing skipped", path: "in", opts: specs.ImportOptions{AutoFix: true}, stored: []string{"foundry_basic.json"},
			files: map[string]string{"in/a.json": string(fixture(t, "foundry_basic.json"))},
			want:  map[string]string{"a.json": "skipped"}, wantIDs: 1, reason: map[string]string{"a.json": "overwrite"}},
		{name: "existing replaced", path: "in", opts: specs.ImportOptions{AutoFix: true, Overwrite: true}, stored: []string{"foundry_basic.json"},
			files: map[string]string{"in/a.json": string(fixture(t, "foundry_basic.json"))},
			want:  map[string]string{"a.json": "replaced"}, wantIDs: 1},
		{name: "dry run stores nothing", path: "in", opts: specs.ImportOptions{AutoFix: true, DryRun: true},
			files: map[string]string{"in/a.json": string(fixture(t, "foundry_basic.json"))},
			want:  map[string]string{"a.json": "would_import"}},
		{name: "nothing there", path: "missing", opts: specs.ImportOptions{AutoFix: true}, wantErr: errcode.NotFound},
		{name: "outside workspace", path: "../x", opts: specs.ImportOptions{AutoFix: true}, wantErr: errcode.InvalidFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := specstore.New(storetest.Open(t), nil)
			root := t.TempDir()
			for name, data := range tt.files {
				write(t, root, name, []byte(data))
			}
			for _, f := range tt.stored {
				doc, err := specs.ParseDocument(fixture(t, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := st.ImportSpec(ctx, specs.FromDocument(*specs.Fix(doc, specs.FixOptions{}).Document), nil, false); err != nil {
					t.Fatal(err)
				}
			}
			res, err := specs.ImportFiles(ctx, st, openWS(t, root), tt.path, tt.opts)
			if tt.wantErr != "" {
				if code(err) != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range res.Files {
				got[f.File] = f.Outcome
				if r := tt.reason[f.File]; !strings.Contains(f.Reason, r) {
					t.Errorf("%s: reason %q lacks %q", f.File, f.Reason, r)
				}
				if lc, ok := tt.wantLc[f.File]; ok && f.Lifecycle != lc {
					t.Errorf("%s: lifecycle %q, want %q", f.File, f.Lifecycle, lc)
				}
			}
			if len(got) != len(tt.want) || res.Total != len(tt.want) {
				t.Fatalf("files = %v, want %v", got, tt.want)
			}
			for f, o := range tt.want {
				if got[f] != o {
					t.Errorf("%s: outcome %q, want %q", f, got[f], o)
				}
			}
			ids, _ := st.SpecIDs(ctx)
			if len(ids) != tt.wantIDs {
				t.Errorf("stored ids %v, want %d", ids, tt.wantIDs)
			}
		})
	}
}

func TestImportFilesRejectsFIFOWithoutOpeningIt(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "in", "f.json"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	res, err := specs.ImportFiles(context.Background(), specstore.New(storetest.Open(t), nil), openWS(t, root), "in", specs.ImportOptions{AutoFix: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Outcome != "rejected" || res.NotImported() != 1 {
		t.Fatalf("files = %+v", res.Files)
	}
}

func importBasic(t *testing.T, st *specstore.Repo) {
	t.Helper()
	doc, err := specs.ParseDocument(fixture(t, "foundry_basic.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc.Lifecycle, doc.Version = specs.LifecycleActive, 1
	if err := st.ImportSpec(context.Background(), specs.FromDocument(*specs.Fix(doc, specs.FixOptions{}).Document), nil, false); err != nil {
		t.Fatal(err)
	}
}

func TestExportFilesLayout(t *testing.T) {
	tests := []struct {
		name    string
		specID  string
		stale   string // a copy left in another folder by an earlier export
		want    []string
		wantErr string
	}{
		{name: "all specs", want: []string{"out/active/" + basicID + ".json"}},
		{name: "one spec removes stale copy", specID: basicID, stale: "out/pending/" + basicID + ".json", want: []string{"out/active/" + basicID + ".json"}},
		{name: "unknown spec", specID: "nope", wantErr: errcode.SpecNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := specstore.New(storetest.Open(t), nil)
			importBasic(t, st)
			root := t.TempDir()
			if tt.stale != "" {
				write(t, root, tt.stale, []byte("{}"))
			}
			res, err := specs.ExportFiles(context.Background(), st, openWS(t, root), "out", tt.specID)
			if tt.wantErr != "" {
				if code(err) != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Count != len(tt.want) || res.Files[0].File != "active/"+basicID+".json" {
				t.Fatalf("files = %+v", res.Files)
			}
			for _, f := range tt.want {
				b, err := os.ReadFile(filepath.Join(root, f))
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != res.Files[0].Bytes {
					t.Errorf("%s: %d bytes, answer says %d", f, len(b), res.Files[0].Bytes)
				}
			}
			if tt.stale != "" {
				if _, err := os.Stat(filepath.Join(root, tt.stale)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("stale copy %s still there (%v)", tt.stale, err)
				}
			}
		})
	}
}

func TestExportThenImportRoundTrips(t *testing.T) {
	ctx := context.Background()
	st := specstore.New(storetest.Open(t), nil)
	importBasic(t, st)
	root := t.TempDir()
	if _, err := specs.ExportFiles(ctx, st, openWS(t, root), "specs", ""); err != nil {
		t.Fatal(err)
	}
	res, err := specs.ImportFiles(ctx, specstore.New(storetest.Open(t), nil), openWS(t, root), "specs", specs.ImportOptions{AutoFix: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Outcome != "imported" || res.Files[0].Lifecycle != "active" || res.Files[0].FixesApplied != 0 {
		t.Fatalf("files = %+v", res.Files)
	}
}
