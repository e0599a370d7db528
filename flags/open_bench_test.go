package flags

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOpen is the start-up cost of the flags service, part of a
// server's cold start: the embedded defaults (in-memory provider) and a
// flag file (flagd file mode, watched).
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "flags.json")
	if err := os.WriteFile(path, DefaultFile, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{{"embedded", ""}, {"file", path}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				s, err := Open(context.Background(), Options{Path: c.path})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}
