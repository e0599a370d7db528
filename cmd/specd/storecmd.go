package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs/specstore"
)

// openForMaintenance resolves the configuration like serve does (--db,
// --workspace, environment) and opens the store; it does not take the
// lock until the first operation.
func openForMaintenance(name string, args []string, stderr io.Writer) (*store.Store, []string, int) {
	c, rest, code := commandConfig(name, args, stderr)
	if c == nil {
		return nil, nil, code
	}
	if c.Store != "" {
		fmt.Fprintf(stderr, "specd %s: works on the bbolt file; for an etcd store use etcd's own tools (etcdctl snapshot save, etcdctl check) or specd migrate --to bolt://PATH\n", name)
		return nil, nil, 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: c.LogLevel}))
	st, err := store.Open(store.Options{Path: c.DB, LockTimeout: c.LockTimeout, EngineOptions: bucketstore.EngineOptions{Logger: logger}, Workspace: c.Workspace})
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return nil, nil, 1
	}
	return st, rest, -1
}

// storeFailure prints a store error as its code and sentences (never Go
// error text of an internal error).
func storeFailure(stderr io.Writer, doing string, err error) {
	var ce *core.Error
	if errors.As(err, &ce) {
		info, _ := errcode.Lookup(ce.Code)
		rem := ce.Remediation
		if rem == "" {
			rem = info.Remediation
		}
		msg := ce.Message
		if msg == "" {
			msg = "an internal error"
		}
		fmt.Fprintf(stderr, "specd %s: %s: %s\n%s\n", doing, ce.Code, msg, rem)
		return
	}
	fmt.Fprintf(stderr, "specd %s: %v\n", doing, err)
}

// backupCmd is "specd backup PATH [--force] [flags]": a consistent copy of
// the store, taken while servers keep running (store.Backup). Without
// --force the store is verified first (store.Verify, as specd check) and a
// damaged one is refused, nothing written; --force also overwrites an
// existing PATH. Exit 0 when written, 1 on failure (a damaged store or an
// existing PATH without --force included), 2 on usage errors.
func backupCmd(args []string, stdout, stderr io.Writer) int {
	dst, args := leadingPath(args)
	force, rest := takeSwitch(args, "force")
	st, extra, code := openForMaintenance("backup", rest, stderr)
	if code >= 0 {
		return code
	}
	defer st.Close()
	dst, ok := backupTarget(dst, extra)
	if !ok {
		fmt.Fprintln(stderr, "usage: specd backup PATH [--force] [--db FILE]")
		return 2
	}
	abs, err := filepath.Abs(dst)
	if err != nil {
		fmt.Fprintln(stderr, "specd backup:", err)
		return 2
	}
	// A copy of a damaged store carries the damage and looks like a good
	// backup: without --force, check first, as specd check does.
	if !force && !soundForBackup(st, stderr) {
		return 1
	}
	bar := startProgress(stderr, "specd backup")
	n, err := st.Backup(context.Background(), abs, force)
	bar.Done()
	if err != nil {
		storeFailure(stderr, "backup", err)
		return 1
	}
	fmt.Fprintf(stdout, "backup of %s written to %s (%d bytes)\n", st.Path(), abs, n)
	return 0
}

// leadingPath splits a first argument that is a path (neither empty nor a
// flag) off args; it returns "" and args unchanged otherwise.
func leadingPath(args []string) (string, []string) {
	if len(args) > 0 && args[0] != "" && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

// takeSwitch removes every --name and -name from args and reports whether
// there was one; the other arguments keep their order.
func takeSwitch(args []string, name string) (bool, []string) {
	on := false
	var rest []string
	for _, a := range args {
		if a == "--"+name || a == "-"+name {
			on = true
			continue
		}
		rest = append(rest, a)
	}
	return on, rest
}

// backupTarget is the backup's path: the leading path argument, else the
// one argument left after the settings' flags. ok is false on a usage
// error (no path, or arguments left over).
func backupTarget(dst string, extra []string) (string, bool) {
	if dst == "" && len(extra) == 1 {
		dst, extra = extra[0], nil
	}
	return dst, dst != "" && len(extra) == 0
}

// soundForBackup verifies st (store.Verify, as specd check) before a backup
// and reports whether it is sound; when it is not, or cannot be verified,
// it says so on stderr, where every finding is listed, and that nothing
// was written.
func soundForBackup(st *store.Store, stderr io.Writer) bool {
	findings, err := st.Verify(context.Background(), specstore.New(st, nil).CheckSpecs)
	if err != nil {
		storeFailure(stderr, "backup", err)
		fmt.Fprintln(stderr, "specd backup: nothing was written; pass --force to copy the file anyway.")
		return false
	}
	if len(findings) == 0 {
		return true
	}
	printFindings(stderr, findings)
	fmt.Fprintf(stderr, "specd backup: the store is damaged (%d problem(s), as specd check reports); a copy would carry the damage and look like a good backup, so nothing was written. Restore an earlier backup, or pass --force to copy it anyway.\n", len(findings))
	return false
}

// printFindings writes one line per finding.
func printFindings(w io.Writer, findings []bucketstore.Finding) {
	for _, f := range findings {
		fmt.Fprintln(w, f)
	}
}

// checkCmd is "specd check [--rebuild-index] [flags]": bbolt's consistency
// check and every spec's invariants and the spec list index (store.Verify).
// With --rebuild-index the spec list index is first rewritten from the
// specs' headers (one transaction), e.g. after an older specd wrote to the
// store. It prints each finding and exits 1 on any (or when the store
// cannot be opened), 0 when the store is sound.
func checkCmd(args []string, stdout, stderr io.Writer) int {
	rebuild, rest := takeSwitch(args, "rebuild-index")
	st, extra, code := openForMaintenance("check", rest, stderr)
	if code >= 0 {
		return code
	}
	defer st.Close()
	if len(extra) > 0 {
		fmt.Fprintln(stderr, "usage: specd check [--rebuild-index] [--db FILE]")
		return 2
	}
	if rebuild && !rebuildIndex(st, stdout, stderr) {
		return 1
	}
	findings, err := st.Verify(context.Background(), specstore.New(st, nil).CheckSpecs)
	if err != nil {
		storeFailure(stderr, "check", err)
		return 1
	}
	printFindings(stdout, findings)
	if len(findings) > 0 {
		fmt.Fprintf(stdout, "%s: %d problem(s) found\n", st.Path(), len(findings))
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", st.Path())
	return 0
}

// rebuildIndex rewrites the spec list index of st from the specs' headers
// and reports whether it did; a failure is printed on stderr.
func rebuildIndex(st *store.Store, stdout, stderr io.Writer) bool {
	if err := specstore.New(st, nil).RebuildSpecIndex(context.Background()); err != nil {
		storeFailure(stderr, "check", err)
		return false
	}
	fmt.Fprintf(stdout, "%s: spec list index rebuilt\n", st.Path())
	return true
}
