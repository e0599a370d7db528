package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// The raw driver reads the answer to a task add with a targeted scan of
// its bytes instead of decoding it: the whole message is checked to be
// valid JSON (as encoding/json checks it), and only the members the driver
// reads are looked at — the id, method and error of the JSON-RPC message,
// and in its result the response-v2 envelope's success, error and
// data.task_id. Keys match exactly (encoding/json would also match them
// case-insensitively); when a key appears twice the last one counts, as
// with encoding/json.

// addAnswer is what the raw driver reads of the answer to a task add.
type addAnswer struct {
	success bool
	errText string // the envelope's error: a string's text, <nil> for null or none, else its JSON
	taskID  string
}

// id is the acknowledged task id of a successful envelope; a failed
// envelope is an error with the text the mcp-go driver's call gives it, and
// a success without a task id the one writeStats.ack gives.
func (a *addAnswer) id(tool, action string) (string, error) {
	if !a.success {
		return "", fmt.Errorf("%s %v: %s", tool, action, a.errText)
	}
	if a.taskID == "" {
		return "", errNoTaskID
	}
	return a.taskID, nil
}

// readResponse scans msg, one JSON-RPC message; found tells whether it is
// the response to the request whose id is want (its result then read into
// a, or its JSON-RPC error returned as a *rpcError). A message that is not
// valid JSON, or whose members the driver reads have the wrong type, is an
// error whatever its id.
func (a *addAnswer) readResponse(msg, want []byte) (found bool, err error) {
	s := scanner{b: msg}
	if s.isNull() { // encoding/json leaves everything as it was
		s.end()
		return false, s.decodeErr()
	}
	m := message{res: addAnswer{errText: "<nil>"}}
	for first, ok := true, s.enter(); ok; {
		var key []byte
		if key, ok = s.member(&first); !ok {
			break
		}
		s.messageMember(key, &m)
	}
	s.end()
	if s.err != nil {
		return false, s.decodeErr()
	}
	if len(m.method) > 0 || !bytes.Equal(m.id, want) {
		return false, nil
	}
	if m.rpc != nil {
		return true, m.rpc
	}
	*a = m.res
	return true, nil
}

// message is what the scanner keeps of a JSON-RPC message.
type message struct {
	id, method []byte // id: its JSON text
	rpc        *rpcError
	res        addAnswer
}

// messageMember scans the member key of a JSON-RPC message into m.
func (s *scanner) messageMember(key []byte, m *message) {
	switch string(key) {
	case "id":
		start := s.skipWS()
		s.value()
		m.id = s.b[start:s.i]
	case "method":
		if v := s.stringOrNull(); v != nil {
			m.method = v
		}
	case "error":
		s.rpcError(&m.rpc)
	case "result":
		s.result(&m.res)
	default:
		s.value()
	}
}

// scanner walks JSON text in b from i; the first error stops it (err).
type scanner struct {
	b     []byte
	i     int
	depth int
	err   error
}

// maxDepth is the deepest nesting the scanner accepts, encoding/json's.
const maxDepth = 10000

// decodeErr is the scan's error as an answer's error (nil when none).
func (s *scanner) decodeErr() error {
	if s.err == nil {
		return nil
	}
	return fmt.Errorf("failed to decode response: %w", s.err)
}

func (s *scanner) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("offset %d: "+format, append([]any{s.i}, args...)...)
	}
	s.i = len(s.b)
}

// skipWS skips white space and returns the offset of the next byte.
func (s *scanner) skipWS() int {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return s.i
		}
	}
	return s.i
}

// peek is the next byte after white space (0 at the end).
func (s *scanner) peek() byte {
	if s.skipWS(); s.i < len(s.b) && s.err == nil {
		return s.b[s.i]
	}
	return 0
}

// end checks that only white space follows the value.
func (s *scanner) end() {
	if s.skipWS(); s.err == nil && s.i < len(s.b) {
		s.fail("invalid character %q after top-level value", s.b[s.i])
	}
}

// enter starts scanning an object: false (and an error) when the next
// value is not one. Its members are then read with member.
func (s *scanner) enter() bool {
	if s.peek() != '{' {
		s.fail("not an object")
		return false
	}
	if s.depth++; s.depth > maxDepth {
		s.fail("exceeded max depth")
		return false
	}
	s.i++
	return true
}

// member reads the key of the object's next member, leaving the scanner at
// its value, which the caller must scan; ok is false at the object's end
// (or an error). first is true before the first member.
func (s *scanner) member(first *bool) (key []byte, ok bool) {
	switch c := s.peek(); {
	case s.err != nil:
		return nil, false
	case c == '}':
		s.i++
		s.depth--
		return nil, false
	case !*first && c != ',':
		s.fail("no comma or end after object member")
		return nil, false
	case !*first:
		s.i++
	}
	*first = false
	if s.peek() != '"' {
		s.fail("object key is not a string")
		return nil, false
	}
	key = s.str()
	if s.peek() != ':' {
		s.fail("no colon after object key")
		return nil, false
	}
	s.i++
	return key, s.err == nil
}

// skipObject scans an object whose members the driver does not read.
func (s *scanner) skipObject() {
	if !s.enter() {
		return
	}
	for first := true; ; {
		if _, ok := s.member(&first); !ok {
			return
		}
		s.value()
	}
}

// array scans an array, its elements with value.
func (s *scanner) array() {
	s.i++ // '['
	if s.depth++; s.depth > maxDepth {
		s.fail("exceeded max depth")
		return
	}
	if s.peek() == ']' {
		s.i++
		s.depth--
		return
	}
	for s.err == nil {
		s.value()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return
		default:
			s.fail("no comma or end after array element")
		}
	}
}

// value scans (and checks) any value.
func (s *scanner) value() {
	switch c := s.peek(); {
	case c == '{':
		s.skipObject()
	case c == '[':
		s.array()
	case c == '"':
		s.rawStr()
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		s.fail("invalid value")
	}
}

// isNull scans a null when one is next.
func (s *scanner) isNull() bool {
	if s.peek() != 'n' {
		return false
	}
	s.literal("null")
	return true
}

func (s *scanner) literal(lit string) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.fail("invalid literal")
		return
	}
	s.i += len(lit)
}

// number scans a number as JSON writes one and returns its text.
func (s *scanner) number() []byte {
	start := s.i
	s.skip('-')
	ok := s.skip('0') || s.digits() > 0
	if ok && s.skip('.') {
		ok = s.digits() > 0
	}
	if ok && (s.skip('e') || s.skip('E')) {
		_ = s.skip('+') || s.skip('-')
		ok = s.digits() > 0
	}
	if !ok {
		s.fail("invalid number")
		return nil
	}
	return s.b[start:s.i]
}

// skip skips the next byte when it is c.
func (s *scanner) skip(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// str scans a string and returns its value: the bytes between the quotes
// when it has no escape, else the unescaped value (a new slice).
func (s *scanner) str() []byte {
	start := s.i
	raw, escaped := s.rawStr()
	if !escaped || s.err != nil {
		return raw
	}
	var v string
	if err := json.Unmarshal(s.b[start:s.i], &v); err != nil {
		s.fail("invalid string: %v", err)
		return nil
	}
	return []byte(v)
}

// rawStr scans a string, checking it, and returns the bytes between its
// quotes and whether they hold an escape.
func (s *scanner) rawStr() (raw []byte, escaped bool) {
	s.i++ // '"'
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], escaped
		case c == '\\':
			escaped = true
			s.escape()
		case c < 0x20:
			s.fail("control character in string")
			return nil, false
		default:
			s.i++
		}
	}
	s.fail("unterminated string")
	return nil, false
}

// escape checks the escape at s.i and skips it.
func (s *scanner) escape() {
	if s.i+1 >= len(s.b) {
		s.fail("unterminated string")
		return
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
	case 'u':
		if s.i+6 > len(s.b) {
			s.fail("unterminated string")
			return
		}
		if !isHex(s.b[s.i+2 : s.i+6]) {
			s.fail("invalid escape")
			return
		}
		s.i += 6
	default:
		s.fail("invalid escape")
	}
}

// isHex tells whether b is all hexadecimal digits.
func isHex(b []byte) bool {
	for _, h := range b {
		if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
			return false
		}
	}
	return true
}

// stringOrNull scans a string (its value) or null (nil); anything else is
// an error.
func (s *scanner) stringOrNull() []byte {
	switch s.peek() {
	case '"':
		return s.str()
	case 'n':
		s.literal("null")
		return nil
	}
	s.fail("want a string")
	s.value()
	return nil
}

// rpcError scans a JSON-RPC error member into *e: null makes it nil, an
// object {code, message} is read into it (a new one when nil).
func (s *scanner) rpcError(e **rpcError) {
	if s.isNull() {
		*e = nil
		return
	}
	if *e == nil {
		*e = &rpcError{}
	}
	r := *e
	for first, ok := true, s.enter(); ok; {
		var key []byte
		if key, ok = s.member(&first); !ok {
			break
		}
		switch string(key) {
		case "code":
			r.Code = s.intOrNull(r.Code)
		case "message":
			if m := s.stringOrNull(); m != nil {
				r.Message = string(m)
			}
		default:
			s.value()
		}
	}
}

// intOrNull scans an integer (its value) or null (old, kept).
func (s *scanner) intOrNull(old int) int {
	if s.isNull() {
		return old
	}
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		s.fail("want an integer")
		return old
	}
	n, err := strconv.Atoi(string(s.number()))
	if err != nil && s.err == nil {
		s.fail("want an integer")
	}
	return n
}

// result scans a tools/call result into a: null or an object whose
// structuredContent (null or an object) is the envelope.
func (s *scanner) result(a *addAnswer) {
	if s.isNull() {
		return
	}
	for first, ok := true, s.enter(); ok; {
		var key []byte
		if key, ok = s.member(&first); !ok {
			break
		}
		switch {
		case string(key) != "structuredContent":
			s.value()
		case !s.isNull():
			s.envelope(a)
		}
	}
}

// envelope scans a response-v2 envelope (an object) into a.
func (s *scanner) envelope(a *addAnswer) {
	for first, ok := true, s.enter(); ok; {
		var key []byte
		if key, ok = s.member(&first); !ok {
			break
		}
		s.envelopeMember(key, a)
	}
}

// envelopeMember scans the member key of a response-v2 envelope into a:
// success (null or a boolean), error (any value) and data (null or an
// object) with its task_id (null or a string).
func (s *scanner) envelopeMember(key []byte, a *addAnswer) {
	switch string(key) {
	case "success":
		a.success = s.boolOrNull(a.success)
	case "error":
		a.errText = s.errorText()
	case "data":
		if !s.isNull() {
			s.data(a)
		}
	default:
		s.value()
	}
}

// boolOrNull scans a boolean (its value) or null (old, kept).
func (s *scanner) boolOrNull(old bool) bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		return true
	case 'f':
		s.literal("false")
		return false
	case 'n':
		s.literal("null")
		return old
	}
	s.fail("want a boolean")
	return old
}

// errorText scans an envelope's error: a string's value, <nil> for null
// (as fmt prints a nil error), else the value's JSON.
func (s *scanner) errorText() string {
	start := s.skipWS()
	switch s.peek() {
	case 'n':
		s.literal("null")
		return "<nil>"
	case '"':
		return string(s.str())
	}
	s.value()
	return string(s.b[start:s.i])
}

// data scans an envelope's data (an object) for its task_id.
func (s *scanner) data(a *addAnswer) {
	for first, ok := true, s.enter(); ok; {
		var key []byte
		if key, ok = s.member(&first); !ok {
			break
		}
		if string(key) != "task_id" {
			s.value()
		} else if id := s.stringOrNull(); id != nil {
			a.taskID = string(id)
		}
	}
}

var errNoTaskID = errors.New("task add answered no task_id")
