package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
)

// chromiumPath is Debian's chromium (make chromium installs it). Without
// it the browser tests skip, except in CI, where they fail.
func chromiumPath(t testing.TB) string {
	t.Helper()
	p := os.Getenv("SPECD_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium not found at %s, and CI requires it (make chromium installs it)", p)
		}
		t.Skipf("chromium not found at %s: run make chromium (or set SPECD_CHROMIUM)", p)
	}
	return p
}

// browser starts a headless chromium with a fresh profile and returns a
// tab's context and the URLs every request of the tab went to.
func browser(t testing.TB) (context.Context, func() []string) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium's singleton socket goes in a dir of its own under
		// TMPDIR, which it leaves behind when killed (as the allocator's
		// cancel does): keep it inside the test's temp dir.
		chromedp.Env("TMPDIR=" + t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	var mu sync.Mutex
	var urls []string
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil {
			mu.Lock()
			urls = append(urls, e.Request.URL)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("network events: %v", err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), urls...)
	}
}

// seedBoardSpec creates a spec of two tasks through MCP and returns its id.
func seedBoardSpec(t testing.TB, c *client.Client, name string) string {
	t.Helper()
	env := call(t, c, "authoring", map[string]any{"action": "spec-create", "name": name})
	id, _ := data(env)["spec_id"].(string)
	if env := call(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": "Build"},
		"tasks": []any{
			map[string]any{"title": "Write the handler", "task_category": "implementation", "file_path": "a.go"},
			map[string]any{"title": "Write the page", "task_category": "implementation", "file_path": "b.go"},
		}}); env["success"] != true {
		t.Fatalf("seed: %v", env)
	}
	if env := call(t, c, "task", map[string]any{"action": "add-dependency", "spec_id": id, "task_id": "task-1-1", "target_id": "task-1-2"}); env["success"] != true {
		t.Fatalf("seed dependency: %v", env)
	}
	return id
}

// noHorizontalScroll checks the page fits its width.
func noHorizontalScroll(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	sw, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	must(t, err)
	cw, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.clientWidth`))
	must(t, err)
	if sw > cw {
		t.Errorf("%s scrolls sideways: scrollWidth %d > clientWidth %d", what, sw, cw)
	}
}

// a11yCheck is an accessibility check run in the page: the text contrast
// of WCAG 2 AA (4.5:1, 3:1 for large text) against the nearest opaque
// background, a label for every form control and progress bar, a name for
// every graphic, link and button, the page's language and a top heading.
// It returns the problems found.
const a11yCheck = `(() => {
  const rgb = s => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(parseFloat); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const bg = el => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c && c.a > 0.5) return c; } return {r: 255, g: 255, b: 255, a: 1}; };
  const out = [];
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (w.nextNode()) {
    const t = w.currentNode, el = t.parentElement;
    if (!t.textContent.trim() || !el || el.closest("svg") || el.closest("progress")) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === "hidden" || cs.display === "none") continue;
    const fg = rgb(cs.color), b = bg(el);
    const l1 = lum(fg), l2 = lum(b), ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(cs.fontSize), large = size >= 24 || (size >= 18.66 && parseInt(cs.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) out.push("contrast " + ratio.toFixed(2) + " of " + el.tagName + " " + JSON.stringify(t.textContent.trim().slice(0, 40)));
  }
  document.querySelectorAll("input, select, textarea, progress").forEach(e => {
    if (e.type === "hidden") return;
    if (!((e.labels && e.labels.length) || e.getAttribute("aria-label") || e.getAttribute("aria-labelledby"))) out.push("no label: " + e.outerHTML.slice(0, 80));
  });
  document.querySelectorAll("svg").forEach(e => { if (!e.getAttribute("aria-labelledby") && !e.getAttribute("aria-label")) out.push("a graphic without a name"); });
  document.querySelectorAll("a, button").forEach(e => { if (!e.textContent.trim() && !e.getAttribute("aria-label")) out.push("a " + e.tagName + " without a name"); });
  if (!document.documentElement.lang) out.push("no lang on html");
  if (!document.querySelector("h1")) out.push("no h1");
  return out;
})()`

// accessible runs a11yCheck on the page and reports its problems.
func accessible(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](a11yCheck))
	must(t, err)
	for _, p := range problems {
		t.Errorf("%s: accessibility: %s", what, p)
	}
}

// screenshot keeps a full-page screenshot among the test's artefacts
// (go test -artifacts keeps them under -outputdir; make unit puts them in
// bin/artefacts).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(t.ArtifactDir(), name), png, 0o644))
}

// TestBoardInBrowser loads the board of a keyless `specd serve --transport
// http` in chromium, opens a spec, completes a task through MCP from
// another client and sees the progress change on the open page without a
// reload, then a task completed by another process (specd call on the same
// store); at 1280 and 390 px nothing scrolls sideways, the pages pass the
// accessibility check, and no request leaves the origin.
func TestBoardInBrowser(t *testing.T) {
	t.Parallel()
	ctx, requests := browser(t)
	s := startShared(t, nil)
	mc := s.client(t, "")
	id := seedBoardSpec(t, mc, "Live board")

	must(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(s.URL+"/"),
		chromedp.WaitVisible(`a.card-title`)))
	title, err := chromedp.Run(ctx, chromedp.Text(`a.card-title`))
	must(t, err)
	if title != "Live board" {
		t.Fatalf("index shows %q", title)
	}
	noHorizontalScroll(t, ctx, "index at 1280 px")
	accessible(t, ctx, "index")
	screenshot(t, ctx, "index-1280.png")

	must(t, chromedp.Do(ctx,
		chromedp.Click(`a.card-title`),
		chromedp.WaitVisible(`#overall .pct`)))
	pct, err := chromedp.Run(ctx, chromedp.Text(`#overall .pct`))
	must(t, err)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[int](`window.noReloadMarker = 42`))
	must(t, err)
	// The stream is open (its subscriptions hold the spec's version) once
	// the page says Live.
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live-status").textContent === "Live"`, chromedp.WithPollingTimeout(20*time.Second)))
	must(t, err)
	if pct != "0%" {
		t.Fatalf("spec page progress %q, want 0%%", pct)
	}
	noHorizontalScroll(t, ctx, "spec page at 1280 px")
	accessible(t, ctx, "spec page")
	screenshot(t, ctx, "spec-1280.png")

	if env := call(t, mc, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": "task-1-1", "completion_note": "done"}); env["success"] != true {
		t.Fatalf("complete: %v", env)
	}
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#overall .pct").textContent === "50%"`, chromedp.WithPollingTimeout(20*time.Second)))
	must(t, err)
	marker, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.noReloadMarker || 0`))
	must(t, err)
	if marker != 42 {
		t.Fatal("the page was reloaded (its window state is gone)")
	}
	screenshot(t, ctx, "spec-1280-updated.png")

	// A change by another process on the same store (specd call) reaches
	// the open page as well.
	db := ""
	for i, a := range s.cmd.Args {
		if a == "--db" && i+1 < len(s.cmd.Args) {
			db = s.cmd.Args[i+1]
		}
	}
	code, out, errOut := runPeopleCLI(t, db, nil, "call", "task", `{"action":"complete","spec_id":"`+id+`","task_id":"task-1-2","completion_note":"from another process"}`)
	if code != 0 {
		t.Fatalf("specd call from another process: exit %d\n%s\n%s", code, out, errOut)
	}
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#overall .pct").textContent === "100%"`, chromedp.WithPollingTimeout(20*time.Second)))
	must(t, err)

	must(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	noHorizontalScroll(t, ctx, "spec page at 390 px")
	screenshot(t, ctx, "spec-390.png")
	must(t, chromedp.Do(ctx, chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(`a.card-title`)))
	noHorizontalScroll(t, ctx, "index at 390 px")
	screenshot(t, ctx, "index-390.png")

	origin := s.URL + "/"
	reqs := requests()
	if len(reqs) < 4 {
		t.Fatalf("saw only %d requests: %v", len(reqs), reqs)
	}
	for _, u := range reqs {
		if !strings.HasPrefix(u, origin) {
			t.Errorf("a request left the origin %s: %s", origin, u)
		}
	}
}

// TestBoardKeys: on a keyed server the board without a key shows nothing
// of the plan (pages go to the sign-in form; the parts and the event
// stream answer 401); signing in with an observer key shows it, and the
// cookie is HttpOnly, SameSite=Strict and is not the key; signing out
// elsewhere takes the open page to the sign-in form (its stream ends).
func TestBoardKeys(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"viewer:observer", "dev:maintainer"})
	id := seedBoardSpec(t, s.client(t, "dev"), "Secret plan")

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/", "/specs/" + id, "/specs/" + id + "?part=main", "/?part=main", "/events?spec=" + id} {
		resp, err := noRedirect.Get(s.URL + path)
		must(t, err)
		body := make([]byte, 1<<16)
		n, _ := resp.Body.Read(body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a key: %d, want 303 to the sign-in form or 401", path, resp.StatusCode)
		}
		if strings.Contains(string(body[:n]), "Secret plan") || strings.Contains(string(body[:n]), "task-1-1") {
			t.Errorf("GET %s without a key shows the plan: %s", path, body[:n])
		}
	}
	resp, err := http.PostForm(s.URL+"/login", url.Values{"key": {"specd_not-a-key"}})
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("sign-in with a wrong key: %d, want 401", resp.StatusCode)
	}

	ctx, _ := browser(t)
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(boardURL(s, id)),
		chromedp.WaitVisible(`#key`)))
	body, err := chromedp.Run(ctx, chromedp.Text(`body`))
	must(t, err)
	if strings.Contains(body, "Secret plan") {
		t.Fatalf("the sign-in page shows the plan:\n%s", body)
	}
	accessible(t, ctx, "sign-in page")
	must(t, chromedp.Do(ctx,
		chromedp.SendKeys(`#key`, s.Keys["viewer"]),
		chromedp.Submit(`#key`),
		chromedp.WaitVisible(`#overall .pct`)))
	body, err = chromedp.Run(ctx, chromedp.Text(`body`))
	must(t, err)
	if !strings.Contains(body, "Secret plan") || !strings.Contains(body, "Write the handler") {
		t.Fatalf("signed in as an observer, the spec page does not show the plan:\n%s", body)
	}
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{s.URL}})
	must(t, err)
	cookies := res.Cookies
	found := false
	for _, c := range cookies {
		if c.Name != "specd_board" {
			continue
		}
		found = true
		if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || strings.Contains(c.Value, s.Keys["viewer"]) || c.Value == "" {
			t.Errorf("session cookie: httpOnly %v, sameSite %s, carries the key %v", c.HTTPOnly, c.SameSite, strings.Contains(c.Value, s.Keys["viewer"]))
		}
	}
	if !found {
		t.Fatalf("no session cookie among %d cookies", len(cookies))
	}

	// Signing out elsewhere (here a same-origin post the page makes, as
	// another tab's button would) ends the session and so the page's open
	// stream: it says signed-out and the page goes to the sign-in form.
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live-status").textContent === "Live"`, chromedp.WithPollingTimeout(20*time.Second)))
	must(t, err)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`fetch("/logout", {method: "POST", credentials: "same-origin"}), true`))
	must(t, err)
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(`#key`)))
	body, err = chromedp.Run(ctx, chromedp.Text(`body`))
	must(t, err)
	if strings.Contains(body, "Secret plan") {
		t.Fatalf("after sign-out the page still shows the plan:\n%s", body)
	}
}

// boardURL is a spec page's address.
func boardURL(s *sharedServer, id string) string { return fmt.Sprintf("%s/specs/%s", s.URL, id) }

// TestBoardCommand: specd board listens on loopback, prints its URL on
// stdout and serves the board there; an address off loopback is a usage
// error (exit 2).
func TestBoardCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(specdBinary(t), "board", "--db", filepath.Join(dir, "specd.db"))
	cmd.Env = append(os.Environ(), "SPECD_WORKSPACE="+dir)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	must(t, err)
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "specd board: ")
	if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("specd board printed %q", line)
	}
	resp, err := http.Get(u)
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<h1>Specs</h1>") {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, body)
	}
	off := exec.Command(specdBinary(t), "board", "--addr", "0.0.0.0:0", "--db", filepath.Join(dir, "specd.db"))
	if err := off.Run(); off.ProcessState == nil || off.ProcessState.ExitCode() != 2 {
		t.Fatalf("specd board off loopback: %v, want exit 2", err)
	}
}
