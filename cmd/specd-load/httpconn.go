package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"syscall"
)

// httpConn is the raw driver's HTTP/1.1 client: one keep-alive connection
// to the server, written and read by the goroutine that makes the request
// (net/http's client hands each request to a writer and a reader goroutine
// of the connection, and parses every header into a map). A request is one
// write of its prebuilt header, Content-Length and body; the answer's
// status line and headers are read from a reused buffer, keeping only what
// the driver reads (status, Content-Type, Mcp-Session-Id, the framing), and
// its body, sized by Content-Length or chunked (or read to the end of the
// connection), into a reused buffer. A connection the server closes
// (Connection: close, an HTTP/1.0 answer, one read to the connection's end) is dialled again
// for the next request. Its methods are for one goroutine.
type httpConn struct {
	addr   string // host:port dialled
	conn   net.Conn
	r      *bufio.Reader
	out    []byte // the request being written, reused
	reused bool   // conn has answered a request
}

// httpAnswer is what the driver reads of an answer; body is the conn's
// buffer, valid until its next request.
type httpAnswer struct {
	status      int
	contentType string
	sessionID   string // Mcp-Session-Id
	body        []byte
}

// do sends one request — head (request line and headers, each ending in
// CRLF, without Content-Length), then body — and reads its answer, body
// into *buf (reused). A kept-alive connection the server closed while it
// was idle is dialled again before the request is written (peerClosed),
// and a request whose write fails on a kept-alive connection is sent once
// more on a new one: in neither case can the server have read the request.
// A request written whole is never sent again: a connection that ends
// before the first byte of its answer is an error (errClosedBeforeAnswer),
// since the server may have read and carried out the request (a task add
// written, its answer lost to a write timeout or a crash), as net/http
// treats a POST.
func (h *httpConn) do(head, body []byte, buf *[]byte) (httpAnswer, error) {
	h.out = append(append(h.out[:0], head...), "Content-Length: "...)
	h.out = strconv.AppendInt(h.out, int64(len(body)), 10)
	h.out = append(append(h.out, "\r\n\r\n"...), body...)
	for {
		reused := h.reused
		a, err := h.roundTrip(buf)
		if err == nil {
			return a, nil
		}
		h.close()
		if !reused || !errors.Is(err, errNotWritten) {
			return httpAnswer{}, err
		}
	}
}

// errClosedBeforeAnswer is a connection that failed after the request was
// written, before any byte of an answer arrived; errNotWritten one whose
// write of the request failed (the server did not get it whole).
var (
	errClosedBeforeAnswer = errors.New("the connection closed before an answer")
	errNotWritten         = errors.New("the connection closed before the request was written")
)

// roundTrip writes h.out on the connection (dialled when none) and reads
// the answer.
func (h *httpConn) roundTrip(buf *[]byte) (httpAnswer, error) {
	if h.conn != nil && (h.r.Buffered() > 0 || peerClosed(h.conn)) {
		h.close() // closed while idle, or bytes nobody asked for: nothing was written
	}
	if h.conn == nil {
		c, err := net.Dial("tcp", h.addr)
		if err != nil {
			return httpAnswer{}, err
		}
		h.conn = c
		if h.r == nil {
			h.r = bufio.NewReaderSize(c, 16<<10)
		} else {
			h.r.Reset(c)
		}
	}
	if _, err := h.conn.Write(h.out); err != nil {
		return httpAnswer{}, fmt.Errorf("%w: %w", errNotWritten, err)
	}
	if _, err := h.r.Peek(1); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			err = fmt.Errorf("%w: %w", errClosedBeforeAnswer, err)
		}
		return httpAnswer{}, err
	}
	a, keep, err := h.readAnswer(buf)
	if err != nil {
		return httpAnswer{}, fmt.Errorf("reading the answer: %w", err)
	}
	h.reused = true
	if !keep {
		h.close()
	}
	return a, nil
}

// close closes the connection (the next request dials a new one).
func (h *httpConn) close() {
	if h.conn != nil {
		h.conn.Close()
		h.conn, h.reused = nil, false
	}
}

// answerHead is the framing of an answer read from its headers.
type answerHead struct {
	httpAnswer
	length  int64 // Content-Length, -1 when none
	chunked bool
	keep    bool // the connection stays open after the answer
}

// readAnswer reads one answer (after any 1xx interim answers) from h.r,
// its body into *buf; keep tells whether the connection may carry another
// request.
func (h *httpConn) readAnswer(buf *[]byte) (httpAnswer, bool, error) {
	var a answerHead
	for {
		var err error
		if a, err = readHead(h.r); err != nil {
			return httpAnswer{}, false, err
		}
		if a.status >= 200 || a.status == 101 {
			break
		}
	}
	if a.status == 101 {
		return httpAnswer{}, false, errors.New("the server switched protocols")
	}
	body, err := readBody(h.r, a, (*buf)[:0])
	*buf = body
	if err != nil {
		return httpAnswer{}, false, err
	}
	a.body = body
	return a.httpAnswer, a.keep && (a.chunked || a.length >= 0 || noBody(a.status)), nil
}

// noBody tells whether an answer of status has no body whatever its headers.
func noBody(status int) bool { return status == 204 || status == 304 }

// readHead reads a status line and headers.
func readHead(r *bufio.Reader) (answerHead, error) {
	line, err := readLine(r)
	if err != nil {
		return answerHead{}, err
	}
	a := answerHead{length: -1}
	proto, rest, _ := bytes.Cut(line, []byte(" "))
	code, _, _ := bytes.Cut(rest, []byte(" "))
	switch string(proto) {
	case "HTTP/1.1":
		a.keep = true
	case "HTTP/1.0":
	default:
		return answerHead{}, fmt.Errorf("malformed status line %q", clip(line))
	}
	if a.status, err = strconv.Atoi(string(code)); err != nil || len(code) != 3 {
		return answerHead{}, fmt.Errorf("malformed status line %q", clip(line))
	}
	for {
		line, err := readLine(r)
		if err != nil {
			return answerHead{}, err
		}
		if len(line) == 0 {
			return a, nil
		}
		if err := a.header(line); err != nil {
			return answerHead{}, err
		}
	}
}

// header reads one header line into a.
func (a *answerHead) header(line []byte) error {
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
		return fmt.Errorf("malformed header %q", clip(line))
	}
	value = bytes.Trim(value, " \t")
	switch {
	case bytes.EqualFold(name, []byte("Content-Length")):
		return a.contentLength(value)
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		if !bytes.EqualFold(value, []byte("chunked")) {
			return fmt.Errorf("unsupported Transfer-Encoding %q", clip(value))
		}
		a.chunked = true
	case bytes.EqualFold(name, []byte("Connection")):
		a.keep = a.keep && !hasToken(value, "close")
	case bytes.EqualFold(name, []byte("Content-Type")):
		a.contentType = internContentType(value)
	case bytes.EqualFold(name, []byte("Mcp-Session-Id")):
		a.sessionID = string(value)
	}
	return nil
}

// contentLength reads a Content-Length value (a repeated one must agree).
func (a *answerHead) contentLength(value []byte) error {
	n, err := strconv.ParseInt(string(value), 10, 64)
	if err != nil || n < 0 || a.length >= 0 && a.length != n {
		return fmt.Errorf("malformed Content-Length %q", clip(value))
	}
	a.length = n
	return nil
}

// hasToken tells whether the comma-separated list v holds token (in any
// case).
func hasToken(v []byte, token string) bool {
	for opt := range bytes.SplitSeq(v, []byte(",")) {
		if bytes.EqualFold(bytes.Trim(opt, " \t"), []byte(token)) {
			return true
		}
	}
	return false
}

// internContentType is the content type value as a string, without an
// allocation for the two the server answers.
func internContentType(v []byte) string {
	switch string(v) {
	case "application/json":
		return "application/json"
	case "text/event-stream":
		return "text/event-stream"
	}
	return string(v)
}

// readBody reads the body of the answer a heads from r, appended to buf.
func readBody(r *bufio.Reader, a answerHead, buf []byte) ([]byte, error) {
	switch {
	case noBody(a.status):
		return buf, nil
	case a.chunked:
		return readChunked(r, buf)
	case a.length >= 0:
		return readN(r, buf, a.length)
	}
	for { // to the end of the connection
		buf = slices.Grow(buf, 4096)
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// readN appends the next n bytes of r to buf.
func readN(r *bufio.Reader, buf []byte, n int64) ([]byte, error) {
	if n > 1<<30 {
		return buf, fmt.Errorf("an answer of %d bytes", n)
	}
	start := len(buf)
	buf = slices.Grow(buf, int(n))[:start+int(n)]
	if _, err := io.ReadFull(r, buf[start:]); err != nil {
		return buf[:start], fmt.Errorf("the body ended early: %w", err)
	}
	return buf, nil
}

// readChunked appends a chunked body to buf: each chunk a hexadecimal size
// line (extensions ignored), its bytes and CRLF, up to a chunk of size 0,
// then the trailer lines (ignored) up to a blank line.
func readChunked(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		line, err := readLine(r)
		if err != nil {
			return buf, err
		}
		size, _, _ := bytes.Cut(line, []byte(";"))
		n, err := strconv.ParseInt(string(bytes.Trim(size, " \t")), 16, 64)
		if err != nil || n < 0 {
			return buf, fmt.Errorf("malformed chunk size %q", clip(line))
		}
		if n == 0 {
			return buf, skipTrailer(r)
		}
		if buf, err = readN(r, buf, n); err != nil {
			return buf, err
		}
		if line, err = readLine(r); err != nil || len(line) != 0 {
			return buf, fmt.Errorf("no CRLF after a chunk (%v)", err)
		}
	}
}

// skipTrailer reads a chunked body's trailer lines up to a blank line.
func skipTrailer(r *bufio.Reader) error {
	for {
		line, err := readLine(r)
		if err != nil || len(line) == 0 {
			return err
		}
	}
}

// readLine reads a line ending in CRLF (or LF) and returns it without its
// end; the line is r's buffer, valid until r's next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	return bytes.TrimSuffix(line, []byte("\r")), nil
}
