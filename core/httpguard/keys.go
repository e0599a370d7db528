// Package httpguard is the front door of specd's shared HTTP server: API
// keys and roles, the origin and host checks, size and connection limits,
// session accounting, per-key rate limiting, /healthz and Prometheus
// metrics. It wraps the MCP handler; it knows nothing of the tools except
// what cmd/specd hands it (the side effects of an action).
package httpguard

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
)

// Role is what a key may do.
type Role string

// Roles, from least to most trusted.
const (
	// Observer runs actions whose side effects are none or read.
	Observer Role = "observer"
	// Maintainer runs every action except server administration.
	Maintainer Role = "maintainer"
	// Admin runs everything and may read /metrics.
	Admin Role = "admin"
)

// ParseRole accepts observer, maintainer or admin.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case Observer, Maintainer, Admin:
		return r, nil
	}
	return "", fmt.Errorf("role %q: use observer, maintainer or admin", s)
}

// Key is one line of the keys file: an id, a role and the SHA-256 of the
// secret (the secret itself is never stored).
type Key struct {
	ID   string
	Role Role
	hash [sha256.Size]byte
}

// Keys is the set of keys a server accepts. The zero value (no keys) means
// authentication is off.
type Keys struct {
	list []Key
}

var keyID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckKeysFile refuses a keys file that someone other than the server's
// user could change, as ssh's StrictModes refuses such key files: whoever
// can add a line can add an admin key of their own. fi is the opened
// file's: it must be a regular file, owned by the server's user or root,
// and not writable by group or others; then every folder on its path must
// pass CheckKeysFolders, and the file the path leads to then must be fi's
// (the walk and the open resolve the path apart). The error names the file
// or folder, what is wrong and the fix.
func CheckKeysFile(path string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: the keys file is not a regular file (%v)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s: the keys file has mode %04o, so others can write it and add keys of their own; refused. Fix: chmod 600 %s", path, perm, path)
	}
	if uid, ok := ownerOf(fi); ok && !trustedOwner(uid) {
		return fmt.Errorf("%s: the keys file is owned by %s, not by root or the server's user (%s), so its owner can add keys of their own; refused. Fix: chown %d %s",
			path, whoIs(uid), whoIs(uint32(serverUID())), serverUID(), path)
	}
	return checkKeysPath(path, fi)
}

// LoadKeys reads a keys file: one "id role sha256-hex" per line; blank
// lines and lines starting with # are ignored. An id appears once; a bad
// line is an error naming its number. A file another user could change
// (its mode, its owner or a folder on its path), or one that is not a
// regular file, is refused (CheckKeysFile); the mode and owner checked are
// the opened file's.
func LoadKeys(path string) (*Keys, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := CheckKeysFile(path, fi); err != nil {
		return nil, err
	}
	list, err := readKeyLines(path, f)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: no keys (add one with: specd keys add ID --role R)", path)
	}
	return &Keys{list: list}, nil
}

// readKeyLines reads the keys of the keys file path from r, in file order,
// skipping blank lines and comments; a bad line or an id given twice is an
// error naming the line.
func readKeyLines(path string, r io.Reader) ([]Key, error) {
	var list []Key
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := parseKeyLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %v", path, n, err)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("%s line %d: key id %q appears twice", path, n, k.ID)
		}
		seen[k.ID] = true
		list = append(list, k)
	}
	return list, sc.Err()
}

func parseKeyLine(line string) (Key, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return Key{}, errors.New(`want "id role sha256-hex"`)
	}
	if !keyID.MatchString(f[0]) {
		return Key{}, fmt.Errorf("key id %q: letters, digits, dot, dash, underscore; at most 64", f[0])
	}
	role, err := ParseRole(f[1])
	if err != nil {
		return Key{}, err
	}
	h, err := hex.DecodeString(f[2])
	if err != nil || len(h) != sha256.Size {
		return Key{}, errors.New("hash: want 64 hex digits (the SHA-256 of the key)")
	}
	k := Key{ID: f[0], Role: role}
	copy(k.hash[:], h)
	return k, nil
}

// IDs lists the key ids in file order (none for a nil set).
func (ks *Keys) IDs() []string {
	if ks == nil {
		return nil
	}
	out := make([]string, len(ks.list))
	for i, k := range ks.list {
		out[i] = k.ID
	}
	return out
}

// Len is the number of keys.
func (ks *Keys) Len() int {
	if ks == nil {
		return 0
	}
	return len(ks.list)
}

// Lookup finds the key whose hash is the SHA-256 of secret. Every stored
// hash is compared in constant time, whatever matches, so the answer time
// does not tell which keys exist.
func (ks *Keys) Lookup(secret string) (Key, bool) {
	if ks == nil || secret == "" {
		return Key{}, false
	}
	h := sha256.Sum256([]byte(secret))
	found, match := Key{}, 0
	for _, k := range ks.list {
		if subtle.ConstantTimeCompare(h[:], k.hash[:]) == 1 {
			found, match = k, 1
		}
	}
	return found, match == 1
}

// NewSecret returns a new random key: "specd_" and 32 random bytes in
// unpadded base64url.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "specd_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// KeyLine is the keys-file line of a key: id, role and the hex SHA-256 of
// secret.
func KeyLine(id string, role Role, secret string) (string, error) {
	if !keyID.MatchString(id) {
		return "", fmt.Errorf("key id %q: letters, digits, dot, dash, underscore; at most 64", id)
	}
	h := sha256.Sum256([]byte(secret))
	return fmt.Sprintf("%s %s %s", id, role, hex.EncodeToString(h[:])), nil
}

// Identity is the authenticated caller of one request.
type Identity struct {
	KeyID string // "" when keys are off
	Role  Role
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity the front door put in ctx.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}
