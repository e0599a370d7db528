package main

import (
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
// file others can write is refused, as the server refuses it.
func keysCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || args[0] != "add" || strings.HasPrefix(args[1], "-") {
		fmt.Fprintln(stderr, "usage: specd keys add ID --role observer|maintainer|admin [--file FILE]")
		return 2
	}
	id := args[1]
	fs := flag.NewFlagSet("keys add", flag.ContinueOnError)
	fs.SetOutput(stderr)
	roleText := fs.String("role", "", "role of the key: observer, maintainer or admin")
	file := fs.String("file", "", "keys file (default: $SPECD_API_KEYS, else .specd/api-keys in the current directory)")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	role, err := httpguard.ParseRole(*roleText)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 2
	}
	path := *file
	if path == "" {
		path = os.Getenv("SPECD_API_KEYS")
	}
	if path == "" {
		path = filepath.Join(".specd", "api-keys")
	}
	if err := keyIDFree(path, id); err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	secret, err := httpguard.NewSecret()
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	line, err := httpguard.KeyLine(id, role, secret)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 2
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	if fi, err := f.Stat(); err != nil || httpguard.CheckKeysFileMode(path, fi) != nil {
		if err == nil {
			err = httpguard.CheckKeysFileMode(path, fi)
		}
		_ = f.Close()
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	_, werr := fmt.Fprintln(f, line)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		fmt.Fprintln(stderr, "specd:", werr)
		return 1
	}
	fmt.Fprintf(stderr, "added key %s (role %s) to %s; the key is shown once, below:\n", id, role, path)
	fmt.Fprintln(stdout, secret)
	return 0
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
