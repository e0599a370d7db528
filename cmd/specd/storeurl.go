package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/bucketstore"
)

// parseStoreURL reads --store: "" or bolt://PATH (the embedded file; PATH
// relative to the current directory) or etcd://h1:2379,h2:2379/prefix with
// optional ?cacert=&cert=&key=&user=&max_txn_ops= (the password comes from
// SPECD_ETCD_PASSWORD, never the command line).
func parseStoreURL(c *config, v string) error {
	switch {
	case v == "":
		return nil
	case strings.HasPrefix(v, "bolt://"):
		p := strings.TrimPrefix(v, "bolt://")
		if p == "" {
			return fmt.Errorf("bolt:// needs a file path")
		}
		abs, err := filepath.Abs(p)
		c.DB = abs
		return err
	case strings.HasPrefix(v, "etcd://"):
		_, err := etcdOptions(v)
		c.Store = v
		return err
	}
	return fmt.Errorf("want bolt://PATH or etcd://host:port[,host:port...]/prefix")
}

// etcdOptions parses an etcd:// store URL into the store's options.
func etcdOptions(v string) (etcdstore.Options, error) {
	rest := strings.TrimPrefix(v, "etcd://")
	var q url.Values
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		var err error
		if q, err = url.ParseQuery(rest[i+1:]); err != nil {
			return etcdstore.Options{}, err
		}
		rest = rest[:i]
	}
	hosts, prefix := rest, "/specd"
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		hosts, prefix = rest[:i], rest[i:]
	}
	o := etcdstore.Options{Prefix: prefix, Username: q.Get("user"), Password: os.Getenv("SPECD_ETCD_PASSWORD")}
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return o, fmt.Errorf("empty host in %q", hosts)
		}
		o.Endpoints = append(o.Endpoints, h)
	}
	if n := q.Get("max_txn_ops"); n != "" {
		var err error
		if o.MaxTxnOps, err = strconv.Atoi(n); err != nil || o.MaxTxnOps < 1 {
			return o, fmt.Errorf("max_txn_ops=%q: want a positive integer", n)
		}
	}
	if ca, cert, key := q.Get("cacert"), q.Get("cert"), q.Get("key"); ca != "" || cert != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return o, fmt.Errorf("cacert: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return o, fmt.Errorf("cacert: no certificate in %s", filepath.Base(ca))
			}
		}
		if cert != "" {
			kp, err := tls.LoadX509KeyPair(cert, key)
			if err != nil {
				return o, fmt.Errorf("cert/key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{kp}
		}
		o.TLS = cfg
	}
	return o, nil
}

// openStore opens the configured engine: etcd when --store names a
// cluster, else the bbolt file (--db / --store bolt://).
func openStore(c *config, logger *slog.Logger) (bucketstore.Store, error) {
	if c.Store != "" {
		o, err := etcdOptions(c.Store)
		if err != nil {
			return nil, err
		}
		o.Logger = logger
		if c.Deadline > 0 && c.Deadline < etcdstore.DefaultDialTimeout {
			o.DialTimeout = c.Deadline // a dial (with auth, Open waits for a token) never outlives a call's deadline
		}
		return etcdstore.Open(o)
	}
	return store.Open(store.Options{Path: c.DB, LockTimeout: c.LockTimeout, EngineOptions: bucketstore.EngineOptions{Logger: logger}, Workspace: c.Workspace, OnLockWait: c.HTTP.lockWait()})
}

// storeName is the store as logs name it: the etcd URL without its query,
// or the bbolt file.
func (c *config) storeName() string {
	if c.Store != "" {
		name, _, _ := strings.Cut(c.Store, "?")
		return name
	}
	return c.DB
}
