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
	rest, query, _ := strings.Cut(strings.TrimPrefix(v, "etcd://"), "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return etcdstore.Options{}, err
	}
	hosts, prefix := rest, "/specd"
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		hosts, prefix = rest[:i], rest[i:]
	}
	o := etcdstore.Options{Prefix: prefix, Username: q.Get("user"), Password: os.Getenv("SPECD_ETCD_PASSWORD")}
	if o.Endpoints, err = etcdEndpoints(hosts); err != nil {
		return o, err
	}
	if o.MaxTxnOps, err = maxTxnOps(q.Get("max_txn_ops")); err != nil {
		return o, err
	}
	o.TLS, err = etcdTLS(q.Get("cacert"), q.Get("cert"), q.Get("key"))
	return o, err
}

// etcdEndpoints are the members of a comma list of host:port; an empty
// one is an error.
func etcdEndpoints(hosts string) ([]string, error) {
	var eps []string
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return eps, fmt.Errorf("empty host in %q", hosts)
		}
		eps = append(eps, h)
	}
	return eps, nil
}

// maxTxnOps is the max_txn_ops parameter: 0 (the store's default) when
// absent, else a positive integer.
func maxTxnOps(n string) (int, error) {
	if n == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(n)
	if err != nil || v < 1 {
		return v, fmt.Errorf("max_txn_ops=%q: want a positive integer", n)
	}
	return v, nil
}

// etcdTLS is the TLS configuration (TLS 1.2 at least) of the cacert, cert
// and key parameters: nil, plain text, when neither cacert nor cert is
// given. cacert is a PEM file of the CA certificates to trust instead of
// the system's; cert and key, the client's certificate and key.
func etcdTLS(ca, cert, key string) (*tls.Config, error) {
	if ca == "" && cert == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	var err error
	if cfg.RootCAs, err = caPool(ca); err != nil {
		return nil, err
	}
	if cfg.Certificates, err = clientCertificate(cert, key); err != nil {
		return nil, err
	}
	return cfg, nil
}

// caPool reads the CA certificates of the PEM file ca (nil, the system's,
// when ca is ""); a file without one is an error.
func caPool(ca string) (*x509.CertPool, error) {
	if ca == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("cacert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cacert: no certificate in %s", filepath.Base(ca))
	}
	return pool, nil
}

// clientCertificate loads the client's certificate and key (none when
// cert is "").
func clientCertificate(cert, key string) ([]tls.Certificate, error) {
	if cert == "" {
		return nil, nil
	}
	kp, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("cert/key: %w", err)
	}
	return []tls.Certificate{kp}, nil
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
