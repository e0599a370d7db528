package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/specd/specd/core/httpguard"
)

// keysCmd is "specd keys add ID --role R [--file F]": it makes a new
// random key, appends "id role sha256" to the keys file (created 0600) and
// prints the key once on stdout. The key itself is stored nowhere. A keys
// file another user could change is refused, as the server refuses it.
func keysCmd(args []string, stdout, stderr io.Writer) int {
	k, ok := parseKeysAdd(args, stderr)
	if !ok {
		return 2
	}
	if err := keyIDFree(k.path, k.id); err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	secret, err := httpguard.NewSecret()
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	line, err := httpguard.KeyLine(k.id, k.role, secret)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 2
	}
	if err := appendKeyLine(k.path, line); err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	fmt.Fprintf(stderr, "added key %s (role %s) to %s; the key is shown once, below:\n", k.id, k.role, k.path)
	fmt.Fprintln(stdout, secret)
	return 0
}

// keysAdd is a "specd keys add" request: the key's id and role, and the
// keys file to append it to.
type keysAdd struct {
	id   string
	role httpguard.Role
	path string
}

// parseKeysAdd reads "add ID --role R [--file F]"; the file defaults to
// $SPECD_API_KEYS, else .specd/api-keys in the current directory. On a
// usage error (printed on stderr) ok is false.
func parseKeysAdd(args []string, stderr io.Writer) (k keysAdd, ok bool) {
	if len(args) < 2 || args[0] != "add" || strings.HasPrefix(args[1], "-") {
		fmt.Fprintln(stderr, "usage: specd keys add ID --role observer|maintainer|admin [--file FILE]")
		return k, false
	}
	fs := flag.NewFlagSet("keys add", flag.ContinueOnError)
	fs.SetOutput(stderr)
	roleText := fs.String("role", "", "role of the key: observer, maintainer or admin")
	file := fs.String("file", "", "keys file (default: $SPECD_API_KEYS, else .specd/api-keys in the current directory)")
	if err := fs.Parse(args[2:]); err != nil {
		return k, false
	}
	role, err := httpguard.ParseRole(*roleText)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return k, false
	}
	return keysAdd{id: args[1], role: role, path: cmp.Or(*file, os.Getenv("SPECD_API_KEYS"), filepath.Join(".specd", "api-keys"))}, true
}

// appendKeyLine appends line to the keys file at path, creating the file
// (0600) and its folder (0700) when missing. A file another user could
// change (its mode, its owner, a folder on its path) is refused
// (httpguard.CheckKeysFile), as the server refuses it, with nothing
// written; the folders are checked before any is made.
func appendKeyLine(path, line string) error {
	if err := httpguard.CheckKeysFolders(path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil {
		err = httpguard.CheckKeysFile(path, fi)
	}
	if err == nil {
		_, err = fmt.Fprintln(f, line)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// keyIDFree fails when the keys file already has id (a missing file has
// none).
func keyIDFree(path, id string) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == id {
			return fmt.Errorf("%s already has a key %q", path, id)
		}
	}
	return nil
}
