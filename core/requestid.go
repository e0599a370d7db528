package core

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

var requestIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// idChars are the bytes a request id may hold (requestIDPattern's class).
const idChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"

// RequestID builds "{tool}_{12 lowercase hex}" from the last 12 hex digits of
// id (a UUID string; v7 in production, whose leading digits are a timestamp
// and collide). Characters outside [a-zA-Z0-9_-] in tool are replaced by '_'
// so the result always matches ^[a-zA-Z0-9_-]+$.
func RequestID(tool, id string) string {
	if tool == "" {
		tool = "specd"
	}
	var buf [12]byte
	tail, ascii := lowerTail(id, &buf)
	if !ascii {
		return requestIDOf(tool, id)
	}
	var b strings.Builder
	b.Grow(len(tool) + 1 + len(tail))
	for i := 0; i < len(tool); i++ {
		if c := tool[i]; strings.IndexByte(idChars, c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteByte('_')
	b.Write(tail)
	return b.String()
}

// lowerTail is the last (up to) 12 bytes of id without its dashes, ASCII
// letters lowercased, in buf; ascii is false (and tail nil) when id has a
// byte outside ASCII anywhere.
func lowerTail(id string, buf *[12]byte) (tail []byte, ascii bool) {
	n := 0
	for i := len(id) - 1; i >= 0; i-- {
		c := id[i]
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if c == '-' || n == len(buf) {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		n++
		buf[len(buf)-n] = c
	}
	return buf[len(buf)-n:], true
}

// requestIDOf is RequestID of a tool name ("" replaced) and an id that is
// not all ASCII, whose lowercase form (strings.ToLower) may differ in
// length: RequestID builds the id of an ASCII one in one pass.
func requestIDOf(tool, id string) string {
	hex := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if len(hex) > 12 {
		hex = hex[len(hex)-12:]
	}
	clean := []byte(tool)
	for i, c := range clean {
		if strings.IndexByte(idChars, c) < 0 {
			clean[i] = '_'
		}
	}
	return string(clean) + "_" + hex
}

// ValidRequestID reports whether s has the shape of meta.request_id: letters,
// digits, _ and - only.
func ValidRequestID(s string) bool { return requestIDPattern.MatchString(s) }

// NewUUID returns a UUIDv7 string, falling back to v4 if the clock source
// fails. It is the production id generator.
func NewUUID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}
