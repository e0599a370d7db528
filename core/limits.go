package core

import (
	"fmt"
	"unicode/utf8"

	"github.com/specd/specd/core/errcode"
)

// Input caps of every call (exceeding one is PAYLOAD_TOO_LARGE naming the field
// and the cap). A parameter may declare a larger cap for itself (research text
// takes up to 5 MB).
const (
	MaxRequestBytes = 100 * 1024
	MaxStringChars  = 10_000
	MaxArrayItems   = 1_000
	MaxObjectKeys   = MaxArrayItems // the same cap for an object's keys
	MaxNesting      = 10
	MaxLargeText    = 5 * 1024 * 1024
	// MaxMessageBytes caps one JSON-RPC message on stdio and HTTP: above
	// MaxLargeText plus the escaping and envelope around it.
	MaxMessageBytes = 8 << 20
)

// Page sizes: default and maximum per kind of list (a limit above the maximum
// is INVALID_FORMAT).
type PageLimits struct{ Default, Max int }

var (
	PageList    = PageLimits{100, 1000}
	PageTasks   = PageLimits{25, 100}
	PageJournal = PageLimits{100, 1000}
	PageHistory = PageLimits{50, 100}
)

// DefaultTokenBudget is the default answer budget (tokens = bytes/4 of the
// whole answer: the compact JSON of the envelope, or of a resource).
const DefaultTokenBudget = 25_000

// CheckValueCaps walks v (decoded JSON) and reports the first string longer
// than maxString runes, array longer than MaxArrayItems items, object with
// more than MaxObjectKeys keys or nesting deeper than MaxNesting as
// PAYLOAD_TOO_LARGE naming the path. field is the path prefix.
func CheckValueCaps(field string, v any, maxString int) *Error {
	return checkCaps(field, v, maxString, 0)
}

// checkCaps is CheckValueCaps for v at path, depth levels below the
// argument.
func checkCaps(path string, v any, maxString, depth int) *Error {
	if depth > MaxNesting {
		return tooLarge(path, "nesting depth", MaxNesting, depth)
	}
	switch x := v.(type) {
	case string:
		return checkStringCap(path, x, maxString)
	case []any:
		return checkArrayCaps(path, x, maxString, depth)
	case map[string]any:
		return checkObjectCaps(path, x, maxString, depth)
	}
	return nil
}

// checkStringCap refuses s when it has more than maxString runes.
func checkStringCap(path, s string, maxString int) *Error {
	if len(s) <= maxString { // fast path: bytes ≥ runes
		return nil
	}
	if n := utf8.RuneCountInString(s); n > maxString {
		return tooLarge(path, "characters", maxString, n)
	}
	return nil
}

// checkArrayCaps refuses a over MaxArrayItems items, then checks each item
// in order.
func checkArrayCaps(path string, a []any, maxString, depth int) *Error {
	if len(a) > MaxArrayItems {
		return tooLarge(path, "items", MaxArrayItems, len(a))
	}
	for i, e := range a {
		if err := checkCaps(fmt.Sprintf("%s[%d]", path, i), e, maxString, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// checkObjectCaps refuses m over MaxObjectKeys keys, then checks each
// member.
func checkObjectCaps(path string, m map[string]any, maxString, depth int) *Error {
	if len(m) > MaxObjectKeys {
		return tooLarge(path, "keys", MaxObjectKeys, len(m))
	}
	for k, e := range m {
		if err := checkCaps(path+"."+k, e, maxString, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func tooLarge(field, unit string, limit, got int) *Error {
	return &Error{
		Code:    errcode.PayloadTooLarge,
		Message: fmt.Sprintf("%s has %d %s; the limit is %d.", field, got, unit, limit),
		Details: map[string]any{"field": field, "constraint": "max " + unit, "limit": limit, "received": got},
	}
}

// RequestTooLarge is the PAYLOAD_TOO_LARGE error for a whole request of n bytes.
func RequestTooLarge(n, limit int) *Error {
	return tooLarge("arguments", "bytes", limit, n)
}
