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

// otherUID owns what the tests give to another user than the server's.
const otherUID = 65534

// TestLoadKeysRefusesFoldersOthersCanWrite: as ssh's StrictModes, every
// folder the keys file's path goes through (symlinks followed, each link's
// own folder included) must be owned by the server's user or root and not
// writable by group or others, since whoever can write a folder can rename
// another keys file over the entry. A sticky folder (like /tmp) passes for
// entries owned by the server's user or root. The refusal names the
// folder, what is wrong and the fix.
func TestLoadKeysRefusesFoldersOthersCanWrite(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	line, _ := KeyLine("ann", Admin, secret)
	base := t.TempDir() // 0700 in /tmp (1777): passes
	dir := func(name string, mode os.FileMode) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	put := func(d string) string {
		p := filepath.Join(d, "keys")
		if err := os.WriteFile(p, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := put(base)
	shared, group := dir("shared", 0o777), dir("group", 0o770)
	sticky := dir("sticky", 0o777|os.ModeSticky)
	inShared, inGroup, inSticky := put(shared), put(group), put(sticky)
	linkInShared := filepath.Join(shared, "link")
	linkToShared := filepath.Join(base, "link")
	nested := filepath.Join(dir("nest", 0o755), "sub")
	for _, l := range [][2]string{{good, linkInShared}, {inShared, linkToShared}, {"../group", nested}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, path string
		want       []string // in the error; none: loads
	}{
		{"own folder in /tmp", good, nil},
		{"sticky shared folder, own file", inSticky, nil},
		{"world-writable folder", inShared, []string{shared, "mode 0777", "chmod go-w " + shared}},
		{"group-writable folder", inGroup, []string{group, "mode 0770", "chmod go-w " + group}},
		{"link in a world-writable folder", linkInShared, []string{shared, "chmod go-w " + shared}},
		{"link into a world-writable folder", linkToShared, []string{shared, "chmod go-w " + shared}},
		{"relative link to a group-writable folder", filepath.Join(nested, "keys"), []string{group, "chmod go-w " + group}},
	} {
		_, err := LoadKeys(tc.path)
		checkRefusal(t, tc.name, err, tc.want)
	}
	t.Chdir(shared) // a relative path is checked from the root too
	_, err = LoadKeys("keys")
	checkRefusal(t, "relative path", err, []string{shared, "chmod go-w " + shared})
	t.Chdir(base)
	_, err = LoadKeys("keys")
	checkRefusal(t, "relative path", err, nil)
}

// checkRefusal fails unless err is nil when want is empty, else an error
// holding every string of want.
func checkRefusal(t *testing.T, name string, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		return
	}
	if err == nil {
		t.Errorf("%s: loaded, want a refusal naming %q", name, want)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %v, want it to name %q", name, err, w)
		}
	}
}

// TestLoadKeysRefusesOtherOwners: the keys file, every folder above it and
// a link in a sticky folder must belong to the server's user or root;
// another owner could add keys of their own or replace the file.
func TestLoadKeysRefusesOtherOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	line, _ := KeyLine("ann", Admin, secret)
	base := t.TempDir()
	mk := func(rel string, uid int) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(p, uid, -1); err != nil {
			t.Fatal(err)
		}
		return p
	}
	theirFile := mk("a/keys", otherUID)
	inTheirs := mk("theirs/keys", 0)
	if err := os.Chown(filepath.Dir(inTheirs), otherUID, -1); err != nil {
		t.Fatal(err)
	}
	sticky := filepath.Join(base, "sticky")
	good := mk("b/keys", 0)
	if err := os.Mkdir(sticky, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	theirLink := filepath.Join(sticky, "link")
	if err := os.Symlink(good, theirLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(theirLink, otherUID, -1); err != nil {
		t.Fatal(err)
	}
	uid := fmt.Sprintf("uid %d", otherUID)
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"file of another user", theirFile, []string{theirFile, uid, "chown 0 " + theirFile}},
		{"folder of another user", inTheirs, []string{filepath.Dir(inTheirs), uid, "chown 0 " + filepath.Dir(inTheirs)}},
		{"their link in a sticky folder", theirLink, []string{theirLink, uid, good}},
		{"own file", good, nil},
	} {
		_, err := LoadKeys(tc.path)
		checkRefusal(t, tc.name, err, tc.want)
	}
}

// TestLoadKeysChecksDotDotAfterALinkAsTheKernelDoes: in a path such as
// safe/link/../keys the kernel resolves link first, then goes to the
// parent of where it leads; the folder walk must check that folder, not
// the lexically cleaned safe/keys (which need not even exist).
func TestLoadKeysChecksDotDotAfterALinkAsTheKernelDoes(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	line, _ := KeyLine("ann", Admin, secret)
	base := t.TempDir()
	safe, shared := filepath.Join(base, "safe"), filepath.Join(base, "shared")
	for _, d := range []string{safe, shared, filepath.Join(shared, "sub")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(shared, 0o777); err != nil { // others can write, not sticky
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "keys"), []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(shared, "sub"), filepath.Join(safe, "link")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(safe, "link") + "/../keys" // the kernel opens shared/keys
	if _, err := LoadKeys(p); err == nil || !strings.Contains(err.Error(), shared+" on the keys file's path has mode 0777") {
		t.Fatalf("LoadKeys(%s) = %v, want the refusal of %s (mode 0777)", p, err, shared)
	}
}

// TestCheckKeysFileRequiresTheOpenedFileAtItsPath: the folder walk
// resolves the path apart from the open, so the file it reaches must be
// the opened one; an opened file whose path now leads elsewhere (a link
// repointed) or nowhere (a link removed) is refused.
func TestCheckKeysFileRequiresTheOpenedFileAtItsPath(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	line, _ := KeyLine("ann", Admin, secret)
	p, other := writeKeys(t, line), writeKeys(t, line)
	fi, err := os.Stat(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckKeysFile(other, fi); err != nil {
		t.Fatalf("the file at its own path: %v", err)
	}
	for _, path := range []string{p, filepath.Join(filepath.Dir(p), "gone")} {
		if err := CheckKeysFile(path, fi); err == nil || !strings.Contains(err.Error(), "not the one its path leads to") {
			t.Errorf("CheckKeysFile(%s, the stat of %s) = %v, want a refusal", path, other, err)
		}
	}
}
