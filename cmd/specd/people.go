package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/lipgloss/tree"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/specd/specd/cmd/specd/planview"
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/tools"
)

// The person commands (`specd spec list`, `specd spec show ID`, `specd task
// next ID`, `specd journal ID`) read through planview, that is through the
// same tool dispatch as `specd call` and the MCP server, and render the
// envelope's data for a person: tables, trees, progress bars. --json prints
// the envelope instead, exactly as `specd call` would. Exit status: 0 ok,
// 1 refused (the error, its remediation and the recovery's call go to
// stderr), 2 usage. Colour only when stdout is a terminal and NO_COLOR is
// unset; logs go to stderr at warn unless --log-level says otherwise.

const personUsage = `usage:
  specd spec list [--limit N] [--cursor C] [--json] [flags]
  specd spec show SPEC_ID [--json] [flags]
  specd task next SPEC_ID [--json] [flags]
  specd journal SPEC_ID [--limit N] [--cursor C] [--json] [flags]
`

// personCommand runs a person command and reports whether args named one.
func personCommand(name string, args []string, stdout, stderr io.Writer) (int, bool) {
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	switch {
	case name == "spec" && sub == "list":
		return personRun("spec list", args[1:], 0, true, stdout, stderr, specListView), true
	case name == "spec" && sub == "show":
		return personRun("spec show", args[1:], 1, false, stdout, stderr, specShowView), true
	case name == "task" && sub == "next":
		return personRun("task next", args[1:], 1, false, stdout, stderr, taskNextView), true
	case name == "journal":
		return personRun("journal", args, 1, true, stdout, stderr, journalView), true
	case name == "spec" || name == "task":
		fmt.Fprint(stderr, personUsage)
		return 2, true
	}
	return 0, false
}

// personArgs are a person command's own arguments.
type personArgs struct {
	pos    []string // positional arguments (they come first)
	json   bool
	limit  int
	cursor string
	rest   []string // the settings' flags, for parseConfig
}

// splitPersonArgs takes the leading positional arguments and the command's
// own flags (--json, and with paged --limit and --cursor) out of args.
func splitPersonArgs(args []string, paged bool) (personArgs, error) {
	var p personArgs
	i := 0
	for ; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
		p.pos = append(p.pos, args[i])
	}
	for ; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			p.rest = append(p.rest, a)
			continue
		}
		switch {
		case name == "json":
			v := true
			if hasVal {
				b, err := parseBool(val)
				if err != nil {
					return p, fmt.Errorf("--json=%q: %v", val, err)
				}
				v = b
			}
			p.json = v
		case paged && (name == "limit" || name == "cursor"):
			if !hasVal {
				if i+1 >= len(args) {
					return p, fmt.Errorf("--%s needs a value", name)
				}
				i++
				val = args[i]
			}
			if name == "cursor" {
				p.cursor = val
				continue
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 1000 {
				return p, fmt.Errorf("--limit=%q: must be a whole number between 1 and 1000", val)
			}
			p.limit = n
		default:
			p.rest = append(p.rest, a)
		}
	}
	return p, nil
}

// personView runs one command: it makes its calls through r, writes the
// person's view on out and returns the envelope (printed instead with
// --json; a refusal when not Success, and then out is not used).
type personView func(ctx context.Context, r *planview.Reader, p personArgs, th theme, out io.Writer) (core.Envelope, error)

// personRun parses, opens the store, reads through the dispatch and
// renders. npos is the number of positional arguments the command takes.
func personRun(name string, args []string, npos int, paged bool, stdout, stderr io.Writer, view personView) int {
	p, err := splitPersonArgs(args, paged)
	if err == nil && len(p.pos) != npos {
		err = fmt.Errorf("want %d argument(s), got %d", npos, len(p.pos))
	}
	if err != nil {
		fmt.Fprintf(stderr, "specd %s: %v\n%s", name, err, personUsage)
		return 2
	}
	c, extra, err := parseConfig(name, p.rest, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, personUsage)
			return 0
		}
		fmt.Fprintln(stderr, "specd:", err)
		return 2
	}
	if len(extra) > 0 {
		fmt.Fprintf(stderr, "specd %s: unexpected %q\n%s", name, extra[0], personUsage)
		return 2
	}
	quietOneShot(c)
	logger := newLogger(c, stderr)
	st, deps, err := build(c, logger, []string{"cli"})
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer st.Close()
	defer closeFlags(deps)
	r := &planview.Reader{Registry: tools.New(deps), Runtime: deps.Runtime,
		Session: mcptool.Session{ID: "cli", ClientName: "specd-cli"}}
	th := newTheme(stdout)
	var buf strings.Builder
	env, err := view(context.Background(), r, p, th, &buf)
	if err != nil {
		fmt.Fprintf(stderr, "specd %s: %v\n", name, err)
		return 1
	}
	switch {
	case p.json:
		printEnvelope(stdout, env)
	case env.Success:
		_, _ = io.WriteString(stdout, buf.String())
	}
	if !env.Success {
		if !p.json {
			printRefusal(stderr, name, planview.RefusalOf(env))
		}
		return 1
	}
	return 0
}

// quietOneShot lowers the default log level of one-shot commands (call and
// the person commands) to warn: a person reads their output, not the
// per-call info line. --log-level and SPECD_LOG_LEVEL still decide.
func quietOneShot(c *config) {
	if c.Sources["log-level"] == "default" {
		c.LogLevel = slog.LevelWarn
	}
}

// printEnvelope writes env as `specd call` does.
func printEnvelope(w io.Writer, env core.Envelope) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(env)
}

// printRefusal writes a refusal for a person: the code and message, the
// remediation and the recovery's call, runnable as given.
func printRefusal(w io.Writer, name string, f planview.Refusal) {
	fmt.Fprintf(w, "specd %s: %s: %s\n", name, f.Code, f.Message)
	if f.Remediation != "" {
		fmt.Fprintln(w, f.Remediation)
	}
	if call := f.SuggestedCall(); call != "" {
		fmt.Fprintln(w, "next:", call)
	}
}

// theme is the person commands' styles; without colour every style renders
// plain text.
type theme struct {
	colour                         bool
	bold, dim, ok, run, bad, title lipgloss.Style
}

// colourWanted: stdout is a terminal, NO_COLOR is unset (any value turns
// colour off, see no-color.org) and TERM is not "dumb".
func colourWanted(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// newTheme makes the styles for w. The renderer's profile is set here, not
// detected by lipgloss, so the decision is colourWanted's alone; it is the
// process's default renderer too (tables and trees style their borders
// with it).
func newTheme(w io.Writer) theme {
	r := lipgloss.NewRenderer(w)
	colour := colourWanted(w)
	if colour {
		r.SetColorProfile(termenv.ANSI)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	lipgloss.SetDefaultRenderer(r)
	s := r.NewStyle
	return theme{colour: colour,
		bold:  s().Bold(true),
		dim:   s().Foreground(lipgloss.Color("8")),
		ok:    s().Foreground(lipgloss.Color("2")),
		run:   s().Foreground(lipgloss.Color("3")),
		bad:   s().Foreground(lipgloss.Color("1")).Bold(true),
		title: s().Bold(true).Foreground(lipgloss.Color("6")),
	}
}

// mark is a node status's mark, styled.
func (th theme) mark(status string) string {
	switch status {
	case "completed":
		return th.ok.Render("✓")
	case "in_progress":
		return th.run.Render("◐")
	case "blocked":
		return th.bad.Render("✗")
	case "failed":
		return th.bad.Render("!")
	case "archived":
		return th.dim.Render("▪")
	}
	return "○"
}

// bar is a progress bar of ten cells and the percentage, e.g. "█████░░░░░  50%".
func (th theme) bar(pct int) string {
	full := pct / 10
	return th.ok.Render(strings.Repeat("█", full)) + th.dim.Render(strings.Repeat("░", 10-full)) + fmt.Sprintf(" %3d%%", pct)
}

// clip shortens s to n characters with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func specListView(ctx context.Context, r *planview.Reader, p personArgs, th theme, out io.Writer) (core.Envelope, error) {
	env, l, err := r.List(ctx, p.limit, p.cursor)
	if err != nil || l == nil {
		return env, err
	}
	if len(l.Specs) == 0 {
		fmt.Fprintln(out, "No specs yet. Create one with:")
		fmt.Fprintln(out, `  specd call authoring '{"action":"spec-create","name":"My first spec"}'`)
		return env, nil
	}
	t := table.New().Border(lipgloss.NormalBorder()).BorderStyle(th.dim).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).BorderColumn(false).
		Headers("ID", "TITLE", "FOLDER", "PROGRESS", "PHASE").
		StyleFunc(func(row, col int) lipgloss.Style {
			s := lipgloss.NewStyle().PaddingRight(2)
			if row == table.HeaderRow {
				return s.Inherit(th.bold)
			}
			return s
		})
	for _, s := range l.Specs {
		t.Row(s.ID, clip(s.Title, 40), s.Lifecycle, th.bar(s.Percent()), s.CurrentPhase)
	}
	for _, line := range strings.Split(t.Render(), "\n") {
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	}
	if l.Page.HasMore {
		fmt.Fprintf(out, "more: specd spec list --cursor %s\n", l.Page.Next)
	}
	return env, nil
}

// nodeLine is one node of the tree: mark, id, title, and who holds it or
// what blocks it.
func (th theme) nodeLine(n *planview.Node) string {
	line := th.mark(n.Status) + " " + th.dim.Render(n.ID) + " " + n.Title
	if n.Type == "phase" {
		line = th.mark(n.Status) + " " + th.bold.Render(n.ID+" "+n.Title) + "  " + th.bar(n.Percent()) +
			th.dim.Render(fmt.Sprintf(" (%d/%d)", n.Completed, n.Total))
	}
	switch {
	case n.Status == "in_progress" && n.HeldBy != "":
		line += th.run.Render(" — held by " + n.HeldBy)
	case n.Status == "blocked":
		line += th.bad.Render(" — blocked: " + n.Blocker)
	case n.Status != "completed" && len(n.BlockedBy) > 0:
		line += th.dim.Render(" — waits for " + strings.Join(n.BlockedBy, ", "))
	}
	return line
}

func (th theme) subtree(n *planview.Node) *tree.Tree {
	t := tree.Root(th.nodeLine(n)).EnumeratorStyle(th.dim.PaddingRight(1))
	for _, c := range n.Children {
		if len(c.Children) == 0 {
			t.Child(th.nodeLine(c))
			continue
		}
		t.Child(th.subtree(c))
	}
	return t
}

func specShowView(ctx context.Context, r *planview.Reader, p personArgs, th theme, out io.Writer) (core.Envelope, error) {
	env, s, err := r.Show(ctx, p.pos[0])
	if err != nil || s == nil {
		return env, err
	}
	fmt.Fprintln(out, th.title.Render(s.Title))
	fmt.Fprintf(out, "%s · %s · %s · version %d\n", s.ID, s.Lifecycle, strings.ReplaceAll(s.Status, "_", " "), s.Version)
	fmt.Fprintf(out, "%s  %d of %d tasks", th.bar(s.Percent()), s.Completed, s.Total)
	if s.CurrentPhase != "" {
		fmt.Fprintf(out, " · current phase %s", s.CurrentPhase)
	}
	fmt.Fprintln(out)
	if s.Fidelity != "" {
		fmt.Fprintf(out, "%s\n", th.run.Render("(shortened to fit the answer budget: "+s.Fidelity+"; see specd call spec get)"))
	}
	if len(s.Phases) == 0 {
		fmt.Fprintln(out, "\nNo phases yet.")
	}
	for _, ph := range s.Phases {
		fmt.Fprintln(out)
		fmt.Fprintln(out, th.subtree(ph).String())
	}
	if held := s.InProgress(); len(held) > 0 {
		fmt.Fprintln(out, "\n"+th.bold.Render("In progress"))
		for _, n := range held {
			who := n.HeldBy
			if who == "" {
				who = "unknown"
			}
			fmt.Fprintf(out, "  %s %s %s — %s", th.mark(n.Status), n.ID, n.Title, who)
			if n.StartedAt != "" {
				fmt.Fprintf(out, " since %s", n.StartedAt)
			}
			fmt.Fprintln(out)
		}
	}
	if bl := s.Blocked(); len(bl) > 0 {
		fmt.Fprintln(out, "\n"+th.bold.Render("Blockers"))
		for _, n := range bl {
			why := n.Blocker
			if len(n.BlockedBy) > 0 {
				why = strings.TrimPrefix(why+"; waits for "+strings.Join(n.BlockedBy, ", "), "; ")
			}
			fmt.Fprintf(out, "  %s %s %s — %s\n", th.mark(n.Status), n.ID, n.Title, why)
		}
	}
	return env, nil
}

func taskNextView(ctx context.Context, r *planview.Reader, p personArgs, th theme, out io.Writer) (core.Envelope, error) {
	env, n, err := r.NextTask(ctx, p.pos[0])
	if err != nil || n == nil {
		return env, err
	}
	box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("6")).Padding(0, 1)
	if n.Found {
		start, _ := json.Marshal(map[string]any{"action": "start", "spec_id": n.SpecID, "task_id": n.TaskID})
		body := th.bold.Render("Next task") + "\n" +
			th.mark(n.Status) + " " + n.TaskID + " " + n.Title + "\n" +
			th.dim.Render(fmt.Sprintf("%s in %s of %s", n.Type, n.PhaseID, n.SpecID))
		fmt.Fprintln(out, box.Render(body))
		fmt.Fprintf(out, "start it: specd call task '%s'\n", start)
		return env, nil
	}
	if n.SpecComplete {
		fmt.Fprintf(out, "%s %s is complete: nothing left to do.\n", th.ok.Render("✓"), n.SpecID)
		return env, nil
	}
	fmt.Fprintf(out, "Nothing can start now in %s.\n", n.SpecID)
	for _, b := range n.Blocked {
		why := b.Reason
		if len(b.WaitingOn) > 0 {
			why = strings.TrimPrefix(why+"; waits for "+strings.Join(b.WaitingOn, ", "), "; ")
		}
		fmt.Fprintf(out, "  %s %s — %s\n", th.mark("blocked"), b.TaskID, why)
	}
	for _, ip := range n.InProgress {
		fmt.Fprintf(out, "  %s %s %s — held by %s\n", th.mark("in_progress"), ip.TaskID, ip.Title, ip.StartedBy)
	}
	if n.Hint != "" {
		fmt.Fprintln(out, n.Hint)
	}
	return env, nil
}

func journalView(ctx context.Context, r *planview.Reader, p personArgs, th theme, out io.Writer) (core.Envelope, error) {
	limit := p.limit
	if limit == 0 {
		limit = 20
	}
	env, j, err := r.Journal(ctx, p.pos[0], limit, p.cursor)
	if err != nil || j == nil {
		return env, err
	}
	if len(j.Entries) == 0 {
		fmt.Fprintln(out, "No journal entries.")
	}
	for i, e := range j.Entries {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s  %s  %s  %s\n", th.dim.Render(fmt.Sprintf("#%d", e.Seq)), strings.Replace(e.Timestamp, "T", " ", 1), th.run.Render(e.Type), th.bold.Render(e.Title))
		by := "by " + e.Author
		if e.TaskID != "" {
			by += " · " + e.TaskID
		}
		fmt.Fprintln(out, "    "+th.dim.Render(by))
		for _, line := range strings.Split(strings.TrimSpace(e.Content), "\n") {
			if line != "" {
				fmt.Fprintln(out, "    "+line)
			}
		}
	}
	if j.Page.HasMore {
		fmt.Fprintf(out, "\nmore: specd journal %s --cursor %s\n", j.SpecID, j.Page.Next)
	}
	return env, nil
}
