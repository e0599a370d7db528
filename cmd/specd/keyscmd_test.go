package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd/specd/core/httpguard"
)

func TestKeysAdd(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sub", "keys")
	var out, errb bytes.Buffer
	if code := keysCmd([]string{"add", "ann", "--role", "observer", "--file", file}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	secret := strings.TrimSpace(out.String())
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || !strings.HasPrefix(string(b), "ann observer ") {
		t.Fatalf("keys file %q (the key itself must not be stored)", b)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Fatalf("keys file mode %v", st.Mode().Perm())
	}
	ks, err := httpguard.LoadKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := ks.Lookup(secret); !ok || k.ID != "ann" || k.Role != httpguard.Observer {
		t.Fatalf("printed key does not match the stored hash: %v %v", k, ok)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"add", "ann", "--role", "admin", "--file", file}, 1},  // id taken
		{[]string{"add", "bob", "--role", "owner", "--file", file}, 2},  // bad role
		{[]string{"add", "../x", "--role", "admin", "--file", file}, 2}, // bad id
		{[]string{"list"}, 2},
	} {
		out.Reset()
		if code := keysCmd(tc.args, &out, &errb); code != tc.code || out.Len() != 0 {
			t.Fatalf("%v: exit %d, stdout %q", tc.args, code, out.String())
		}
	}
}

// TestKeysAddRefusesAFileOthersCanWrite: keys add does
// not append to a keys file that others can write (the server would refuse
// it); the file is left as it was and the message names the fix.
func TestKeysAddRefusesAFileOthersCanWrite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	var out, errb bytes.Buffer
	if code := keysCmd([]string{"add", "ann", "--role", "observer", "--file", file}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(file)
	out.Reset()
	errb.Reset()
	code := keysCmd([]string{"add", "bob", "--role", "admin", "--file", file}, &out, &errb)
	after, _ := os.ReadFile(file)
	if code != 1 || out.Len() != 0 || !bytes.Equal(before, after) || !strings.Contains(errb.String(), "mode 0666") || !strings.Contains(errb.String(), "chmod 600") {
		t.Fatalf("exit %d, stdout %q, stderr %q, file changed %v", code, out.String(), errb.String(), !bytes.Equal(before, after))
	}
	if _, err := httpguard.LoadKeys(file); err == nil {
		t.Fatal("the server side loaded a keys file of mode 0666")
	}
}

// TestKeysAddRefusesAFolderOthersCanWrite: keys add neither writes nor
// makes anything below a folder others can write (the server would refuse
// the keys file: another keys file could be renamed over it), and names
// the folder and chmod go-w; into a sticky folder such as /tmp it writes
// a file the server loads.
func TestKeysAddRefusesAFolderOthersCanWrite(t *testing.T) {
	base := t.TempDir()
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	file := filepath.Join(shared, "sub", "keys")
	code := keysCmd([]string{"add", "ann", "--role", "observer", "--file", file}, &out, &errb)
	if _, err := os.Lstat(filepath.Dir(file)); code != 1 || out.Len() != 0 || !os.IsNotExist(err) || !strings.Contains(errb.String(), "chmod go-w "+shared) {
		t.Fatalf("exit %d, stdout %q, stderr %q, %s made: %v", code, out.String(), errb.String(), filepath.Dir(file), err == nil)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := keysCmd([]string{"add", "ann", "--role", "observer", "--file", file}, &out, &errb); code != 0 {
		t.Fatalf("sticky folder: exit %d: %s", code, errb.String())
	}
	if _, err := httpguard.LoadKeys(file); err != nil {
		t.Fatalf("the server refuses what keys add wrote: %v", err)
	}
}
