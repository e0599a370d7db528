package core

import (
	"regexp"
	"strings"

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
	hex := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if len(hex) > 12 {
		hex = hex[len(hex)-12:]
	}
	if tool == "" {
		tool = "specd"
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
