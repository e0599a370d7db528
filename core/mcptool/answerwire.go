package mcptool

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core"
)

// A tool call's answer over streamable HTTP is written by mcp-go, which
// encodes the result with encoding/json: the envelope's bytes go into
// content[0].text as a JSON string and into structuredContent as a
// json.RawMessage, which encoding/json validates and compacts, and the
// whole result is validated and compacted once more because
// mcp.CallToolResult is a json.Marshaler. The envelope was already encoded
// once (core.Encode), so all of that re-checks bytes known to be compact
// JSON.
//
// HTTPInput therefore hands each POST an answerWriter, reachable from the
// request's context. A response-v2 tool answer in that context is held by
// the writer, and mcp-go gets a result whose text and structuredContent
// are two short placeholder strings (answerTextToken, answerDataToken).
// When mcp-go writes the answer (one Write for the JSON body or the SSE
// event), the writer puts the held bytes where the placeholders are: the
// envelope as encoding/json encodes a string (core.AppendJSONString) for the
// text, the envelope itself for structuredContent. The bytes on the wire
// are those encoding/json would have written: json.Marshal's output is
// already compact and HTML-escaped, so compacting it again changes
// nothing. A call not served through HTTPInput (stdio, in-process clients)
// gets the ordinary result (ToResult).

// answerNonce makes the placeholders unguessable: it is random per process
// and never leaves it (every placeholder is replaced before it is sent).
var answerNonce = func() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic("specd: no randomness for the answer nonce: " + err.Error())
	}
	return hex.EncodeToString(b)
}()

// The placeholders as Go strings (what mcp-go is given) and as the JSON
// strings encoding/json writes for them (what the writer looks for): the
// NUL is written \u0000.
var (
	answerTextToken = "\x00specd:answer:" + answerNonce + ":text"
	answerDataToken = "\x00specd:answer:" + answerNonce + ":structured"
	answerTextWire  = []byte(`"\u0000specd:answer:` + answerNonce + `:text"`)
	answerDataWire  = []byte(`"\u0000specd:answer:` + answerNonce + `:structured"`)
)

type answerWriterKey struct{}

// answerWriter is the http.ResponseWriter HTTPInput gives mcp-go for a
// POST: it restores surrogate request ids (ids: the request's id was
// replaced, see wrapRequestID) and splices the held tool answer into the
// write that carries its placeholders. Streaming (Flush) and the response
// controller (Unwrap) pass through. It also holds the request body mcp-go
// reads (body), so that one allocation serves the request.
type answerWriter struct {
	http.ResponseWriter
	ids  bool
	body heldBody
	// held is the envelope's bytes, set once by heldResult (the handler's
	// goroutine); state says how far: answerEmpty, answerFilling (held
	// being set), answerHeld (held may be read), answerSpliced (the write
	// that carried the placeholders used it; mcp-go writes an answer
	// once). Write, which mcp-go may also call from its notification
	// goroutine, reads held only in answerHeld.
	held  []byte
	state atomic.Int32
}

const (
	answerEmpty = iota
	answerFilling
	answerHeld
	answerSpliced
)

// heldBody is a request body read from memory.
type heldBody struct{ bytes.Reader }

// Close does nothing: the bytes were read whole before.
func (*heldBody) Close() error { return nil }

// withAnswerWriter is ctx carrying w for the tool handler (heldResult).
func withAnswerWriter(ctx context.Context, w *answerWriter) context.Context {
	return context.WithValue(ctx, answerWriterKey{}, w)
}

// heldResult is env's result for a tool call whose request came through
// HTTPInput: a placeholder result whose answer the writer fills in; nil
// when ctx carries no answerWriter, when it already holds an answer, or
// when env cannot be encoded (the caller then uses ToResult).
func heldResult(ctx context.Context, env core.Envelope) *mcp.CallToolResult {
	w, _ := ctx.Value(answerWriterKey{}).(*answerWriter)
	if w == nil {
		return nil
	}
	b, err := env.Marshal()
	if err != nil || !w.state.CompareAndSwap(answerEmpty, answerFilling) {
		return nil
	}
	w.held = b
	w.state.Store(answerHeld)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{answerTextContent},
		StructuredContent: answerDataValue,
		IsError:           !env.Success,
	}
}

// answerTextContent and answerDataValue are the placeholders as the
// values mcp-go is given, made once.
var (
	answerTextContent mcp.Content = mcp.TextContent{Type: "text", Text: answerTextToken}
	answerDataValue   any         = answerDataToken
)

// spliceBuf recycles the buffers Write builds answers in (net/http copies
// what it is given before Write returns); one grown past maxPooledSplice
// by a large answer is left to the collector.
var spliceBuf = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledSplice = 64 << 10

// Write writes p with its surrogate ids restored and the held answer in
// place of its placeholders, and reports len(p) written when all of it was.
func (w *answerWriter) Write(p []byte) (int, error) {
	q := p
	if w.ids {
		q = restoreIDs(q)
	}
	if w.state.Load() == answerHeld {
		if buf, ok := spliceAnswer(q, w.held); ok {
			w.state.Store(answerSpliced)
			_, err := w.ResponseWriter.Write(*buf)
			if cap(*buf) <= maxPooledSplice {
				spliceBuf.Put(buf)
			}
			if err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	if _, err := w.ResponseWriter.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// spliceAnswer is p with answerTextWire replaced by answer as a JSON
// string and the answerDataWire after it by answer itself, in a pooled
// buffer; ok is false (and no buffer taken) when p does not hold both.
func spliceAnswer(p, answer []byte) (buf *[]byte, ok bool) {
	i := indexOf(p, answerTextWire, 0)
	if i < 0 {
		return nil, false
	}
	j := indexOf(p, answerDataWire, i+len(answerTextWire))
	if j < 0 {
		return nil, false
	}
	buf = spliceBuf.Get().(*[]byte)
	out := append((*buf)[:0], p[:i]...)
	out = core.AppendJSONString(out, answer)
	out = append(out, p[i+len(answerTextWire):j]...)
	out = append(out, answer...)
	out = append(out, p[j+len(answerDataWire):]...)
	*buf = out
	return buf, true
}

// indexOf is the index of sep in p at or after from, or -1.
func indexOf(p, sep []byte, from int) int {
	if k := bytes.Index(p[from:], sep); k >= 0 {
		return from + k
	}
	return -1
}

func (w *answerWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
