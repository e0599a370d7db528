// Package mirror keeps a copy of every spec in the workspace as the files
// spec export writes — <dir>/{pending,active,completed,archived}/<id>.json,
// the same bytes (specs.EncodeExport) — so a plan can be committed and
// reviewed in a pull request, and spec import of <dir> into an empty store
// gives the specs back byte for byte.
//
// A pass (Sync) brings the folder up to date with the store: a spec whose
// version (or last_updated, or folder) moved since the mirror last wrote it
// is written again atomically (temporary file + rename) through the
// workspace root (core/workspacefs), its file in the folder it left is
// removed, and the file of a spec that no longer exists is removed.
//
// specd never overwrites or removes a file a person changed. The mirror
// keeps, per spec, the sha256 of the bytes it last wrote (in
// .specd/mirror-state.json, beside the lock .specd/mirror.lock that
// serialises passes of every process of the workspace). Before it
// replaces or removes a file it reads it: when the file is neither what
// it last wrote nor what it is about to write, the file is left as it
// is, specd's version goes beside it as <id>.json.specd-new (which spec
// import does not read: it reads *.json), and the file is reported as a
// conflict (Conflicts, Status, a log warning once). The conflict ends as
// soon as the file is deleted or replaced by the .specd-new (or by any
// version specd wrote): the next pass writes the spec again and removes
// the .specd-new. A file the mirror never wrote is never touched unless it
// already holds exactly the bytes the mirror would write.
//
// It imports core, core/workspacefs and specs (and the standard library):
// no store engine and no MCP. Run follows a change feed (the store's
// change stamp and kernel notification) so a process mirrors changes
// committed by other processes on the same store too.
package mirror

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
)

// The mirror's own files, in the workspace's .specd folder (never in the
// mirror folder: they describe this workspace, not the plan).
const (
	stateFile  = ".specd/mirror-state.json"
	lockFile   = ".specd/mirror.lock"
	ignoreFile = ".specd/.gitignore"
	// NewSuffix is appended to a conflicting file's name for the version
	// specd would have written.
	NewSuffix = ".specd-new"
	// listPage is how many spec summaries one list read takes.
	listPage = 500
	// maxStateBytes bounds the state file read.
	maxStateBytes = 64 << 20
)

// Mirror is one mirror folder over one spec repository. Its methods are
// safe for concurrent use; Close it when done.
type Mirror struct {
	repo specs.Repo
	ws   *workspacefs.Dir
	dir  string // clean, workspace-relative
	log  *slog.Logger
	// exists, when set, says whether the store exists yet: a pass over a
	// store not created yet does nothing (it would read the mirror empty).
	exists func() bool
	store  string

	mu     sync.Mutex        // one pass at a time in this process
	logged map[string]string // conflicting file → disk hash already logged
	failed string            // the failure last logged ("" after a pass that worked)
	last   passInfo
}

// passInfo is what the last pass left for Health.
type passInfo struct {
	done      bool
	err       error
	conflicts []Conflict
}

// Options are Open's optional settings.
type Options struct {
	// Logger receives a warning per new conflict and per failed pass
	// (slog's default when nil).
	Logger *slog.Logger
	// Exists, when set, reports whether the store exists yet; a pass is
	// skipped while it does not.
	Exists func() bool
	// Store names the store (its path or URL). The state is kept per
	// mirror folder and store: pointed at another store, the mirror starts
	// afresh and removes none of the files it wrote from the first one.
	Store string
}

// Open checks dir as spec export checks its folder — inside the workspace,
// never .specd or .git or a path leading into them, not a file — makes it,
// and returns the mirror over repo. Errors: UNAVAILABLE (no workspace),
// INVALID_FORMAT for dir.
func Open(repo specs.Repo, workspace, dir string, o Options) (*Mirror, error) {
	ws, err := workspacefs.Open(workspace)
	if err != nil {
		return nil, err
	}
	rel, err := specs.PrepareExportFolder(ws, dir)
	if err != nil {
		ws.Close()
		return nil, err
	}
	if rel == "." {
		ws.Close()
		return nil, core.NewError(errcode.InvalidFormat, "The mirror folder is the workspace itself; spec files need a folder of their own.",
			map[string]any{"field": "mirror", "constraint": "a folder inside the workspace, outside .specd and .git", "received": dir}).
			WithRemediation("Name a folder inside the workspace, e.g. --mirror specs.")
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Mirror{repo: repo, ws: ws, dir: rel, log: log, exists: o.Exists, store: o.Store, logged: map[string]string{}}, nil
}

// Close releases the workspace handle.
func (m *Mirror) Close() error { return m.ws.Close() }

// Dir is the mirror folder, workspace-relative and slash-separated.
func (m *Mirror) Dir() string { return workspacefs.Show(m.dir) }

// Conflict is a file in the mirror folder that a person changed and the
// mirror therefore left alone.
type Conflict struct {
	// File is the changed file, workspace-relative.
	File   string `json:"file"`
	SpecID string `json:"spec_id"`
	// Reason is edited (the spec changed since; its new version is in
	// NewFile), moved (the spec moved to another lifecycle folder; its
	// file is NewFile) or deleted (the spec no longer exists).
	Reason string `json:"reason"`
	// NewFile is where specd's current version of the spec is.
	NewFile string `json:"new_file,omitempty"`
}

// Report is what one pass did; paths are workspace-relative.
type Report struct {
	Written   []string   `json:"written"`
	Removed   []string   `json:"removed"`
	Conflicts []Conflict `json:"conflicts"`
	// Skipped is set when the store does not exist yet.
	Skipped bool `json:"skipped,omitempty"`
}

// record is what the state keeps of one spec's mirror file.
type record struct {
	File        string `json:"file"`             // under the mirror folder, slash-separated
	SHA256      string `json:"sha256,omitempty"` // of the bytes last written at File ("" when none)
	Version     int64  `json:"version"`
	LastUpdated string `json:"last_updated"`
	// Pending is the sha256 of the bytes written to File+NewSuffix while
	// File is a conflict ("" when there is none).
	Pending string `json:"pending,omitempty"`
}

// stale is a file the mirror wrote and would have removed (its spec moved
// or was deleted), kept because a person changed it.
type stale struct {
	File    string `json:"file"`
	SHA256  string `json:"sha256"`
	SpecID  string `json:"spec_id"`
	Reason  string `json:"reason"`
	NewFile string `json:"new_file,omitempty"`
}

// folderState is the state of one mirror folder.
type folderState struct {
	Store string             `json:"store"`
	Specs map[string]*record `json:"specs"`
	Stale []stale            `json:"stale,omitempty"`
}

// state is the state file: per mirror folder (workspace-relative).
type state struct {
	Format  int                     `json:"format"`
	Mirrors map[string]*folderState `json:"mirrors"`
}

const stateFormat = 1

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// path is name (under the mirror folder, slash-separated) as a
// workspace-relative name.
func (m *Mirror) path(name string) string { return filepath.Join(m.dir, filepath.FromSlash(name)) }

func (m *Mirror) show(name string) string { return workspacefs.Show(m.path(name)) }

// disk reads name (under the mirror folder): its hash, "" when absent.
// A file that cannot be read as a regular file (a folder, a FIFO, a
// symlink out) has the hash "unreadable", which matches nothing the
// mirror wrote, so it is left alone.
func (m *Mirror) disk(ctx context.Context, name string) (string, error) {
	raw, err := m.ws.ReadFile(ctx, m.path(name), specs.MaxSpecFileBytes)
	switch {
	case err == nil:
		return sum(raw), nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case core.AsError(err).Code == errcode.NotFound:
		return "", nil
	}
	return "unreadable", nil
}

// loadState reads the state file (an empty state when there is none or it
// cannot be decoded: then no file counts as written by the mirror, so
// none is overwritten unless it already holds the mirror's bytes).
func (m *Mirror) loadState(ctx context.Context) (*state, []byte, error) {
	st := &state{Format: stateFormat, Mirrors: map[string]*folderState{}}
	raw, err := m.ws.ReadFile(ctx, stateFile, maxStateBytes)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if core.AsError(err).Code != errcode.NotFound {
			m.log.Warn("spec mirror: the state file cannot be read; starting afresh", "file", stateFile, "err", err)
		}
		return st, nil, nil
	}
	if err := json.Unmarshal(raw, st); err != nil || st.Format != stateFormat || st.Mirrors == nil {
		m.log.Warn("spec mirror: the state file is not understood; starting afresh", "file", stateFile)
		return &state{Format: stateFormat, Mirrors: map[string]*folderState{}}, nil, nil
	}
	return st, raw, nil
}

// saveState writes st unless it encodes to was (the state as read).
func (m *Mirror) saveState(ctx context.Context, st *state, was []byte) error {
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return core.Internal(err)
	}
	if bytes.Equal(raw, was) {
		return nil
	}
	if err := m.ensureIgnored(ctx); err != nil {
		return err
	}
	return m.ws.WriteFileAtomic(ctx, stateFile, raw)
}

// ensureIgnored writes .specd/.gitignore when there is none: an etcd
// store or a --db elsewhere leaves .specd to the mirror, which keeps it
// out of the user's commits, as the bbolt store does.
func (m *Mirror) ensureIgnored(ctx context.Context) error {
	if _, err := m.ws.Stat(ignoreFile); err == nil || core.AsError(err).Code != errcode.NotFound {
		return nil
	}
	return m.ws.WriteFileAtomic(ctx, ignoreFile, []byte("# specd's local store: not for version control\n*\n"))
}

// folder is the state of m's folder in st, made when missing.
func (m *Mirror) folder(st *state) *folderState {
	key := m.Dir()
	fs := st.Mirrors[key]
	if fs == nil || fs.Store != m.store {
		fs = &folderState{Store: m.store}
		st.Mirrors[key] = fs
	}
	if fs.Specs == nil {
		fs.Specs = map[string]*record{}
	}
	return fs
}

// Sync brings the mirror folder up to date with the store in one pass,
// holding the workspace's mirror lock (so passes of several processes
// never interleave) and reading and writing the state under it. See the
// package comment for what is written, removed and left alone. A pass
// that fails part-way keeps what it wrote and recorded; the next pass
// carries on. Errors: the store's, the workspace's (INVALID_FORMAT when
// the mirror folder became a file, UNAVAILABLE when the disk is full or
// read-only), ctx's.
func (m *Mirror) Sync(ctx context.Context) (Report, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rep, err := m.sync(ctx)
	m.last = passInfo{done: true, err: err, conflicts: rep.Conflicts}
	switch {
	case err == nil:
		m.failed = ""
	case ctx.Err() == nil && core.AsError(err).Error() != m.failed:
		// Once per failure: a pass that fails the same way again (every
		// retry while the disk is full) says nothing new.
		m.failed = core.AsError(err).Error()
		m.log.Warn("spec mirror: a pass failed; the next change retries it", "dir", m.Dir(), "err", err)
	}
	for _, c := range rep.Conflicts {
		m.logConflict(ctx, c)
	}
	return rep, err
}

// logConflict logs a conflict once per file and content.
func (m *Mirror) logConflict(ctx context.Context, c Conflict) {
	name, err := m.relName(c.File)
	if err != nil {
		return
	}
	h, _ := m.disk(ctx, name)
	if m.logged[c.File] == h {
		return
	}
	m.logged[c.File] = h
	m.log.Warn("spec mirror: a mirrored file was changed by hand; specd leaves it alone",
		"file", c.File, "spec_id", c.SpecID, "reason", c.Reason, "specd_version", c.NewFile)
}

func (m *Mirror) sync(ctx context.Context) (Report, error) {
	rep := Report{Written: []string{}, Removed: []string{}, Conflicts: []Conflict{}}
	if m.exists != nil && !m.exists() {
		rep.Skipped = true
		return rep, nil
	}
	unlock, err := m.ws.Lock(ctx, lockFile)
	if err != nil {
		return rep, err
	}
	defer unlock()
	st, was, err := m.loadState(ctx)
	if err != nil {
		return rep, err
	}
	fs := m.folder(st)
	err = m.pass(ctx, fs, &rep)
	if serr := m.saveState(ctx, st, was); err == nil {
		err = serr
	}
	rep.Conflicts = oncePerFile(rep.Conflicts)
	return rep, err
}

// oncePerFile sorts conflicts by file, keeping the last one found of each
// file (a kept file of a spec that came back to its folder is found as
// kept, then as edited).
func oncePerFile(cs []Conflict) []Conflict {
	last := map[string]int{}
	for i, c := range cs {
		last[c.File] = i
	}
	out := make([]Conflict, 0, len(last))
	for i, c := range cs {
		if last[c.File] == i {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// pass is one Sync under the lock, over the folder's state fs.
func (m *Mirror) pass(ctx context.Context, fs *folderState, rep *Report) error {
	if err := m.retryStale(ctx, fs, rep); err != nil {
		return err
	}
	seen, err := m.syncListed(ctx, fs, rep)
	if err != nil {
		return err
	}
	return m.retireUnlisted(ctx, fs, seen, rep)
}

// syncListed brings the file of every spec the store lists up to date
// (syncSpec), page by page, and returns the ids it saw. A spec id that is
// not a valid file name is skipped (spec export skips it too).
func (m *Mirror) syncListed(ctx context.Context, fs *folderState, rep *Report) (map[string]bool, error) {
	seen := map[string]bool{}
	for after := ""; ; {
		rows, next, err := m.repo.ListSpecs(ctx, "all", after, listPage)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			if !specs.ValidID(row.SpecID) {
				continue
			}
			seen[row.SpecID] = true
			if err := m.syncSpec(ctx, fs, row, rep); err != nil {
				return nil, err
			}
		}
		if next == "" || len(rows) == 0 {
			return seen, nil
		}
		after = next
	}
}

// retireUnlisted retires, in id order, the files of the specs the state
// knows but the store no longer lists (retire, reason deleted), and
// forgets them.
func (m *Mirror) retireUnlisted(ctx context.Context, fs *folderState, seen map[string]bool, rep *Report) error {
	ids := make([]string, 0, len(fs.Specs))
	for id := range fs.Specs {
		if !seen[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		rec := fs.Specs[id]
		if err := m.retire(ctx, fs, id, rec, "deleted", "", rep); err != nil {
			return err
		}
		if err := m.dropPending(ctx, rec); err != nil {
			return err
		}
		delete(fs.Specs, id)
	}
	return nil
}

// fileName is the name of a spec's file under the mirror folder, as spec
// export names it.
func fileName(l specs.Lifecycle, id string) string {
	return specs.ExportFolder(l) + "/" + id + ".json"
}

// upToDate reports whether rec (nil when there is none) was written for
// the spec as row lists it: same file, version and last_updated, and no
// conflict pending.
func (rec *record) upToDate(row specs.RepoSummary) bool {
	return rec != nil && rec.Pending == "" && rec.File == fileName(specs.Lifecycle(row.Lifecycle), row.SpecID) &&
		rec.Version == row.Version && rec.LastUpdated == row.LastUpdated
}

// syncSpec brings one spec's file up to date.
func (m *Mirror) syncSpec(ctx context.Context, fs *folderState, row specs.RepoSummary, rep *Report) error {
	id := row.SpecID
	rec := fs.Specs[id]
	if rec.upToDate(row) {
		return nil // written at this version, nothing pending
	}
	doc, raw, ok, err := m.export(ctx, id)
	if !ok {
		return err
	}
	name := fileName(doc.Lifecycle, id)
	if rec == nil {
		rec = &record{}
		fs.Specs[id] = rec
	}
	onDisk, err := m.disk(ctx, name)
	if err != nil {
		return err
	}
	if err := m.leave(ctx, fs, id, rec, name, rep); err != nil {
		return err
	}
	return m.place(ctx, rec, id, name, raw, onDisk, doc, rep)
}

// export reads spec id in full and encodes it as spec export writes it.
// ok is false on an error, and with no error when the spec was deleted
// since the list (the next pass retires it).
func (m *Mirror) export(ctx context.Context, id string) (doc specs.Document, raw []byte, ok bool, err error) {
	doc, err = specs.FullDocument(ctx, m.repo, id)
	if err != nil {
		if core.AsError(err).Code == errcode.SpecNotFound {
			return doc, nil, false, nil
		}
		return doc, nil, false, err
	}
	raw, err = specs.EncodeExport(doc)
	return doc, raw, err == nil, err
}

// leave retires rec's file when the spec moved to another folder (its
// file is name now): the old file goes unless it was changed (retire,
// reason moved), with the .specd-new the mirror wrote beside it, and rec
// starts afresh at name. Nothing happens when rec has no file or is at
// name.
func (m *Mirror) leave(ctx context.Context, fs *folderState, id string, rec *record, name string, rep *Report) error {
	if rec.File == "" || rec.File == name {
		return nil
	}
	if err := m.dropPending(ctx, rec); err != nil {
		return err
	}
	if err := m.retire(ctx, fs, id, rec, "moved", m.show(name), rep); err != nil {
		return err
	}
	*rec = record{File: name}
	return nil
}

// place puts raw, the spec's file, at name, where the disk holds the hash
// onDisk: nothing to do when it holds raw already; written when the file
// is absent or holds what the mirror wrote there (its last version, or the
// one it put beside a conflict, which a person may have moved over the
// file); otherwise a conflict. Once the file is raw, rec records it.
func (m *Mirror) place(ctx context.Context, rec *record, id, name string, raw []byte, onDisk string, doc specs.Document, rep *Report) error {
	h := sum(raw)
	ours, pending := "", ""
	if rec.File == name {
		ours, pending = rec.SHA256, rec.Pending
	}
	switch onDisk {
	case h:
		// Already there (a pass of another process, or a file from git).
	case "", ours, pending:
		if err := m.ws.WriteFileAtomic(ctx, m.path(name), raw); err != nil {
			return err
		}
		rep.Written = append(rep.Written, m.show(name))
	default:
		return m.conflict(ctx, rec, id, name, raw, h, rep)
	}
	if err := m.dropPending(ctx, rec); err != nil {
		return err
	}
	*rec = record{File: name, SHA256: h, Version: doc.Version, LastUpdated: doc.LastUpdated}
	return nil
}

// conflict leaves the changed file name (rec's) alone and writes specd's
// version beside it; the record keeps what the mirror last wrote at name
// (nothing, when it never wrote there).
func (m *Mirror) conflict(ctx context.Context, rec *record, id, name string, raw []byte, h string, rep *Report) error {
	beside, err := m.disk(ctx, name+NewSuffix)
	if err != nil {
		return err
	}
	if beside != h {
		if err := m.ws.WriteFileAtomic(ctx, m.path(name+NewSuffix), raw); err != nil {
			return err
		}
	}
	rec.Pending = h
	rep.Conflicts = append(rep.Conflicts, Conflict{File: m.show(name), SpecID: id, Reason: "edited", NewFile: m.show(name + NewSuffix)})
	return nil
}

// dropPending removes the .specd-new the mirror wrote for rec's file, when
// it is still what the mirror wrote, and forgets it.
func (m *Mirror) dropPending(ctx context.Context, rec *record) error {
	if rec.Pending == "" {
		return nil
	}
	name := rec.File + NewSuffix
	h, err := m.disk(ctx, name)
	if err != nil {
		return err
	}
	if h == rec.Pending {
		if err := m.ws.RemoveFile(m.path(name)); err != nil {
			return err
		}
	}
	rec.Pending = ""
	return nil
}

// retire removes rec's file (its spec moved or was deleted) when it holds
// what the mirror wrote; a changed file is kept and remembered as stale.
func (m *Mirror) retire(ctx context.Context, fs *folderState, id string, rec *record, reason, newFile string, rep *Report) error {
	if rec.File == "" {
		return nil
	}
	h, err := m.disk(ctx, rec.File)
	if err != nil {
		return err
	}
	switch {
	case h == "", rec.SHA256 == "":
		// Gone already; or the mirror never wrote this file (a conflict
		// from the start): not ours to keep track of.
	case h == rec.SHA256:
		return m.remove(rec.File, rep)
	default:
		s := stale{File: rec.File, SHA256: rec.SHA256, SpecID: id, Reason: reason, NewFile: newFile}
		fs.Stale = append(fs.Stale, s)
		rep.Conflicts = append(rep.Conflicts, s.conflict(m))
	}
	return nil
}

// remove removes name (under the mirror folder) and reports it removed.
func (m *Mirror) remove(name string, rep *Report) error {
	if err := m.ws.RemoveFile(m.path(name)); err != nil {
		return err
	}
	rep.Removed = append(rep.Removed, m.show(name))
	return nil
}

func (s stale) conflict(m *Mirror) Conflict {
	return Conflict{File: m.show(s.File), SpecID: s.SpecID, Reason: s.Reason, NewFile: s.NewFile}
}

// retryStale looks at the kept files again: one deleted, or put back to
// what the mirror wrote (then removed), is forgotten; one that became
// the spec's current file again is left to syncSpec.
func (m *Mirror) retryStale(ctx context.Context, fs *folderState, rep *Report) error {
	kept := fs.Stale[:0]
	for _, s := range fs.Stale {
		if rec := fs.Specs[s.SpecID]; rec != nil && rec.File == s.File {
			continue // the spec is back in that folder: syncSpec decides
		}
		keep, err := m.recheck(ctx, s, rep)
		if err != nil {
			return err
		}
		if keep {
			kept = append(kept, s)
		}
	}
	fs.Stale = kept
	return nil
}

// recheck looks at the kept file s again: gone, it is forgotten; put back
// to what the mirror wrote, it is removed and forgotten; still changed, it
// is kept (keep) and reported as a conflict again.
func (m *Mirror) recheck(ctx context.Context, s stale, rep *Report) (keep bool, err error) {
	h, err := m.disk(ctx, s.File)
	if err != nil {
		return false, err
	}
	switch h {
	case "":
		return false, nil
	case s.SHA256:
		return false, m.remove(s.File, rep)
	}
	rep.Conflicts = append(rep.Conflicts, s.conflict(m))
	return true, nil
}

// Health is what the last pass of this process left.
type Health struct {
	Ran       bool       // a pass ran
	Err       error      // its error
	Conflicts []Conflict // its conflicts
}

// Health is what the last pass of this process left.
func (m *Mirror) Health() Health {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Health{Ran: m.last.done, Err: m.last.err, Conflicts: append([]Conflict(nil), m.last.conflicts...)}
}

// Pending reports whether the last pass left something to look at again
// without a store change: conflicts (a person may resolve them) or an
// error.
func (m *Mirror) Pending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last.err != nil || len(m.last.conflicts) > 0
}

// errNotMirrored marks a path outside the mirror folder.
var errNotMirrored = errors.New("not in the mirror folder")

// relName turns a workspace-relative file into a name under the mirror
// folder, slash-separated.
func (m *Mirror) relName(file string) (string, error) {
	rel, err := filepath.Rel(m.dir, filepath.FromSlash(file))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errNotMirrored
	}
	return filepath.ToSlash(rel), nil
}

// String describes a conflict for a person.
func (c Conflict) String() string {
	switch c.Reason {
	case "moved":
		return fmt.Sprintf("%s was changed by hand; spec %s moved to %s", c.File, c.SpecID, c.NewFile)
	case "deleted":
		return fmt.Sprintf("%s was changed by hand; spec %s was deleted", c.File, c.SpecID)
	}
	return fmt.Sprintf("%s was changed by hand; specd's version of spec %s is in %s", c.File, c.SpecID, c.NewFile)
}
