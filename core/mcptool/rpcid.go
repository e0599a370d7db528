package mcptool

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"

	"github.com/specd/specd/core"
)

// mcp-go decodes a numeric JSON-RPC id into a float64 and encodes that back
// into the answer, so an id is echoed as sent only when the float64 holds
// it and Go writes it the same way: 1e309 overflows (and was answered with
// core's marked-number string), 100000000000000000000000 comes back as
// 1e+23, 9007199254740993 as 9007199254740992, 1.0 as 1. specd keeps the
// literal instead: before mcp-go reads a message, such an id becomes a
// surrogate string id (mcp-go echoes strings exactly), and on the way out
// the surrogate becomes the literal again, byte for byte.

// idSurrogate starts the JSON text of a surrogate id: a string that starts
// with NUL (a client can send one only as \u0000 on purpose) and carries a
// random per-process nonce, so no client can forge one; the literal
// follows, then the closing quote.
var idSurrogate = func() []byte {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic("specd: no randomness for the id nonce: " + err.Error())
	}
	return []byte(`"\u0000specd:id:` + hex.EncodeToString(b) + ":")
}()

// maxSafeID is 2^53: every integer up to it in magnitude is exact in a
// float64.
const maxSafeID = 1 << 53

// echoedExactly reports whether mcp-go echoes the id literal lit as sent:
// a plain integer (no sign but a leading minus, no leading zero, no
// fraction or exponent, not -0) within ±2^53 — that is, an integer in that
// range written exactly as strconv.FormatInt writes it.
func echoedExactly(lit []byte) bool {
	if len(lit) > 17 {
		return false
	}
	v, err := strconv.ParseInt(string(lit), 10, 64)
	return err == nil && strconv.FormatInt(v, 10) == string(lit) && v <= maxSafeID && v >= -maxSafeID
}

// wrapRequestID returns msg with its top-level "id", when it is a number
// mcp-go would not echo exactly, replaced by a surrogate string id, and
// whether it replaced one. In a notifications/cancelled the requestId its
// params name is replaced the same way, so that the cancel names the
// surrogate the in-flight request carries (mcp-go matches the two by
// their decoded values) and a client cancels a call by its id as sent.
// Any other message is returned as is.
func wrapRequestID(msg []byte) ([]byte, bool) {
	if start, end, ok := core.TopLevelMember(msg, "id"); ok {
		return wrapNumberAt(msg, start, end)
	}
	if !isCancel(msg) {
		return msg, false
	}
	ps, pe, ok := core.TopLevelMember(msg, "params")
	if !ok {
		return msg, false
	}
	start, end, ok := core.TopLevelMember(msg[ps:pe], "requestId")
	if !ok {
		return msg, false
	}
	return wrapNumberAt(msg, ps+start, ps+end)
}

// isCancel reports whether msg's top-level method is
// notifications/cancelled.
func isCancel(msg []byte) bool {
	start, end, ok := core.TopLevelMember(msg, "method")
	if !ok {
		return false
	}
	var method string
	return json.Unmarshal(msg[start:end], &method) == nil && method == "notifications/cancelled"
}

// wrapNumberAt returns msg with the id literal msg[start:end], when it is a
// number mcp-go would not echo exactly, replaced by its surrogate string,
// and whether it replaced it.
func wrapNumberAt(msg []byte, start, end int) ([]byte, bool) {
	if end <= start {
		return msg, false
	}
	lit := msg[start:end]
	if c := lit[0]; c != '-' && (c < '0' || c > '9') || echoedExactly(lit) {
		return msg, false
	}
	if !core.NumberBytes(lit) {
		return msg, false // not a number: mcp-go answers a parse error
	}
	out := make([]byte, 0, len(msg)+len(idSurrogate)+1)
	out = append(out, msg[:start]...)
	out = append(out, idSurrogate...)
	out = append(out, lit...)
	out = append(out, '"')
	return append(out, msg[end:]...), true
}

// restoreIDs returns p with every surrogate id (its quoted string)
// replaced by the literal it stands for; p itself when it holds none.
func restoreIDs(p []byte) []byte {
	i := bytes.Index(p, idSurrogate)
	if i < 0 {
		return p
	}
	out := make([]byte, 0, len(p))
	for i >= 0 {
		litStart := i + len(idSurrogate)
		q := bytes.IndexByte(p[litStart:], '"')
		if q < 0 {
			break
		}
		out = append(out, p[:i]...)
		out = append(out, p[litStart:litStart+q]...)
		p = p[litStart+q+1:]
		i = bytes.Index(p, idSurrogate)
	}
	return append(out, p...)
}

// StdioOutput wraps the stdout of mcp-go's stdio server (which writes each
// message with one Write) so that the answer to a request whose numeric id
// StdioInput replaced carries that id exactly as the client sent it.
func StdioOutput(w io.Writer) io.Writer { return idWriter{w} }

type idWriter struct{ w io.Writer }

// Write writes p with its surrogate ids restored and reports len(p) written
// when all of it was.
func (iw idWriter) Write(p []byte) (int, error) {
	q := restoreIDs(p)
	if _, err := iw.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}
