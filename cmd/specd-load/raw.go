package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// The raw driver: a lean MCP client over streamable HTTP for the writes
// run, so that the load driver costs the shared cores less than the server
// it measures. It speaks the 2025-11-25 revision as the mcp-go driver does:
// initialize (the answer's Mcp-Session-Id is sent on every later request,
// with MCP-Protocol-Version), notifications/initialized, then tools/call
// requests over one keep-alive connection, their bodies appended into a
// reused buffer; an answer is read whether it is application/json or
// text/event-stream; the session is ended with a DELETE.

// rawProtocol is the protocol revision the raw driver asks for and requires.
const rawProtocol = mcp.ProtocolVersion20251125

// rawConn is one raw client session; its methods are for one goroutine.
type rawConn struct {
	hc     *http.Client
	url    *url.URL
	header http.Header // sent on every request (the session's, once initialized)
	nextID int64       // the last request id used
	body   []byte      // the request being sent, reused
	reply  bytes.Buffer
}

// rawConnect opens a session on the server at base (Bearer key when
// given): initialize, checked to answer rawProtocol, then
// notifications/initialized. Each connection has its own transport, so a
// worker keeps its one keep-alive connection.
func rawConnect(base, key string) (*rawConn, error) {
	u, err := url.Parse(base + "/mcp")
	if err != nil {
		return nil, err
	}
	c := &rawConn{
		hc:     &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}},
		url:    u,
		header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}},
	}
	if key != "" {
		c.header.Set("Authorization", "Bearer "+key)
	}
	if err := c.initialize(); err != nil {
		c.hc.CloseIdleConnections()
		return nil, err
	}
	return c, nil
}

// initialize runs the handshake and keeps the session id it answers.
func (c *rawConn) initialize() error {
	c.body = c.request(c.body[:0], "initialize")
	c.body = append(c.body, `,"params":{"protocolVersion":"`+rawProtocol+`","capabilities":{},"clientInfo":{"name":"specd-load","version":"1"}}}`...)
	resp, err := c.post(c.body)
	if err != nil {
		return err
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := c.answer(resp, c.nextID, jsonResult{&res}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if res.ProtocolVersion != rawProtocol {
		return fmt.Errorf("initialize: the server answered protocol %q, the raw driver speaks %s", res.ProtocolVersion, rawProtocol)
	}
	c.header = c.header.Clone()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.header.Set("Mcp-Session-Id", s)
	}
	c.header.Set("MCP-Protocol-Version", rawProtocol)
	resp, err = c.post(append(c.body[:0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`...))
	if err != nil {
		return err
	}
	c.readBody(resp)
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		c.body = nil
		return fmt.Errorf("notifications/initialized: request failed with status %d: %s", resp.StatusCode, clip(c.reply.Bytes()))
	}
	return nil
}

// request appends the start of a request with the next id and method to b,
// up to the method's closing quote.
func (c *rawConn) request(b []byte, method string) []byte {
	c.nextID++
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, c.nextID, 10)
	b = append(b, `,"method":"`...)
	b = append(b, method...)
	return append(b, '"')
}

// addPrefix is the part of a task add's tools/call request after its
// method that names the spec and phase of s, up to the title's number
// (see addArgs for the mcp-go driver's).
func addPrefix(s spec) []byte {
	id, _ := json.Marshal(s.id)
	phase, _ := json.Marshal(s.phase)
	b := []byte(`,"params":{"name":"task","arguments":{"action":"add","spec_id":`)
	b = append(b, id...)
	b = append(b, `,"parent":`...)
	b = append(b, phase...)
	return append(b, `,"title":"load task `...)
}

// add makes the n-th task add of the worker on the spec whose addPrefix is
// prefix and returns the acknowledged task id.
func (c *rawConn) add(prefix []byte, n int) (string, error) {
	c.addBody(prefix, n)
	resp, err := c.post(c.body)
	if err != nil {
		return "", err
	}
	var res addAnswer
	if err := c.answer(resp, c.nextID, &res); err != nil {
		return "", err
	}
	return res.id("task", "add")
}

// addBody makes c.body the next request: the n-th task add on the spec
// whose addPrefix is prefix.
func (c *rawConn) addBody(prefix []byte, n int) {
	c.body = c.request(c.body[:0], "tools/call")
	c.body = append(c.body, prefix...)
	c.body = strconv.AppendInt(c.body, int64(n), 10)
	c.body = append(c.body, `"}}}`...)
}

// post sends body to the endpoint with the session's headers. The caller
// reads the answer (readBody or answer).
func (c *rawConn) post(body []byte) (*http.Response, error) {
	req := &http.Request{
		Method:        http.MethodPost,
		URL:           c.url,
		Host:          c.url.Host,
		Header:        c.header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		// lets the transport resend on a fresh connection when a kept-alive
		// one was closed before anything was written
		GetBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.body = nil // the transport may still be reading it
		return nil, fmt.Errorf("failed to send request: %w", err)
	}
	return resp, nil
}

// readBody reads and closes resp's body into c.reply.
func (c *rawConn) readBody(resp *http.Response) {
	c.reply.Reset()
	_, err := c.reply.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		c.reply.Reset()
	}
}

// answer reads resp, the answer to request id, and its response with r
// (see readReply). A status other than 200 is an error (its JSON-RPC error
// when the body is one).
func (c *rawConn) answer(resp *http.Response, id int64, result responseReader) error {
	c.readBody(resp)
	if resp.StatusCode != http.StatusOK {
		// the server may not have read the request: its buffer is not reused
		c.body = nil
		if err := readReply(resp.Header.Get("Content-Type"), c.reply.Bytes(), id, result); errors.As(err, new(*rpcError)) {
			return err
		}
		return fmt.Errorf("request failed with status %d: %s", resp.StatusCode, clip(c.reply.Bytes()))
	}
	return readReply(resp.Header.Get("Content-Type"), c.reply.Bytes(), id, result)
}

// close ends the session (DELETE) and closes the connection.
func (c *rawConn) close() {
	req := &http.Request{Method: http.MethodDelete, URL: c.url, Host: c.url.Host, Header: c.header}
	if resp, err := c.hc.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	c.hc.CloseIdleConnections()
}

// clip is at most the first 200 bytes of b, for an error text.
func clip(b []byte) []byte { return b[:min(len(b), 200)] }

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// rpcMessage is one JSON-RPC message from the server, its result decoded
// into Result.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *rpcError       `json:"error"`
	Result any             `json:"result"`
}

// responseReader reads the response to a request out of one JSON-RPC
// message: found tells whether msg is the response to the request whose id
// is want; a JSON-RPC error answer is a *rpcError.
type responseReader interface {
	readResponse(msg, want []byte) (found bool, err error)
}

// jsonResult reads a response's result with encoding/json into v (a
// pointer); the raw driver uses it for initialize, once per session.
type jsonResult struct{ v any }

func (r jsonResult) readResponse(msg, want []byte) (bool, error) {
	m := rpcMessage{Result: r.v}
	if err := json.Unmarshal(msg, &m); err != nil {
		return false, fmt.Errorf("failed to decode response: %w", err)
	}
	if m.Method != "" || !bytes.Equal(bytes.TrimSpace(m.ID), want) {
		return false, nil
	}
	if m.Error != nil {
		return true, m.Error
	}
	return true, nil
}

// readReply finds the response to request id in body, an answer of media
// type contentType, and reads it with r. As the streamable-HTTP transport
// allows, the answer is either one JSON-RPC message (application/json) or
// an event stream (text/event-stream) whose message events carry JSON-RPC
// messages: notifications and server requests may come before the
// response, and are skipped.
func readReply(contentType string, body []byte, id int64, r responseReader) error {
	mt := contentType
	if mt != "application/json" && mt != "text/event-stream" { // the common answers need no parsing
		var err error
		if mt, _, err = mime.ParseMediaType(contentType); err != nil {
			return fmt.Errorf("unexpected content type: %q", contentType)
		}
	}
	var buf [20]byte
	want := strconv.AppendInt(buf[:0], id, 10)
	switch mt {
	case "application/json":
		found, err := r.readResponse(body, want)
		if err == nil && !found {
			err = fmt.Errorf("the answer is not the response to request %s: %s", want, clip(body))
		}
		return err
	case "text/event-stream":
		for data := range sseMessages(body) {
			if found, err := r.readResponse(data, want); found || err != nil {
				return err
			}
		}
		return fmt.Errorf("the event stream ended without the response to request %s", want)
	}
	return fmt.Errorf("unexpected content type: %q", contentType)
}

// sseMessages yields the data of each complete message event of an event
// stream, as server-sent events define it: lines end with CRLF, LF or CR; a
// field's value loses one leading space; each data line adds its value and
// a LF; a blank line ends the event, which is dispatched (without the last
// LF) unless it had no data line; an event without a type is a message;
// comment lines (":…") and other fields are ignored; an event the stream
// ends in the middle of is dropped. The yielded bytes are reused.
func sseMessages(body []byte) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		var data []byte
		message := true
		for {
			line, rest, ok := cutLine(body)
			if !ok {
				return // the stream ends in the middle of a line or event
			}
			body = rest
			if len(line) == 0 {
				if len(data) > 0 && message && !yield(data[:len(data)-1]) {
					return
				}
				data, message = data[:0], true
				continue
			}
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				data = append(append(data, value...), '\n')
			case "event":
				message = len(value) == 0 || string(value) == "message"
			}
		}
	}
}

// cutLine cuts the first line off an event stream: the line without its
// end (CRLF, LF or CR) and the rest; ok is false when no line end is left.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 {
		return nil, b, false
	}
	line, rest = b[:i], b[i+1:]
	if b[i] == '\r' && len(rest) > 0 && rest[0] == '\n' {
		rest = rest[1:]
	}
	return line, rest, true
}
