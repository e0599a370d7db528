package flags

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/workspacefs"

	"github.com/specd/specd/flags/registry"
)

// fileFlag is the part of a flagd flag definition specd checks before it
// hands an edit to the provider.
type fileFlag struct {
	State          string                     `json:"state"`
	Variants       map[string]json.RawMessage `json:"variants"`
	DefaultVariant *string                    `json:"defaultVariant"`
	Targeting      json.RawMessage            `json:"targeting"`
}

// CheckFile validates a flag file in flagd's JSON format: it must parse;
// every flag needs state ENABLED or DISABLED, at least one variant and a
// defaultVariant that names one of them (or null); targeting, when present,
// must be a JSON object; every variant named as a literal string in the
// targeting rules (an "if" result or a fractional bucket) must exist; and a
// flag of specd's registry must have boolean variants. The error names the
// flag and what is wrong.
func CheckFile(data []byte) error {
	var doc struct {
		Flags map[string]json.RawMessage `json:"flags"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if dec.More() {
		return errors.New("not valid JSON: data after the top-level object")
	}
	if doc.Flags == nil {
		return errors.New(`no "flags" object`)
	}
	names := make([]string, 0, len(doc.Flags))
	for n := range doc.Flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := checkFlag(name, doc.Flags[name]); err != nil {
			return fmt.Errorf("flag %q: %w", name, err)
		}
	}
	return nil
}

// checkFlag checks the definition of flag name as CheckFile describes; the
// error says what is wrong, without the flag's name.
func checkFlag(name string, def json.RawMessage) error {
	var f fileFlag
	if err := json.Unmarshal(def, &f); err != nil {
		return err
	}
	if f.State != "ENABLED" && f.State != "DISABLED" {
		return fmt.Errorf("state must be ENABLED or DISABLED, not %q", f.State)
	}
	if len(f.Variants) == 0 {
		return errors.New("no variants")
	}
	if f.DefaultVariant != nil {
		if _, ok := f.Variants[*f.DefaultVariant]; !ok {
			return fmt.Errorf("defaultVariant %q is not one of its variants (%s)", *f.DefaultVariant, variantList(f.Variants))
		}
	}
	if _, known := registry.Lookup(name); known {
		if err := checkBoolVariants(f.Variants); err != nil {
			return err
		}
	}
	return checkTargeting(f)
}

// checkBoolVariants refuses a variant whose value is not true or false.
func checkBoolVariants(variants map[string]json.RawMessage) error {
	for _, v := range slices.Sorted(maps.Keys(variants)) { // the first bad one by name, every run
		var b bool
		if raw := variants[v]; json.Unmarshal(raw, &b) != nil {
			return fmt.Errorf("variant %q must be true or false, not %s", v, raw)
		}
	}
	return nil
}

// checkTargeting checks f's targeting, when present and not null: a JSON
// object whose results name only variants of f.
func checkTargeting(f fileFlag) error {
	if len(f.Targeting) == 0 || bytes.Equal(bytes.TrimSpace(f.Targeting), []byte("null")) {
		return nil
	}
	var rule any
	if err := json.Unmarshal(f.Targeting, &rule); err != nil {
		return fmt.Errorf("targeting: %w", err)
	}
	if _, ok := rule.(map[string]any); !ok {
		return errors.New("targeting must be a JSON object")
	}
	if v, ok := unknownVariant(rule, f.Variants); ok {
		return fmt.Errorf("targeting names variant %q, which is not one of its variants (%s)", v, variantList(f.Variants))
	}
	return nil
}

// unknownVariant finds a variant named in targeting results (the branches of
// an "if" and the buckets of "fractional") that the flag does not define.
func unknownVariant(rule any, variants map[string]json.RawMessage) (string, bool) {
	m, ok := rule.(map[string]any)
	if !ok {
		return "", false
	}
	for _, op := range slices.Sorted(maps.Keys(m)) { // one answer per file, whatever the map's order
		args, _ := m[op].([]any)
		var v string
		var bad bool
		switch op {
		case "if":
			v, bad = unknownInIf(args, variants)
		case "fractional":
			v, bad = unknownInBuckets(args, variants)
		default:
			v, bad = unknownInRules(args, variants)
		}
		if bad {
			return v, true
		}
	}
	return "", false
}

// unknownInIf finds an undefined variant among the results of an "if"
// ([cond, then, cond, then, …, else]: the odd indexes and the last) or in
// the rules nested in any of its arguments.
func unknownInIf(args []any, variants map[string]json.RawMessage) (string, bool) {
	for i, a := range args {
		isResult := i%2 == 1 || (i == len(args)-1 && i%2 == 0 && i > 0)
		if v, bad := undefinedVariant(a, variants); isResult && bad {
			return v, true
		}
		if v, bad := unknownVariant(a, variants); bad {
			return v, true
		}
	}
	return "", false
}

// unknownInBuckets finds an undefined variant named by a bucket of
// "fractional" ([variant, weight]).
func unknownInBuckets(args []any, variants map[string]json.RawMessage) (string, bool) {
	for _, a := range args {
		if bucket, ok := a.([]any); ok && len(bucket) > 0 {
			if v, bad := undefinedVariant(bucket[0], variants); bad {
				return v, true
			}
		}
	}
	return "", false
}

// unknownInRules finds an undefined variant in the rules among args.
func unknownInRules(args []any, variants map[string]json.RawMessage) (string, bool) {
	for _, a := range args {
		if v, bad := unknownVariant(a, variants); bad {
			return v, true
		}
	}
	return "", false
}

// undefinedVariant reports v when it is a string naming no variant.
func undefinedVariant(v any, variants map[string]json.RawMessage) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	_, defined := variants[s]
	return s, !defined
}

func variantList(vs map[string]json.RawMessage) string {
	names := make([]string, 0, len(vs))
	for n := range vs {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// MaxFileBytes caps the flag file: a larger one is refused unread (the
// last good configuration stays), with a warning naming the cap and the
// size.
const MaxFileBytes = 1 << 20

// ReadTimeout bounds one read of the flag file.
const ReadTimeout = 2 * time.Second

// fileRefusal is why the flag file could not be read: the message, and for
// an oversized file its size.
type fileRefusal struct {
	msg  string
	size int64 // bytes, when the file is over MaxFileBytes
}

func (r *fileRefusal) Error() string { return r.msg }

// readFile reads the flag file as specd reads every caller file: through
// an os.Root on its folder (core/workspacefs), so a symbolic link out of
// that folder (ln -s /dev/zero) is refused; opened without blocking, and
// the opened handle must be a regular file (a FIFO, a device or a folder is
// refused without a read); at most MaxFileBytes (a larger file is refused
// from its size, before reading); within ReadTimeout. display names the
// file in the refusal.
func readFile(path, display string) ([]byte, error) {
	dir, err := workspacefs.Open(filepath.Dir(path))
	if err != nil {
		return nil, &fileRefusal{msg: fmt.Sprintf("flag file %s: its folder cannot be opened", display)}
	}
	defer dir.Close()
	ctx, cancel := context.WithTimeout(context.Background(), ReadTimeout)
	defer cancel()
	name := filepath.Base(path)
	data, err := dir.ReadFile(ctx, name, MaxFileBytes)
	if err == nil {
		return data, nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, &fileRefusal{msg: fmt.Sprintf("flag file %s was not read within %s", display, ReadTimeout)}
	}
	e := core.AsError(err)
	if e.Code == errcode.PayloadTooLarge {
		size := int64(-1)
		if st, serr := dir.Stat(name); serr == nil {
			size = st.Size()
		}
		return nil, &fileRefusal{msg: fmt.Sprintf("flag file %s is %d bytes, over the %d-byte (1 MiB) cap", display, size, MaxFileBytes), size: size}
	}
	if e.Code == errcode.Internal {
		return nil, &fileRefusal{msg: fmt.Sprintf("flag file %s cannot be read: %v", display, e.Cause())}
	}
	return nil, &fileRefusal{msg: fmt.Sprintf("flag file %s: %s", display, e.Message)}
}
