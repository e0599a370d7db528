package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A one-shot call with --mirror (or SPECD_MIRROR) leaves the mirror up to
// date when it exits; a folder spec export refuses stops specd with exit 2
// naming the setting; specd mirror needs a folder.
func TestMirrorSettingAndOneShotCall(t *testing.T) {
	ws := t.TempDir()
	db := filepath.Join(ws, ".specd", "specd.db")
	var out, errb bytes.Buffer
	if code := run([]string{"call", "authoring", `{"action":"spec-create","name":"One shot"}`, "--db", db, "--workspace", ws, "--mirror", "plan"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	files, _ := filepath.Glob(filepath.Join(ws, "plan", "pending", "one-shot-*.json"))
	if len(files) != 1 {
		t.Fatalf("the call's spec is not mirrored: %v", files)
	}
	t.Setenv("SPECD_MIRROR", "plan")
	if code := run([]string{"mirror", "status", "--db", db, "--workspace", ws}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("mirror status of a clean mirror: exit %d: %s", code, errb.String())
	}
	if err := os.WriteFile(files[0], []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run([]string{"mirror", "status", "--db", db, "--workspace", ws}, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(out.String(), `"edited": [`+"\n    \"plan/pending/") {
		t.Fatalf("mirror status of an edited file: exit %d: %s", code, out.String())
	}
	for _, bad := range []string{".git", ".specd/x", "../out", "."} {
		errb.Reset()
		code := run([]string{"call", "health", `{"action":"liveness"}`, "--db", db, "--workspace", ws, "--mirror", bad}, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "--mirror=") {
			t.Errorf("--mirror %s: exit %d: %s", bad, code, errb.String())
		}
	}
	if code := run([]string{"serve", "--db", db, "--workspace", ws}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Errorf("serve with SPECD_MIRROR=plan on an empty stdin: exit %d: %s", code, errb.String())
	}
	t.Setenv("SPECD_MIRROR", ".git/hooks")
	errb.Reset()
	if code := run([]string{"call", "health", `{"action":"liveness"}`, "--db", db, "--workspace", ws}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "SPECD_MIRROR=") {
		t.Errorf("SPECD_MIRROR=.git/hooks: exit %d: %s", code, errb.String())
	}
	t.Setenv("SPECD_MIRROR", "")
	if code := run([]string{"mirror", "sync", "--db", db, "--workspace", ws}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Fatalf("mirror without a folder: exit %d", code)
	}
}
