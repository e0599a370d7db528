package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// The raw driver: a lean MCP client over streamable HTTP for the writes
// run, so that the load driver costs the shared cores less than the server
// it measures. It speaks the 2025-11-25 revision as the mcp-go driver does:
// initialize (the answer's Mcp-Session-Id is sent on every later request,
// with MCP-Protocol-Version), notifications/initialized, then tools/call
// requests over one keep-alive connection (httpConn, its own HTTP/1.1
// client), their bodies appended into a reused buffer after a prebuilt
// header; an answer is read whether it is application/json or
// text/event-stream (a task add's with a targeted scan, scan.go); the
// session is ended with a DELETE.

// rawProtocol is the protocol revision the raw driver asks for and requires.
const rawProtocol = mcp.ProtocolVersion20251125

// rawConn is one raw client session; its methods are for one goroutine.
type rawConn struct {
	hc      *httpConn
	target  string // the request target (path) of the endpoint
	headers []byte // sent on every request after Host (the session's, once initialized)
	post    []byte // a POST's request line and headers, prebuilt
	nextID  int64  // the last request id used
	body    []byte // the request being sent, reused
	reply   []byte // the body of the last answer, reused
}

// rawConnect opens a session on the server at base, an http:// URL
// (Bearer key when given): initialize, checked to answer rawProtocol, then
// notifications/initialized, on the connection's own keep-alive
// connection.
func rawConnect(base, key string) (*rawConn, error) {
	u, err := url.Parse(base + "/mcp")
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("the raw driver speaks plain HTTP to host:port, not %q (use -driver mcp-go)", base)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	c := &rawConn{hc: &httpConn{addr: addr}, target: u.RequestURI()}
	c.headers = fmt.Appendf(nil, "Host: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", u.Host)
	if key != "" {
		c.headers = fmt.Appendf(c.headers, "Authorization: Bearer %s\r\n", key)
	}
	c.post = c.head(http.MethodPost)
	if err := c.initialize(); err != nil {
		c.hc.close()
		return nil, err
	}
	return c, nil
}

// head is the request line of method on the endpoint and the session's
// headers.
func (c *rawConn) head(method string) []byte {
	return fmt.Appendf(nil, "%s %s HTTP/1.1\r\n%s", method, c.target, c.headers)
}

// initialize runs the handshake and keeps the session id it answers.
func (c *rawConn) initialize() error {
	c.body = c.request(c.body[:0], "initialize")
	c.body = append(c.body, `,"params":{"protocolVersion":"`+rawProtocol+`","capabilities":{},"clientInfo":{"name":"specd-load","version":"1"}}}`...)
	resp, err := c.send(c.body)
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
	if s := resp.sessionID; s != "" {
		if strings.ContainsAny(s, "\r\n") {
			return fmt.Errorf("initialize: a session id with a line end: %q", s)
		}
		c.headers = fmt.Appendf(c.headers, "Mcp-Session-Id: %s\r\n", s)
	}
	c.headers = fmt.Appendf(c.headers, "MCP-Protocol-Version: %s\r\n", rawProtocol)
	c.post = c.head(http.MethodPost)
	resp, err = c.send(append(c.body[:0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`...))
	if err != nil {
		return err
	}
	if resp.status != http.StatusAccepted && resp.status != http.StatusOK {
		return fmt.Errorf("notifications/initialized: request failed with status %d: %s", resp.status, clip(resp.body))
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
	resp, err := c.send(c.body)
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

// send posts body to the endpoint with the session's headers and reads
// the answer (its body c.reply, valid until the next request).
func (c *rawConn) send(body []byte) (httpAnswer, error) {
	resp, err := c.hc.do(c.post, body, &c.reply)
	if err != nil {
		return httpAnswer{}, fmt.Errorf("failed to send request: %w", err)
	}
	return resp, nil
}

// answer reads resp, the answer to request id, and its response with r
// (see readReply). A status other than 200 is an error (its JSON-RPC error
// when the body is one).
func (c *rawConn) answer(resp httpAnswer, id int64, r responseReader) error {
	if resp.status != http.StatusOK {
		if err := readReply(resp.contentType, resp.body, id, r); errors.As(err, new(*rpcError)) {
			return err
		}
		return fmt.Errorf("request failed with status %d: %s", resp.status, clip(resp.body))
	}
	return readReply(resp.contentType, resp.body, id, r)
}

// close ends the session (DELETE) and closes the connection.
func (c *rawConn) close() {
	_, _ = c.hc.do(c.head(http.MethodDelete), nil, &c.reply)
	c.hc.close()
}

// listPage reads one page of a spec's tasks (see pageReader): a task list
// call whose answer is decoded into a listAnswer.
func (c *rawConn) listPage(specID, cursor string, out map[string]bool) (int, string, error) {
	args, err := json.Marshal(listArgs{Action: "list", SpecID: specID, Limit: 100, Cursor: cursor})
	if err != nil {
		return 0, "", err
	}
	c.body = c.request(c.body[:0], "tools/call")
	c.body = append(c.body, `,"params":{"name":"task","arguments":`...)
	c.body = append(append(c.body, args...), "}}"...)
	resp, err := c.send(c.body)
	if err != nil {
		return 0, "", err
	}
	var page listAnswer
	if err := c.answer(resp, c.nextID, jsonResult{&page}); err != nil {
		return 0, "", err
	}
	return page.read(out)
}

// listArgs are the arguments of a task list call (the mcp-go read-back's).
type listArgs struct {
	Action string `json:"action"`
	SpecID string `json:"spec_id"`
	Limit  int    `json:"limit"`
	Cursor string `json:"cursor,omitempty"`
}

// listAnswer is the part of a task list result the read-back reads.
type listAnswer struct {
	StructuredContent struct {
		Success bool `json:"success"`
		Error   any  `json:"error"`
		Data    struct {
			Tasks []struct {
				TaskID string `json:"task_id"`
			} `json:"tasks"`
		} `json:"data"`
		Meta struct {
			Pagination struct {
				Cursor string `json:"cursor"`
			} `json:"pagination"`
		} `json:"meta"`
	} `json:"structuredContent"`
}

// read adds the page's task ids to out and returns its number of tasks and
// the next cursor, as the mcp-go read-back does (addTaskIDs, nextCursor); a
// failed envelope is an error with the text of that read-back's call.
func (p *listAnswer) read(out map[string]bool) (int, string, error) {
	env := &p.StructuredContent
	if !env.Success {
		return 0, "", fmt.Errorf("task list: %v", env.Error)
	}
	for _, t := range env.Data.Tasks {
		if t.TaskID != "" {
			out[t.TaskID] = true
		}
	}
	return len(env.Data.Tasks), env.Meta.Pagination.Cursor, nil
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
