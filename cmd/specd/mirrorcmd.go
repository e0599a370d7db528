package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/mirror"
	"github.com/specd/specd/tools"
)

// The spec mirror (--mirror DIR, SPECD_MIRROR): every process started with
// it keeps DIR up to date (specs/mirror). `specd serve` follows the store's
// change feed, so it mirrors the changes of every process on the store (and
// of every server on an etcd cluster); `specd call` brings the mirror up to
// date once after its call; `specd mirror status|sync` runs a pass and
// reports. Passes of processes sharing a workspace take turns on
// .specd/mirror.lock, so any number of them may mirror at once.

// changeNotifier is the store's kernel change feed (the bbolt store's).
type changeNotifier interface {
	ChangeNotify(ctx context.Context) (<-chan struct{}, error)
}

// attachMirror opens the mirror folder c.Mirror over deps' spec repository
// (nothing when it is empty). INVALID_FORMAT for a folder spec export would
// refuse.
func attachMirror(c *config, logger *slog.Logger, deps *tools.Deps, st bucketstore.Store) error {
	if c.Mirror == "" {
		return nil
	}
	o := mirror.Options{Logger: logger, Store: st.Path()}
	if l, ok := st.(bucketstore.Lazy); ok {
		o.Exists = l.Exists
	}
	m, err := mirror.Open(deps.Specs, c.Workspace, c.Mirror, o)
	if err != nil {
		return fmt.Errorf("mirror folder %q: %s", c.Mirror, core.AsError(err).Message)
	}
	deps.Mirror = m
	return nil
}

// parseMirror is the mirror setting: a folder spec export would accept
// (checked and made now, so a bad one stops specd with exit 2 like any
// setting), or "" for none.
func parseMirror(c *config, v string) error {
	c.Mirror = v
	if v == "" {
		return nil
	}
	ws, err := workspacefs.Open(c.Workspace)
	if err != nil {
		return errors.New(core.AsError(err).Message)
	}
	defer ws.Close()
	rel, err := specs.PrepareExportFolder(ws, v)
	if err != nil {
		return errors.New(core.AsError(err).Message)
	}
	if rel == "." {
		return errors.New("the mirror needs a folder of its own inside the workspace, e.g. specs")
	}
	return nil
}

// runMirror keeps deps' mirror up to date in the background, following
// st's change feed, until ctx ends; the returned func waits for the last
// pass to end and runs a final one (bounded by exitTimeout), so what this
// process changed last is mirrored before it exits. Without a mirror it
// does nothing.
func runMirror(ctx context.Context, deps *tools.Deps, st bucketstore.Store) (stop func()) {
	m := deps.Mirror
	if m == nil {
		return func() {}
	}
	feed := mirror.Feed{Stamp: st.ChangeStamp}
	if cn, ok := st.(changeNotifier); ok {
		feed.Wake = cn.ChangeNotify
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.Run(runCtx, feed) }()
	return func() {
		cancel()
		wg.Wait()
		finalCtx, cancelFinal := context.WithTimeout(context.Background(), exitTimeout)
		defer cancelFinal()
		_, _ = m.Sync(finalCtx)
		_ = m.Close()
	}
}

// syncMirrorOnce brings deps' mirror up to date after a one-shot call,
// within the call's context (its deadline bounds the whole command);
// failures are logged by the mirror and do not change the exit status.
func syncMirrorOnce(ctx context.Context, deps *tools.Deps) {
	if deps.Mirror == nil {
		return
	}
	_, _ = deps.Mirror.Sync(ctx)
	_ = deps.Mirror.Close()
}

const mirrorUsage = `usage: specd mirror status|sync --mirror DIR [flags]

  status  bring DIR up to date, then list the files a person changed: conflicts
          (specd's newer version waits beside them as <file>.specd-new), files
          edited or removed since specd wrote them; exit 1 when there is any
  sync    bring DIR up to date and print what was written and removed; exit 1
          on conflicts

DIR (or SPECD_MIRROR) is a folder inside the workspace, e.g. specs.
`

// mirrorCmd runs `specd mirror status|sync`: one pass, printed as JSON.
// Exit 0 when the mirror is exactly the store, 1 when a person's change
// stands in its way (or the pass failed), 2 on usage errors.
func mirrorCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || mirrorPasses[args[0]] == nil {
		fmt.Fprint(stderr, mirrorUsage)
		return 2
	}
	c, _, code := commandConfig("mirror "+args[0], args[1:], stderr)
	if c == nil {
		return code
	}
	if c.Mirror == "" {
		fmt.Fprint(stderr, "specd mirror: no mirror folder; pass --mirror DIR or set SPECD_MIRROR\n\n"+mirrorUsage)
		return 2
	}
	logger := newLogger(c, stderr)
	st, deps, err := build(c, logger, []string{"cli"})
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer closeWithin(exitTimeout, logger, func() { closeFlags(deps); _ = deps.Mirror.Close(); st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), c.Deadline)
	defer cancel()
	out, clean, err := mirrorPasses[args[0]](ctx, deps.Mirror)
	if err != nil {
		storeFailure(stderr, "mirror "+args[0], err)
		return 1
	}
	printJSON(stdout, out)
	if !clean {
		return 1
	}
	return 0
}

// mirrorPasses are the passes of specd mirror by name: each brings the
// mirror up to date and returns what to print and whether the mirror is
// clean, exactly the store.
var mirrorPasses = map[string]func(context.Context, *mirror.Mirror) (any, bool, error){
	"status": mirrorStatus,
	"sync":   mirrorSync,
}

// mirrorStatus is the status pass: clean when no file is in conflict,
// edited or missing.
func mirrorStatus(ctx context.Context, m *mirror.Mirror) (any, bool, error) {
	s, err := m.Status(ctx)
	return s, len(s.Conflicts)+len(s.Edited)+len(s.Missing) == 0, err
}

// mirrorSync is the sync pass: clean when no file is in conflict.
func mirrorSync(ctx context.Context, m *mirror.Mirror) (any, bool, error) {
	r, err := m.Sync(ctx)
	return r, len(r.Conflicts) == 0, err
}
