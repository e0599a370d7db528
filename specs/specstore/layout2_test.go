package specstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// testdata/layout2.db.gz is a store written by the layout-2 build (main at
// 6f7c62c: `specd call` — a phase of 150 tasks in one bulk add, three
// single adds, a complete, a move to the front, a remove, a subtask, a
// second phase and its task; versions 1 to 11), and
// testdata/layout2-hierarchies.json.gz what that build's `spec get
// version=N` answered for each version (each node's status, parent and
// children).
const layout2Spec = "old-layout-2026-11-27-001"

type nodeShape struct {
	Status   string   `json:"status"`
	Parent   *string  `json:"parent"`
	Children []string `json:"children"`
}

func gunzip(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func shapes(doc specs.Document) map[string]nodeShape {
	out := map[string]nodeShape{}
	for id, n := range doc.Hierarchy {
		s := nodeShape{Status: string(n.Status), Children: n.Children.Slice()}
		if n.Parent != "" {
			p := n.Parent
			s.Parent = &p
		}
		if s.Children == nil {
			s.Children = []string{}
		}
		out[id] = s
	}
	return out
}

// TestLayout2StoreReadsAndConverts opens the store the layout-2 build
// wrote: every version reads as that build read it; the next writes turn
// the nodes they touch into chunks (lazily, each in its own write) while
// every older version still reads the same; a rollback across the
// conversion restores the old version's nodes; the invariants hold.
func TestLayout2StoreReadsAndConverts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), ".specd", "specd.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, gunzip(t, "layout2.db.gz"), 0o644); err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]nodeShape
	if err := json.Unmarshal(gunzip(t, "layout2-hierarchies.json.gz"), &want); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.Options{Path: path, LockTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if info, err := st.Info(ctx); err != nil || info.SchemaVersion != bucketstore.SchemaVersion {
		t.Fatalf("info after opening a layout-2 file: %+v %v", info, err)
	}
	r := New(st, nil)
	phaseValue := func() []byte {
		var v []byte
		if err := st.View(ctx, func(tx bucketstore.Tx) error {
			v = bytes.Clone(tx.Bucket(bucketSpecs).Bucket([]byte(layout2Spec)).Bucket(bucketNodes).Get([]byte("phase-1")))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := phaseValue(); len(v) == 0 || v[0] != '{' {
		t.Fatalf("the fixture's phase is not a layout-2 node: %.40q", v)
	}
	readAll := func(stage string, upTo int64) map[int64]map[string]nodeShape {
		got := map[int64]map[string]nodeShape{}
		for v := int64(1); v <= upTo; v++ {
			if err := r.ReadVersion(ctx, layout2Spec, v, func(vv specs.VersionView) error {
				got[v] = shapes(vv.Document())
				return nil
			}); err != nil {
				t.Fatalf("%s: version %d: %v", stage, v, err)
			}
			if w, ok := want[strconv.FormatInt(v, 10)]; ok && !reflect.DeepEqual(got[v], w) {
				t.Errorf("%s: version %d reads differently from the layout-2 build", stage, v)
			}
		}
		return got
	}
	readAll("as written", 11)

	add := func(title string) string {
		var id string
		if _, err := r.MutateSpec(ctx, layout2Spec, specs.RepoWriteOptions{Action: "task.add"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			var err error
			id, err = specs.AddTask(sp, "phase-1", specs.TaskInput{Title: title})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := add("after the upgrade")
	if v := phaseValue(); len(v) == 0 || v[0] != 0 {
		t.Fatalf("the phase was not converted by its write: %.40q", v)
	}
	second := add("and another")
	got := readAll("after two writes", 13)
	kids := want["11"]["phase-1"].Children
	if g := got[12]["phase-1"].Children; !reflect.DeepEqual(g, append(append([]string{}, kids...), first)) {
		t.Errorf("version 12's phase: %d children, last %q", len(g), g[len(g)-1])
	}
	if g := got[13]["phase-1"].Children; !reflect.DeepEqual(g, append(append([]string{}, kids...), first, second)) {
		t.Errorf("version 13's phase: %d children", len(g))
	}

	if _, err := r.RollbackSpec(ctx, layout2Spec, 7, specs.RepoWriteOptions{Action: "authoring.rollback"}, func() string { return "2026-11-27T03:00:00Z" }); err != nil {
		t.Fatal(err)
	}
	after := readAll("after the rollback", 14)
	if !reflect.DeepEqual(after[14], want["7"]) {
		t.Errorf("the rollback to 7 did not restore version 7's nodes")
	}
	for v := int64(1); v <= 13; v++ {
		if !reflect.DeepEqual(after[v], got[v]) {
			t.Errorf("version %d changed after the rollback", v)
		}
	}
	if err := st.View(ctx, func(tx bucketstore.Tx) error {
		findings, err := r.CheckSpecs(tx)
		if len(findings) > 0 {
			t.Errorf("check: %v", findings)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
