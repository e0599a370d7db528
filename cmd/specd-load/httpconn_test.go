package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// scripted is a TCP server that reads each request with net/http's parser
// (so a request httpConn writes must be valid HTTP/1.1) and writes the next
// scripted answer as given, closing the connection after it when told.
type scripted struct {
	ln      net.Listener
	mu      sync.Mutex
	answers []scriptedAnswer
	reqs    []string      // method, target, Content-Length and body of each request read
	conns   int           // connections accepted
	closed  chan struct{} // receives once per connection the server closed
}

type scriptedAnswer struct {
	raw   string // written as is; "" writes nothing
	close bool   // close the connection after writing raw
}

func newScripted(t *testing.T, answers ...scriptedAnswer) *scripted {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scripted{ln: ln, answers: answers, closed: make(chan struct{}, 100)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
			go s.serve(c)
		}
	}()
	return s
}

func (s *scripted) serve(c net.Conn) {
	defer func() {
		c.Close()
		s.closed <- struct{}{}
	}()
	r := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, req.Method+" "+req.RequestURI+" "+req.Header.Get("Content-Length")+" "+string(body))
		if len(s.answers) == 0 {
			s.mu.Unlock()
			return
		}
		a := s.answers[0]
		s.answers = s.answers[1:]
		s.mu.Unlock()
		if _, err := io.WriteString(c, a.raw); err != nil || a.close {
			return
		}
	}
}

func (s *scripted) state() (reqs []string, conns int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...), s.conns
}

const okJSON = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\nContent-Length: 7\r\n\r\n{\"a\":1}"

// httpConn reads answers framed every way an HTTP/1.1 server may frame
// them, keeps the connection when it may and dials again when not.
func TestHTTPConnAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answers   []scriptedAnswer
		wantBody  string
		wantType  string
		wantSess  string
		wantCode  int
		wantConns int // after the second request (each gets the same answer)
	}{
		{name: "content length", answers: []scriptedAnswer{{raw: okJSON}, {raw: okJSON}},
			wantBody: `{"a":1}`, wantType: "application/json", wantSess: "s-1", wantCode: 200, wantConns: 1},
		{name: "chunked with extension and trailer",
			answers:  twice("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\ndata:\r\n3\r\n a\n\r\n0\r\nX-T: 1\r\n\r\n"),
			wantBody: "data: a\n", wantType: "text/event-stream", wantCode: 200, wantConns: 1},
		{name: "header names in any case, interim answer skipped",
			answers:  twice("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\ncontent-length:  0 \r\nMCP-SESSION-ID: s-2\r\n\r\n"),
			wantBody: "", wantSess: "s-2", wantCode: 202, wantConns: 1},
		{name: "connection close", answers: twice("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"),
			wantBody: "ok", wantCode: 200, wantConns: 2},
		{name: "HTTP/1.0 read to the end", answers: []scriptedAnswer{{raw: "HTTP/1.0 200 OK\r\n\r\nto the end", close: true}, {raw: "HTTP/1.0 200 OK\r\n\r\nto the end", close: true}},
			wantBody: "to the end", wantCode: 200, wantConns: 2},
		{name: "no content", answers: twice("HTTP/1.1 204 No Content\r\n\r\n"), wantCode: 204, wantConns: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScripted(t, tc.answers...)
			h := &httpConn{addr: s.ln.Addr().String()}
			defer h.close()
			var buf []byte
			for i := range 2 {
				a, err := h.do([]byte("POST /mcp HTTP/1.1\r\nHost: x\r\n"), []byte(`{"n":1}`), &buf)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if string(a.body) != tc.wantBody || a.contentType != tc.wantType || a.sessionID != tc.wantSess || a.status != tc.wantCode {
					t.Fatalf("request %d: %+v, body %q", i, a, a.body)
				}
			}
			reqs, conns := s.state()
			if conns != tc.wantConns || len(reqs) != 2 || reqs[0] != `POST /mcp 7 {"n":1}` {
				t.Fatalf("%d connections, requests %q", conns, reqs)
			}
		})
	}
}

func twice(raw string) []scriptedAnswer { return []scriptedAnswer{{raw: raw}, {raw: raw}} }

// A malformed answer is an error, and the next request has a new
// connection.
func TestHTTPConnMalformed(t *testing.T) {
	for _, raw := range []string{
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/1.1 abc OK\r\n\r\n",
		"garbage\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nContent-Le",
		"HTTP/1.1 101 Switching Protocols\r\n\r\n",
	} {
		t.Run(raw, func(t *testing.T) {
			s := newScripted(t, scriptedAnswer{raw: raw, close: true}, scriptedAnswer{raw: okJSON})
			h := &httpConn{addr: s.ln.Addr().String()}
			defer h.close()
			var buf []byte
			if a, err := h.do([]byte("POST /mcp HTTP/1.1\r\nHost: x\r\n"), nil, &buf); err == nil {
				t.Fatalf("answer %+v, want an error", a)
			}
			if a, err := h.do([]byte("POST /mcp HTTP/1.1\r\nHost: x\r\n"), nil, &buf); err != nil || string(a.body) != `{"a":1}` {
				t.Fatalf("next request: %+v, %v", a, err)
			}
			if _, conns := s.state(); conns != 2 {
				t.Fatalf("%d connections, want 2", conns)
			}
		})
	}
}

// A request the server read is never sent again: a kept-alive connection
// the server closes after reading a request, without answering it (a
// write timeout, a crash), may have carried out the request (a task add
// written), so the call is an error, as net/http makes it for a POST; the
// next request goes on a new connection. A new connection that closes
// before answering is an error as well.
func TestHTTPConnNoResendOfARequestRead(t *testing.T) {
	s := newScripted(t, scriptedAnswer{raw: okJSON}, scriptedAnswer{close: true}, scriptedAnswer{raw: okJSON}, scriptedAnswer{close: true})
	h := &httpConn{addr: s.ln.Addr().String()}
	defer h.close()
	var buf []byte
	head := []byte("POST /mcp HTTP/1.1\r\nHost: x\r\n")
	if a, err := h.do(head, []byte("1"), &buf); err != nil || string(a.body) != `{"a":1}` {
		t.Fatalf("request 1: %+v, %v", a, err)
	}
	if a, err := h.do(head, []byte("2"), &buf); err == nil || !strings.Contains(err.Error(), "closed before an answer") {
		t.Fatalf("request 2, read and not answered: %+v, %v; want an error", a, err)
	}
	if a, err := h.do(head, []byte("3"), &buf); err != nil || string(a.body) != `{"a":1}` {
		t.Fatalf("request 3: %+v, %v", a, err)
	}
	if _, err := h.do(head, []byte("4"), &buf); err == nil || !strings.Contains(err.Error(), "closed before an answer") {
		t.Fatalf("request 4 on a kept-alive connection closed before answering: %v", err)
	}
	reqs, conns := s.state()
	want := []string{"POST /mcp 1 1", "POST /mcp 1 2", "POST /mcp 1 3", "POST /mcp 1 4"}
	if strings.Join(reqs, "|") != strings.Join(want, "|") || conns != 2 {
		t.Fatalf("requests %q on %d connections, want %q on 2", reqs, conns, want)
	}
}

// A kept-alive connection the server closed while it was idle (its
// keep-alive timeout, Connection: close not sent) is seen closed before the
// next request is written: the request goes on a new connection, once.
func TestHTTPConnIdleCloseRedials(t *testing.T) {
	s := newScripted(t, scriptedAnswer{raw: okJSON, close: true}, scriptedAnswer{raw: okJSON})
	h := &httpConn{addr: s.ln.Addr().String()}
	defer h.close()
	var buf []byte
	head := []byte("POST /mcp HTTP/1.1\r\nHost: x\r\n")
	if a, err := h.do(head, []byte("1"), &buf); err != nil || string(a.body) != `{"a":1}` {
		t.Fatalf("request 1: %+v, %v", a, err)
	}
	<-s.closed // the server has closed the idle connection
	if a, err := h.do(head, []byte("2"), &buf); err != nil || string(a.body) != `{"a":1}` {
		t.Fatalf("request 2 after the idle close: %+v, %v", a, err)
	}
	reqs, conns := s.state()
	want := []string{"POST /mcp 1 1", "POST /mcp 1 2"}
	if strings.Join(reqs, "|") != strings.Join(want, "|") || conns != 2 {
		t.Fatalf("requests %q on %d connections, want %q on 2", reqs, conns, want)
	}
}
