package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/bucketstore"
)

// record is one store entry as migrate copies it: both engines export and
// import the same bucketstore.Entry.
type record = bucketstore.Entry

// exportAll reads every entry of st.
func exportAll(ctx context.Context, st bucketstore.Store) ([]record, error) {
	var out []record
	err := st.Export(ctx, func(e record) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// openMigrateEngine opens the store of a migrate URL: bolt://PATH (the
// file, its folder the workspace) or etcd://… (etcdOptions).
func openMigrateEngine(u string, logger *slog.Logger) (bucketstore.Store, error) {
	switch {
	case strings.HasPrefix(u, "bolt://"):
		p, err := filepath.Abs(strings.TrimPrefix(u, "bolt://"))
		if err != nil || u == "bolt://" {
			return nil, fmt.Errorf("%q: want bolt://PATH", u)
		}
		return store.Open(store.Options{Path: p, EngineOptions: bucketstore.EngineOptions{Logger: logger}, Workspace: filepath.Dir(p)})
	case strings.HasPrefix(u, "etcd://"):
		o, err := etcdOptions(u)
		if err != nil {
			return nil, err
		}
		o.Logger = logger
		return etcdstore.Open(o)
	}
	return nil, fmt.Errorf("%q: want bolt://PATH or etcd://host:port[,...]/prefix", u)
}

// summary counts a store's entries by kind and hashes them in a canonical
// order. Empty top-level buckets (which bbolt has and etcd does not) are
// left out, so equal contents give equal hashes on either engine.
type summary struct {
	counts map[string]int
	hash   string
}

func summarize(rs []record) summary {
	lines := make([]summaryLine, 0, len(rs))
	counts := map[string]int{}
	for _, r := range rs {
		if r.Key == nil && len(r.Bucket) == 1 && r.Seq == 0 {
			continue // a top-level bucket without a sequence: bbolt has them, etcd does not
		}
		if kind := entryKind(r); kind != "" {
			counts[kind]++
		}
		lines = append(lines, lineOf(r))
	}
	return summary{counts: counts, hash: hashLines(lines)}
}

// entryKind is what r counts as in a summary: "specs" for a spec's own
// bucket; for an entry of a spec, its bucket (nodes, journal,
// journal_task, history) or "headers", and "node_chunks" for a key of the
// nodes bucket that holds a chunk of a node's children (its key has a NUL,
// a node's never does: bucketstore.BucketNodes), so "nodes" counts nodes;
// for any other entry, its top-level bucket. Other buckets count as
// nothing ("").
func entryKind(r record) string {
	switch {
	case r.Key == nil && len(r.Bucket) == 2 && r.Bucket[0] == "specs":
		return "specs"
	case r.Key == nil:
		return ""
	case r.Bucket[0] != "specs":
		return r.Bucket[0]
	case len(r.Bucket) == 3 && r.Bucket[2] == string(bucketstore.BucketNodes) && bytes.IndexByte(r.Key, 0) >= 0:
		return "node_chunks"
	case len(r.Bucket) == 3:
		return r.Bucket[2]
	}
	return "headers"
}

// summaryLine is one entry as the summary's hash reads it.
type summaryLine struct{ k, v string }

// lineOf is r's line: a bucket's path and sequence, or an entry's path,
// key and value.
func lineOf(r record) summaryLine {
	path := strings.Join(r.Bucket, "/")
	if r.Key == nil {
		return summaryLine{"b\x00" + path, fmt.Sprint(r.Seq)}
	}
	return summaryLine{"k\x00" + path + "\x00" + string(r.Key), string(r.Value)}
}

// hashLines is the SHA-256 of lines sorted by key, each key and value
// written with its length first, as "sha256:<hex>". lines is sorted in
// place.
func hashLines(lines []summaryLine) string {
	sort.Slice(lines, func(i, j int) bool { return lines[i].k < lines[j].k })
	h := sha256.New()
	var n [8]byte
	for _, l := range lines {
		for _, s := range []string{l.k, l.v} {
			binary.BigEndian.PutUint64(n[:], uint64(len(s)))
			h.Write(n[:])
			io.WriteString(h, s)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (s summary) String() string {
	keys := make([]string, 0, len(s.counts))
	for k := range s.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, s.counts[k])
	}
	return strings.Join(parts, ", ")
}

// migrateCmd is "specd migrate --from URL --to URL": it copies every spec
// (header, nodes, history, journal and its task index), digest and archive
// entry from one store to the other (bolt:// or etcd://, either way), then
// reads both back and compares counts and a hash of every entry. Entries
// are overwritten with the source's, so it is safe to re-run; entries the
// destination has and the source does not are left alone and make the
// verification fail (exit 1) rather than be deleted. Exit 0 when verified,
// 1 on failure, 2 on usage errors.
func migrateCmd(args []string, stdout, stderr io.Writer) int {
	m, code, ok := parseMigrate(args, stderr)
	if !ok {
		return code
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src, err := openMigrateEngine(m.from, logger)
	if err != nil {
		fmt.Fprintln(stderr, "specd migrate:", err)
		return 2
	}
	defer src.Close()
	dst, err := openMigrateEngine(m.to, logger)
	if err != nil {
		fmt.Fprintln(stderr, "specd migrate:", err)
		return 2
	}
	defer dst.Close()
	ctx, cancel := context.WithTimeout(context.Background(), m.timeout)
	defer cancel()
	want, got, ok := copyEntries(ctx, src, dst, stderr)
	if !ok {
		return 1
	}
	fmt.Fprintf(stdout, "source:      %s\n             %s\n", want, want.hash)
	fmt.Fprintf(stdout, "destination: %s\n             %s\n", got, got.hash)
	if got.hash != want.hash {
		fmt.Fprintln(stderr, "specd migrate: the destination differs from the source (it held other data before, or the source changed during the copy); nothing was deleted. Migrate to an empty prefix or file, or re-run while no server writes the source.")
		return 1
	}
	fmt.Fprintln(stdout, "verified: every entry copied, counts and hashes match")
	return 0
}

// migration is what specd migrate was asked for.
type migration struct {
	from, to string
	timeout  time.Duration
}

// parseMigrate reads migrate's flags; on -h or a usage error (printed on
// stderr) ok is false and code is the exit status, 0 or 2.
func parseMigrate(args []string, stderr io.Writer) (m migration, code int, ok bool) {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&m.from, "from", "", "source store `url` (bolt://PATH or etcd://h1:2379,.../prefix)")
	fs.StringVar(&m.to, "to", "", "destination store `url`")
	fs.DurationVar(&m.timeout, "timeout", 10*time.Minute, "longest `duration` of the whole copy")
	if code, ok := parseFlags(fs, args); !ok {
		return m, code, false
	}
	if m.from == "" || m.to == "" || m.from == m.to {
		fmt.Fprintln(stderr, "specd migrate: want --from URL --to URL (two different stores)")
		return m, 2, false
	}
	return m, 0, true
}

// copyEntries copies every entry of src to dst, then reads dst back,
// showing the steps on stderr; it returns the summaries of the source and
// of the destination as read back. A step that fails is printed on stderr
// (storeFailure, naming the step) and ok is false.
func copyEntries(ctx context.Context, src, dst bucketstore.Store, stderr io.Writer) (want, got summary, ok bool) {
	bar := startProgress(stderr, "specd migrate")
	bar.Step("reading the source")
	rs, err := exportAll(ctx, src)
	if err != nil {
		bar.Done()
		storeFailure(stderr, "migrate (reading the source)", err)
		return want, got, false
	}
	want = summarize(rs)
	bar.Step("writing %d entries to the destination", len(rs))
	if err := dst.Import(ctx, rs); err != nil {
		bar.Done()
		storeFailure(stderr, "migrate (writing the destination)", err)
		return want, got, false
	}
	bar.Step("verifying the destination")
	back, err := exportAll(ctx, dst)
	bar.Done()
	if err != nil {
		storeFailure(stderr, "migrate (verifying the destination)", err)
		return want, got, false
	}
	return want, summarize(back), true
}
