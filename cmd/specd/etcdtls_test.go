package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTestCert writes a self-signed certificate and its key as PEM files
// in dir and returns their paths.
func writeTestCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcd"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestEtcdOptions pins how an etcd:// URL's query becomes the store's
// options: the transaction size, the user, and TLS from cacert, cert and
// key (plain text when neither cacert nor cert is given).
func TestEtcdOptions(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir)
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		url              string
		err              string // a prefix of the error; "" when none
		tls, roots       bool
		certs, maxTxnOps int
		user             string
	}{
		{url: "etcd://h:1/p"},
		{url: "etcd://h:1/p?user=ann&max_txn_ops=64", user: "ann", maxTxnOps: 64},
		{url: "etcd://h:1/p?max_txn_ops=0", err: `max_txn_ops="0": want a positive integer`},
		{url: "etcd://h:1/p?key=" + key},
		{url: "etcd://h:1/p?cacert=" + cert, tls: true, roots: true},
		{url: "etcd://h:1/p?cert=" + cert + "&key=" + key, tls: true, certs: 1},
		{url: "etcd://h:1/p?cacert=" + cert + "&cert=" + cert + "&key=" + key, tls: true, roots: true, certs: 1},
		{url: "etcd://h:1/p?cacert=" + missing, err: "cacert: open "},
		{url: "etcd://h:1/p?cacert=" + notPEM, err: "cacert: no certificate in not.pem"},
		{url: "etcd://h:1/p?cert=" + cert + "&key=" + missing, err: "cert/key: open "},
		{url: "etcd://h:1/p?%zz", err: `invalid URL escape "%zz"`},
		{url: "etcd://h:1,,h2/p", err: `empty host in "h:1,,h2"`},
	}
	for _, tt := range tests {
		o, err := etcdOptions(tt.url)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q…", tt.url, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.url, err)
			continue
		}
		if (o.TLS != nil) != tt.tls || o.MaxTxnOps != tt.maxTxnOps || o.Username != tt.user {
			t.Errorf("%s: tls %v, max_txn_ops %d, user %q", tt.url, o.TLS != nil, o.MaxTxnOps, o.Username)
			continue
		}
		if o.TLS != nil && ((o.TLS.RootCAs != nil) != tt.roots || len(o.TLS.Certificates) != tt.certs || o.TLS.MinVersion != tls.VersionTLS12) {
			t.Errorf("%s: roots %v, %d certificate(s), min version %x", tt.url, o.TLS.RootCAs != nil, len(o.TLS.Certificates), o.TLS.MinVersion)
		}
	}
}
