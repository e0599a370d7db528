//go:build unix

package httpguard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadKeysRefusesFilesOthersCanWrite: a keys file
// that group or others can write is refused, naming its mode and the
// chmod 600 fix, as ssh refuses such key files; so is one that is not a
// regular file (a FIFO is not waited on). Owner-only and read-only-for-
// others files load.
func TestLoadKeysRefusesFilesOthersCanWrite(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	line, _ := KeyLine("ann", Admin, secret)
	for _, tc := range []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o600, true}, {0o400, true}, {0o644, true}, {0o640, true},
		{0o666, false}, {0o620, false}, {0o602, false}, {0o660, false}, {0o622, false},
	} {
		p := writeKeys(t, line)
		if err := os.Chmod(p, tc.mode); err != nil { // not subject to the umask
			t.Fatal(err)
		}
		_, err := LoadKeys(p)
		if tc.ok && err != nil {
			t.Errorf("mode %04o: %v", tc.mode, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("mode %04o", tc.mode)) || !strings.Contains(err.Error(), "chmod 600 "+p)) {
			t.Errorf("mode %04o: want a refusal naming the mode and chmod 600, got %v", tc.mode, err)
		}
	}
	fifo := filepath.Join(t.TempDir(), "keys")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here")
	}
	if _, err := LoadKeys(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("FIFO: %v", err)
	}
}
