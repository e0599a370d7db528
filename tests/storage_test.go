//go:build linux

package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// specdCLI runs the built binary once (specd call …, backup, check) and
// returns its exit code and output. cred, when set, runs it as that user.
func specdCLI(t *testing.T, bin string, cred *syscall.Credential, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "SPECD_LOG_LEVEL=error")
	for i, a := range args {
		if a == "--db" && i+1 < len(args) && filepath.Base(filepath.Dir(args[i+1])) == ".specd" {
			cmd.Env = append(cmd.Env, "SPECD_WORKSPACE="+filepath.Dir(filepath.Dir(args[i+1])))
		}
	}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// envelope decodes the envelope `specd call` printed.
func envelope(t *testing.T, out string) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("not an envelope: %v\n%s", err, out)
	}
	return env
}

func cliCall(t *testing.T, bin, db string, cred *syscall.Credential, tool string, args map[string]any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(args)
	_, out, _ := specdCLI(t, bin, cred, "call", tool, string(raw), "--db", db)
	return envelope(t, out)
}

// seedStore creates a store at db with one spec and a journal entry through
// the binary, and returns the spec id.
func seedStore(t *testing.T, bin, db string) string {
	t.Helper()
	env := cliCall(t, bin, db, nil, "authoring", map[string]any{"action": "spec-create", "name": "guarded"})
	if env["success"] != true {
		t.Fatalf("spec-create: %v", env)
	}
	id := data(env)["spec_id"].(string)
	if env := cliCall(t, bin, db, nil, "journal", map[string]any{"action": "add", "spec_id": id, "title": "first"}); env["success"] != true {
		t.Fatalf("journal add: %v", env)
	}
	return id
}

// warningCodes lists the codes of meta.warning_details.
func warningCodes(env map[string]any) []string {
	var out []string
	meta, _ := env["meta"].(map[string]any)
	ds, _ := meta["warning_details"].([]any)
	for _, d := range ds {
		if m, ok := d.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["code"]))
		}
	}
	if len(out) == 0 && meta["warnings"] != nil {
		out = append(out, fmt.Sprint(meta["warnings"]))
	}
	return out
}

// TestCorruptStoreCLI (end to end): a truncated store makes `specd call` answer
// STORE_CORRUPT (type unavailable, the file named relative to the workspace),
// health check report it (status unavailable, a warning) and readiness say not
// ready, `specd check` exit 1; a backup taken before restores it and checks
// clean.
func TestCorruptStoreCLI(t *testing.T) {
	t.Parallel()
	bin := specdBinary(t)
	ws := t.TempDir()
	db := filepath.Join(ws, ".specd", "specd.db")
	id := seedStore(t, bin, db)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if code, out, errs := specdCLI(t, bin, nil, "backup", backup, "--db", db); code != 0 {
		t.Fatalf("backup: %d %s %s", code, out, errs)
	}
	if code, _, _ := specdCLI(t, bin, nil, "backup", backup, "--db", db); code != 1 {
		t.Fatalf("backup over an existing file without --force: exit %d, want 1", code)
	}
	if code, out, _ := specdCLI(t, bin, nil, "check", "--db", db); code != 0 {
		t.Fatalf("check of a sound store: %d %s", code, out)
	}
	server := stdioOnStore(t, db, protocols[0])
	if env := call(t, server, "spec", map[string]any{"action": "get", "spec_id": id}); env["success"] != true {
		t.Fatalf("server before the damage: %v", env)
	}
	if err := os.Truncate(db, 8<<10); err != nil {
		t.Fatal(err)
	}
	// The running server answers STORE_CORRUPT on every call, and lets the
	// file go: other processes get STORE_CORRUPT too, never LOCK_TIMEOUT.
	for i := 0; i < 2; i++ {
		if env := call(t, server, "spec", map[string]any{"action": "get", "spec_id": id}); errorCode(env) != "STORE_CORRUPT" {
			t.Fatalf("server call %d on a truncated store: %v", i, env)
		}
	}
	for i := 0; i < 2; i++ {
		env := cliCall(t, bin, db, nil, "spec", map[string]any{"action": "get", "spec_id": id})
		d := data(env)
		if errorCode(env) != "STORE_CORRUPT" || d["error_type"] != "unavailable" || d["details"].(map[string]any)["store"] != ".specd/specd.db" {
			t.Fatalf("call %d on a truncated store: %v", i, env)
		}
		if strings.Contains(fmt.Sprint(env), ws) {
			t.Fatalf("answer shows the server path: %v", env)
		}
	}
	chk := cliCall(t, bin, db, nil, "health", map[string]any{"action": "check"})
	if chk["success"] != true || data(chk)["status"] != "unavailable" || !strings.Contains(fmt.Sprint(warningCodes(chk)), "STORE_CORRUPT") {
		t.Fatalf("health check of a corrupt store: %v", chk)
	}
	ready := cliCall(t, bin, db, nil, "health", map[string]any{"action": "readiness"})
	if data(ready)["ready"] != false || len(warningCodes(ready)) == 0 {
		t.Fatalf("readiness of a corrupt store: %v", ready)
	}
	if code, out, errs := specdCLI(t, bin, nil, "check", "--db", db); code != 1 || !strings.Contains(errs+out, "STORE_CORRUPT") {
		t.Fatalf("check of a corrupt store: exit %d\n%s%s", code, out, errs)
	}
	raw, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := specdCLI(t, bin, nil, "check", "--db", db); code != 0 {
		t.Fatalf("check after restoring the backup: %d %s", code, out)
	}
	if env := cliCall(t, bin, db, nil, "spec", map[string]any{"action": "get", "spec_id": id}); env["success"] != true {
		t.Fatalf("restored store: %v", env)
	}
	if env := call(t, server, "spec", map[string]any{"action": "get", "spec_id": id}); env["success"] != true {
		t.Fatalf("the same server after the restore: %v", env)
	}
}

// nobody is an unprivileged user: root ignores file modes, so read-only
// conditions are arranged for this user.
var nobody = &syscall.Credential{Uid: 65534, Gid: 65534}

// openToAll makes dir and its parents up to the temporary root traversable
// by every user, so an unprivileged child can reach files in it.
func openToAll(t *testing.T, dir string) {
	t.Helper()
	for p := dir; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// binaryForAll copies the binary where an unprivileged user can run it.
func binaryForAll(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(specdBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	openToAll(t, dir)
	p := filepath.Join(dir, "specd")
	if err := os.WriteFile(p, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadOnlyStoreServesReads: a 0444 store file opened by an unprivileged
// user serves reads, refuses writes with STORE_READ_ONLY (registered, type
// unavailable) and changes nothing; health reports degraded with a warning and
// readiness not ready.
func TestReadOnlyStoreServesReads(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a child as another user")
	}
	bin := binaryForAll(t)
	ws := t.TempDir()
	db := filepath.Join(ws, ".specd", "specd.db")
	id := seedStore(t, bin, db)
	openToAll(t, filepath.Dir(db))
	if err := os.Chmod(filepath.Dir(db), 0o777); err != nil { // the folder stays writable: only the file is read-only
		t.Fatal(err)
	}
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(db)
	if env := cliCall(t, bin, db, nobody, "spec", map[string]any{"action": "get", "spec_id": id}); env["success"] != true {
		t.Fatalf("read of a read-only store: %v", env)
	}
	if env := cliCall(t, bin, db, nobody, "journal", map[string]any{"action": "list", "spec_id": id}); env["success"] != true {
		t.Fatalf("journal list of a read-only store: %v", env)
	}
	w := cliCall(t, bin, db, nobody, "journal", map[string]any{"action": "add", "spec_id": id, "title": "refused"})
	if errorCode(w) != "STORE_READ_ONLY" || data(w)["error_type"] != "unavailable" {
		t.Fatalf("write to a read-only store: %v", w)
	}
	chk := cliCall(t, bin, db, nobody, "health", map[string]any{"action": "check"})
	if data(chk)["status"] != "degraded" || !strings.Contains(fmt.Sprint(warningCodes(chk)), "STORE_READ_ONLY") {
		t.Fatalf("health check of a read-only store: %v", chk)
	}
	if r := cliCall(t, bin, db, nobody, "health", map[string]any{"action": "readiness"}); data(r)["ready"] != false {
		t.Fatalf("readiness of a read-only store: %v", r)
	}
	after, _ := os.ReadFile(db)
	if !bytes.Equal(before, after) {
		t.Fatal("the read-only store file changed")
	}
}

// inMountNamespace runs script with sh in a private mount namespace (its
// mounts vanish with it), with $SPECD set to the binary. It skips the test
// when the sandbox forbids namespaces or mounts.
func inMountNamespace(t *testing.T, bin, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Env = append(os.Environ(), "SPECD="+bin, "SPECD_LOG_LEVEL=error")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "mount") || strings.Contains(err.Error(), "operation not permitted") {
			t.Skipf("the sandbox forbids mounting in a private namespace: %v\n%s", err, stderr.String())
		}
		t.Fatalf("%v\n%s%s", err, out, stderr.String())
	}
	return string(out)
}

// TestReadOnlyFileSystem (item 9): on a file system mounted read-only, even
// as root, reads are served and writes answer STORE_READ_ONLY.
func TestReadOnlyFileSystem(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount")
	}
	bin := specdBinary(t)
	ws := t.TempDir()
	db := filepath.Join(ws, ".specd", "specd.db")
	id := seedStore(t, bin, db)
	dir := filepath.Dir(db)
	out := inMountNamespace(t, bin, fmt.Sprintf(`
mount --bind %[1]s %[1]s
mount -o remount,bind,ro %[1]s
echo "READ $("$SPECD" call spec '{"action":"get","spec_id":"%[2]s"}' --db %[3]s | tr -d '\n')"
echo "WRITE $("$SPECD" call journal '{"action":"add","spec_id":"%[2]s","title":"x"}' --db %[3]s | tr -d '\n')"
echo "HEALTH $("$SPECD" call health '{"action":"check"}' --db %[3]s | tr -d '\n')"
`, dir, id, db))
	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(l, " ")
		lines[k] = envelope(t, v)
	}
	if lines["READ"]["success"] != true {
		t.Fatalf("read on a read-only file system: %v", lines["READ"])
	}
	if errorCode(lines["WRITE"]) != "STORE_READ_ONLY" {
		t.Fatalf("write on a read-only file system: %v", lines["WRITE"])
	}
	if data(lines["HEALTH"])["status"] != "degraded" {
		t.Fatalf("health on a read-only file system: %v", lines["HEALTH"])
	}
}

// TestDiskFull (item 9): on a small tmpfs, journal add answers STORE_FULL
// (not INTERNAL_ERROR) once the disk is full, the store stays consistent
// (specd check passes, every acknowledged entry is there) and health says
// degraded; with RLIMIT_FSIZE (EFBIG) the answer is STORE_FULL as well.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount")
	}
	bin := specdBinary(t)
	outDir := t.TempDir()
	mnt := t.TempDir()
	db := filepath.Join(mnt, ".specd", "specd.db")
	content := strings.Repeat("z", 9000)
	out := inMountNamespace(t, bin, fmt.Sprintf(`
mount -t tmpfs -o size=256k tmpfs %[1]s
ID=$("$SPECD" call authoring '{"action":"spec-create","name":"full"}' --db %[2]s | sed -n 's/.*"spec_id": "\([^"]*\)".*/\1/p' | head -1)
ok=0
for i in $(seq 1 60); do
  if "$SPECD" call journal "{\"action\":\"add\",\"spec_id\":\"$ID\",\"title\":\"e$i\",\"content\":\"%[3]s\"}" --db %[2]s > %[4]s/last.json; then ok=$((ok+1)); else break; fi
done
echo "OK $ok"
echo "LAST $(tr -d '\n' < %[4]s/last.json)"
echo "HEALTH $("$SPECD" call health '{"action":"check"}' --db %[2]s | tr -d '\n')"
echo "LIST $("$SPECD" call journal "{\"action\":\"list\",\"spec_id\":\"$ID\",\"limit\":100}" --db %[2]s --token-budget 1000000 | tr -d '\n' | head -c 2000000)"
"$SPECD" check --db %[2]s > /dev/null && echo "CHECK ok" || echo "CHECK failed"
`, mnt, db, content, outDir))
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(l, " ")
		lines[k] = v
	}
	var ok int
	fmt.Sscan(lines["OK"], &ok)
	last := envelope(t, lines["LAST"])
	if ok == 0 || ok == 60 || errorCode(last) != "STORE_FULL" || data(last)["error_type"] != "unavailable" {
		t.Fatalf("after %d entries on a full disk: %v", ok, last)
	}
	if lines["CHECK"] != "ok" {
		t.Fatalf("store not consistent after the full disk: %s", out)
	}
	if h := envelope(t, lines["HEALTH"]); data(h)["status"] != "degraded" {
		t.Fatalf("health on a full disk: %v", h)
	}
	list := envelope(t, lines["LIST"])
	if n, _ := data(list)["count"].(float64); int(n) != ok+1 {
		t.Fatalf("journal holds %v entries after %d acknowledged adds (+1 from spec-create?); fidelity %v", data(list)["count"], ok, list["meta"].(map[string]any)["content_fidelity"])
	}

	// RLIMIT_FSIZE: the kernel refuses to grow the file (EFBIG).
	db2 := filepath.Join(t.TempDir(), ".specd", "specd.db")
	id := seedStore(t, bin, db2)
	st, _ := os.Stat(db2)
	out = inMountNamespace(t, bin, fmt.Sprintf(`
ulimit -f %[1]d
for i in $(seq 1 40); do
  "$SPECD" call journal "{\"action\":\"add\",\"spec_id\":\"%[2]s\",\"title\":\"big$i\",\"content\":\"%[3]s\"}" --db %[4]s > %[5]s/rl.json || break
done
tr -d '\n' < %[5]s/rl.json
`, st.Size()/512, id, strings.Repeat("q", 9000), db2, outDir))
	if env := envelope(t, strings.TrimSpace(out)); errorCode(env) != "STORE_FULL" {
		t.Fatalf("write beyond RLIMIT_FSIZE: %.300v", env)
	}
}

// TestCheckNamesEveryTruncation (end to end): `specd
// check` of a store cut to any size short of its pages exits 1 with
// STORE_CORRUPT, a message saying what is wrong and the way out (a backup),
// never INTERNAL_ERROR or an empty message.
func TestCheckNamesEveryTruncation(t *testing.T) {
	t.Parallel()
	bin := specdBinary(t)
	ws := t.TempDir()
	db := filepath.Join(ws, ".specd", "specd.db")
	seedStore(t, bin, db)
	good, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{4095, 4096, 4097, 8191, 8192}
	for n := 0; n <= 16384; n += 512 {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		if n >= len(good) {
			continue
		}
		if err := os.WriteFile(db, good[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := specdCLI(t, bin, nil, "check", "--db", db)
		if code != 1 || !strings.Contains(errs, "STORE_CORRUPT: The store file .specd/specd.db is damaged (") || !strings.Contains(errs, "specd backup") {
			t.Errorf("check of a store cut to %d bytes: exit %d\n%s%s", n, code, out, errs)
		}
	}
}

// TestBackupRefusesADamagedStore: `specd backup` of a
// store that `specd check` finds damaged exits 1, says why, names --force
// and writes nothing; with --force it copies.
func TestBackupRefusesADamagedStore(t *testing.T) {
	t.Parallel()
	bin := specdBinary(t)
	ws := t.TempDir()
	db := filepath.Join(ws, ".specd", "specd.db")
	seedStore(t, bin, db)
	good, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	// Find a page whose damage the store opens over but check reports.
	found := false
	for p := 2; p*4096 < len(good) && !found; p++ {
		bad := append([]byte(nil), good...)
		copy(bad[p*4096:], "GARBAGEGARBAGEGARBAGE")
		if err := os.WriteFile(db, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := specdCLI(t, bin, nil, "check", "--db", db)
		found = code == 1 && strings.Contains(out, "problem(s) found") && !strings.Contains(errs, "STORE_CORRUPT")
	}
	if !found {
		t.Skip("no page of this store opens damaged; nothing to back up")
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	code, out, errs := specdCLI(t, bin, nil, "backup", backup, "--db", db)
	if code != 1 || !strings.Contains(errs, "damaged") || !strings.Contains(errs, "--force") {
		t.Fatalf("backup of a damaged store: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(backup); err == nil {
		t.Fatal("backup of a damaged store wrote the file")
	}
	if code, out, errs := specdCLI(t, bin, nil, "backup", backup, "--force", "--db", db); code != 0 {
		t.Fatalf("backup --force of a damaged store: exit %d\n%s%s", code, out, errs)
	}
	// A truncated store cannot be opened: refused too, naming --force.
	if err := os.WriteFile(db, good[:5000], 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := specdCLI(t, bin, nil, "backup", backup+"2", "--db", db); code != 1 || !strings.Contains(errs, "STORE_CORRUPT") || !strings.Contains(errs, "--force") {
		t.Fatalf("backup of a truncated store: exit %d\n%s%s", code, out, errs)
	}
}
