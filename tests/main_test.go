package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs the tests, then removes the binaries specdBinary and
// specdLoadBinary built into temporary directories (never $SPECD_BIN or
// $SPECD_LOAD_BIN: those are the caller's), so a run leaves nothing in the
// system temp directory. A run killed before the end (go test's -timeout
// panic, SIGKILL) still leaves them.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := removeBuilt(specdBuild.dir, loadBuild.dir); err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// removeBuilt removes each directory a test build made ("" when it made
// none).
func removeBuilt(dirs ...string) error {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("removing the test build %s: %w", d, err)
		}
	}
	return nil
}

// buildChildEnv marks the run of this test binary that
// TestBuiltBinariesRemovedAtExit starts.
const buildChildEnv = "SPECD_TEST_BUILD_CHILD"

// TestBuiltBinariesRemovedAtExit runs this test binary again, in a private
// TMPDIR, for one test that asks for both binaries: once with $SPECD_BIN
// unset (specd is built) and $SPECD_LOAD_BIN given, once the other way
// round. After each run the private TMPDIR is empty (the built binary's
// directory is gone) and the given binary is still there.
func TestBuiltBinariesRemovedAtExit(t *testing.T) {
	if os.Getenv(buildChildEnv) != "" {
		t.Skip("the child run")
	}
	if testing.Short() {
		t.Skip("builds a binary")
	}
	exe, err := os.Executable()
	must(t, err)
	for _, tc := range []struct{ given, built string }{
		{"SPECD_LOAD_BIN", "SPECD_BIN"},
		{"SPECD_BIN", "SPECD_LOAD_BIN"},
	} {
		tmp := t.TempDir()
		given := filepath.Join(t.TempDir(), "given")
		must(t, os.WriteFile(given, []byte("not run"), 0o755))
		cmd := exec.Command(exe, "-test.run=^TestBuiltBinariesChild$", "-test.count=1", "-test.v")
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k != "TMPDIR" && k != "SPECD_BIN" && k != "SPECD_LOAD_BIN" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp, tc.given+"="+given, buildChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestBuiltBinariesChild") {
			t.Fatalf("%s built: the child run failed: %v\n%s", tc.built, err, out)
		}
		es, err := os.ReadDir(tmp)
		must(t, err)
		for _, e := range es {
			t.Errorf("%s built: the run left %s in its temp directory", tc.built, e.Name())
		}
		if _, err := os.Stat(given); err != nil {
			t.Errorf("%s given: %v", tc.given, err)
		}
	}
}

// TestBuiltBinariesChild is the child run of TestBuiltBinariesRemovedAtExit:
// it asks for both binaries, one built, one given.
func TestBuiltBinariesChild(t *testing.T) {
	if os.Getenv(buildChildEnv) == "" {
		t.Skip("run by TestBuiltBinariesRemovedAtExit")
	}
	for _, p := range []string{specdBinary(t), specdLoadBinary(t)} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
}
