package diskspace_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/specd/specd/core/diskspace"
)

// TestFreeMeasuresTheNearestExistingParent: a path that does not exist yet
// (a store about to be created) is measured on its nearest existing parent.
func TestFreeMeasuresTheNearestExistingParent(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" {
		t.Skip("not measured on this platform")
	}
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
	}{
		{"existing directory", dir},
		{"missing file", filepath.Join(dir, "store.db")},
		{"missing nested directories", filepath.Join(dir, "a", "b", "c", "store.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			free, ok := diskspace.Free(tt.path)
			if !ok || free == 0 {
				t.Fatalf("Free(%q) = %d, %v; want a measurement", tt.path, free, ok)
			}
		})
	}
}
