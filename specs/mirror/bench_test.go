package mirror_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/mirror"
	"github.com/specd/specd/specs/specstore"
)

// BenchmarkPass is one mirror pass over a store of 200 specs: "idle" with
// nothing changed (the list of headers and the state file), "one-change"
// after one spec changed (plus that spec's read, encoding and file write).
func BenchmarkPass(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "foundry_basic.json"))
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	repo := specstore.New(storetest.Open(b), nil)
	for i := 0; i < 200; i++ {
		doc := strings.ReplaceAll(string(raw), basicID, fmt.Sprintf("bench-spec-2025-11-03-%03d", i+1))
		p := filepath.Join(root, "in", fmt.Sprintf("%03d.json", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ws, err := workspacefs.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	ctx := context.Background()
	if res, err := specs.ImportFiles(ctx, repo, ws, "in", specs.ImportOptions{AutoFix: true}); err != nil || res.Counts["imported"] != 200 {
		b.Fatalf("%v %+v", err, res.Counts)
	}
	m, err := mirror.Open(repo, root, "plan", mirror.Options{Store: "bench", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("idle", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if rep, err := m.Sync(ctx); err != nil || len(rep.Written) != 0 {
				b.Fatal(err, rep)
			}
		}
	})
	n := 0
	b.Run("one-change", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n++
			b.StopTimer()
			_, err := repo.MutateSpec(ctx, "bench-spec-2025-11-03-007", specs.RepoWriteOptions{Action: "bench"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
				sp.Header.Title = fmt.Sprint("title ", n)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if rep, err := m.Sync(ctx); err != nil || len(rep.Written) != 1 {
				b.Fatal(err, rep)
			}
		}
	})
}
