package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
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
)

// record is one store entry as migrate copies it, whatever the engine.
type record struct {
	Bucket []string
	Key    []byte
	Value  []byte
	Seq    uint64
}

// migrateEngine is what migrate needs of a store: its entries out and in.
type migrateEngine interface {
	export(ctx context.Context) ([]record, error)
	load(ctx context.Context, rs []record) error
	Close() error
}

type boltEngine struct{ *store.Store }

func (b boltEngine) export(ctx context.Context) ([]record, error) {
	var out []record
	err := b.Export(ctx, func(e store.Entry) error {
		out = append(out, record{e.Bucket, e.Key, e.Value, e.Seq})
		return nil
	})
	return out, err
}

func (b boltEngine) load(ctx context.Context, rs []record) error {
	es := make([]store.Entry, len(rs))
	for i, r := range rs {
		es[i] = store.Entry{Bucket: r.Bucket, Key: r.Key, Value: r.Value, Seq: r.Seq}
	}
	return b.Import(ctx, es)
}

type etcdEngine struct{ *etcdstore.Store }

func (e etcdEngine) export(ctx context.Context) ([]record, error) {
	var out []record
	err := e.Export(ctx, func(x etcdstore.Entry) error {
		out = append(out, record{x.Bucket, x.Key, x.Value, x.Seq})
		return nil
	})
	return out, err
}

func (e etcdEngine) load(ctx context.Context, rs []record) error {
	es := make([]etcdstore.Entry, len(rs))
	for i, r := range rs {
		es[i] = etcdstore.Entry{Bucket: r.Bucket, Key: r.Key, Value: r.Value, Seq: r.Seq}
	}
	return e.Import(ctx, es)
}

func openMigrateEngine(u string, logger *slog.Logger) (migrateEngine, error) {
	switch {
	case strings.HasPrefix(u, "bolt://"):
		p, err := filepath.Abs(strings.TrimPrefix(u, "bolt://"))
		if err != nil || strings.TrimPrefix(u, "bolt://") == "" {
			return nil, fmt.Errorf("%q: want bolt://PATH", u)
		}
		st, err := store.Open(store.Options{Path: p, Logger: logger, Workspace: filepath.Dir(p)})
		return boltEngine{st}, err
	case strings.HasPrefix(u, "etcd://"):
		o, err := etcdOptions(u)
		if err != nil {
			return nil, err
		}
		o.Logger = logger
		st, err := etcdstore.Open(o)
		return etcdEngine{st}, err
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
	type line struct{ k, v string }
	lines := make([]line, 0, len(rs))
	counts := map[string]int{}
	for _, r := range rs {
		path := strings.Join(r.Bucket, "/")
		if r.Key == nil {
			if len(r.Bucket) == 1 && r.Seq == 0 {
				continue
			}
			if len(r.Bucket) == 2 && r.Bucket[0] == "specs" {
				counts["specs"]++
			}
			lines = append(lines, line{"b\x00" + path, fmt.Sprint(r.Seq)})
			continue
		}
		kind := r.Bucket[0]
		if r.Bucket[0] == "specs" && len(r.Bucket) == 3 {
			kind = r.Bucket[2] // nodes, journal, journal_task, history
		} else if r.Bucket[0] == "specs" {
			kind = "headers"
		}
		counts[kind]++
		lines = append(lines, line{"k\x00" + path + "\x00" + string(r.Key), string(r.Value)})
	}
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
	return summary{counts: counts, hash: "sha256:" + hex.EncodeToString(h.Sum(nil))}
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
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "source store `url` (bolt://PATH or etcd://h1:2379,.../prefix)")
	to := fs.String("to", "", "destination store `url`")
	timeout := fs.Duration("timeout", 10*time.Minute, "longest `duration` of the whole copy")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *from == "" || *to == "" || *from == *to {
		fmt.Fprintln(stderr, "specd migrate: want --from URL --to URL (two different stores)")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src, err := openMigrateEngine(*from, logger)
	if err != nil {
		fmt.Fprintln(stderr, "specd migrate:", err)
		return 2
	}
	defer src.Close()
	dst, err := openMigrateEngine(*to, logger)
	if err != nil {
		fmt.Fprintln(stderr, "specd migrate:", err)
		return 2
	}
	defer dst.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	rs, err := src.export(ctx)
	if err != nil {
		storeFailure(stderr, "migrate (reading the source)", err)
		return 1
	}
	want := summarize(rs)
	if err := dst.load(ctx, rs); err != nil {
		storeFailure(stderr, "migrate (writing the destination)", err)
		return 1
	}
	back, err := dst.export(ctx)
	if err != nil {
		storeFailure(stderr, "migrate (verifying the destination)", err)
		return 1
	}
	got := summarize(back)
	fmt.Fprintf(stdout, "source:      %s\n             %s\n", want, want.hash)
	fmt.Fprintf(stdout, "destination: %s\n             %s\n", got, got.hash)
	if got.hash != want.hash {
		fmt.Fprintln(stderr, "specd migrate: the destination differs from the source (it held other data before, or the source changed during the copy); nothing was deleted. Migrate to an empty prefix or file, or re-run while no server writes the source.")
		return 1
	}
	fmt.Fprintln(stdout, "verified: every entry copied, counts and hashes match")
	return 0
}
