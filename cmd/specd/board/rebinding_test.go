package board_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/specd/specd/cmd/specd/board"
)

// TestBoardKeylessAnswersOnlyLoopbackHosts: a keyless board (a server on
// loopback) refuses a request whose Host is another name, as a page of
// another site that re-pointed its name at 127.0.0.1 (DNS rebinding)
// sends; loopback names and addresses are served.
func TestBoardKeylessAnswersOnlyLoopbackHosts(t *testing.T) {
	srv := newBoard(t, false, board.Config{})
	get := func(host string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, host := range []string{"attacker.example", "attacker.example:8080", "127.0.0.1.nip.example", "10.0.0.1:80"} {
		if code := get(host); code != http.StatusMisdirectedRequest {
			t.Errorf("Host %q: %d, want 421", host, code)
		}
	}
	for _, host := range []string{"localhost", "localhost:7777", "127.0.0.1:7777", "127.1.2.3", "[::1]:7777", "LOCALHOST"} {
		if code := get(host); code != http.StatusOK {
			t.Errorf("Host %q: %d, want 200", host, code)
		}
	}
}

// TestBoardSignInNextStaysOnTheBoard: the page a sign-in returns to is a
// path of this board; anything a browser could read as another origin
// (a tab or newline a browser drops, "//", a scheme) goes to "/".
func TestBoardSignInNextStaysOnTheBoard(t *testing.T) {
	srv := newBoard(t, true, board.Config{})
	for _, next := range []string{"/\t/evil.example/", "/\n/evil.example", "//evil.example", "/\\evil.example", "https://evil.example/", "/\x7f/evil"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/login", strings.NewReader(url.Values{"key": {secret}, "next": {next}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.URL)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "/" {
			t.Errorf("next %q: Location %q, want /", next, loc)
		}
	}
}
