package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreURL: --store selects the engine; bolt:// is the --db file, an
// etcd:// URL names the members and the prefix; anything else is refused.
func TestStoreURL(t *testing.T) {
	for _, c := range []struct {
		in, store, db, prefix string
		eps                   int
		ok                    bool
	}{
		{in: "", ok: true},
		{in: "bolt://x/specd.db", db: "x/specd.db", ok: true},
		{in: "etcd://h1:2379,h2:2379/team-a", store: "etcd://h1:2379,h2:2379/team-a", prefix: "/team-a", eps: 2, ok: true},
		{in: "etcd://h1:2379", store: "etcd://h1:2379", prefix: "/specd", eps: 1, ok: true},
		{in: "etcd://h1:2379/p?max_txn_ops=4096", store: "etcd://h1:2379/p?max_txn_ops=4096", prefix: "/p", eps: 1, ok: true},
		{in: "etcd://h1:2379/p?max_txn_ops=none"},
		{in: "etcd://,h2/p"},
		{in: "bolt://"},
		{in: "redis://h/p"},
	} {
		cfg := &config{}
		err := parseStoreURL(cfg, c.in)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v", c.in, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		if cfg.Store != c.store {
			t.Errorf("%q: store %q, want %q", c.in, cfg.Store, c.store)
		}
		if c.db != "" {
			if want, _ := filepath.Abs(c.db); cfg.DB != want {
				t.Errorf("%q: db %q, want %q", c.in, cfg.DB, want)
			}
		}
		if c.store != "" {
			o, _ := etcdOptions(c.store)
			if o.Prefix != c.prefix || len(o.Endpoints) != c.eps {
				t.Errorf("%q: prefix %q endpoints %v", c.in, o.Prefix, o.Endpoints)
			}
		}
	}
}

// TestMaintenanceRefusesEtcd: backup and check work on the bbolt file; with
// an etcd store they say so (exit 2) instead of touching the default file.
func TestMaintenanceRefusesEtcd(t *testing.T) {
	for _, cmd := range []string{"backup", "check"} {
		var out, errb bytes.Buffer
		args := []string{cmd, "--store", "etcd://127.0.0.1:1/p", "--workspace", t.TempDir()}
		if cmd == "backup" {
			args = append(args, filepath.Join(t.TempDir(), "copy.db"))
		}
		if code := run(args, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "etcd") {
			t.Errorf("%s with an etcd store: exit %d, %q", cmd, code, errb.String())
		}
	}
}
