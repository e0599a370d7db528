package main

import (
	"cmp"
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

// personCommand is one person command: the number of positional arguments
// it takes, whether it pages (--limit, --cursor) and its view.
type personCommand struct {
	npos  int
	paged bool
	view  personView
}

// personCommands are the person commands by their full name.
var personCommands = map[string]personCommand{
	"spec list": {npos: 0, paged: true, view: specListView},
	"spec show": {npos: 1, view: specShowView},
	"task next": {npos: 1, view: taskNextView},
	"journal":   {npos: 1, paged: true, view: journalView},
}

// personGroupCmd runs the person commands of group ("spec" or "task"),
// named by their first argument; a missing or unknown one is a usage error
// (exit 2).
func personGroupCmd(group string) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		if len(args) > 0 {
			if pc, ok := personCommands[group+" "+args[0]]; ok {
				return pc.run(group+" "+args[0], args[1:], stdout, stderr)
			}
		}
		fmt.Fprint(stderr, personUsage)
		return 2
	}
}

// journalCmd is `specd journal SPEC_ID`.
func journalCmd(args []string, stdout, stderr io.Writer) int {
	return personCommands["journal"].run("journal", args, stdout, stderr)
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
	p.pos, args = leadingPositionals(args)
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		f, own := ownPersonFlag(args[i], name, paged)
		if !own {
			p.rest = append(p.rest, args[i])
			continue
		}
		if f.value && !hasVal {
			if i+1 >= len(args) {
				return p, fmt.Errorf("--%s needs a value", name)
			}
			i++
			val = args[i]
		}
		if err := f.set(&p, val, hasVal); err != nil {
			return p, err
		}
	}
	return p, nil
}

// leadingPositionals splits the arguments before the first flag off args.
func leadingPositionals(args []string) (pos, rest []string) {
	i := 0
	for i < len(args) && !strings.HasPrefix(args[i], "-") {
		i++
	}
	return args[:i:i], args[i:]
}

// personFlag is one of the person commands' own flags.
type personFlag struct {
	paged bool // only the paged commands take it
	value bool // it takes a value: "--name V" or "--name=V"
	// set stores the flag's value in p; hasVal tells a switch given
	// alone ("--json") from one given a value ("--json=false").
	set func(p *personArgs, val string, hasVal bool) error
}

// personFlags are the person commands' own flags by name.
var personFlags = map[string]personFlag{
	"json":   {set: setJSONFlag},
	"limit":  {paged: true, value: true, set: setLimitFlag},
	"cursor": {paged: true, value: true, set: func(p *personArgs, val string, _ bool) error { p.cursor = val; return nil }},
}

// ownPersonFlag reports whether arg, whose name is name, is a flag of the
// person command (paged or not), and which.
func ownPersonFlag(arg, name string, paged bool) (personFlag, bool) {
	f, ok := personFlags[name]
	return f, ok && strings.HasPrefix(arg, "-") && (paged || !f.paged)
}

// setJSONFlag is --json: alone it means true, else its value is a boolean.
func setJSONFlag(p *personArgs, val string, hasVal bool) error {
	if !hasVal {
		p.json = true
		return nil
	}
	b, err := parseBool(val)
	if err != nil {
		return fmt.Errorf("--json=%q: %v", val, err)
	}
	p.json = b
	return nil
}

// setLimitFlag is --limit, a whole number from 1 to 1000.
func setLimitFlag(p *personArgs, val string, _ bool) error {
	n, err := strconv.Atoi(val)
	if err != nil || n < 1 || n > 1000 {
		return fmt.Errorf("--limit=%q: must be a whole number between 1 and 1000", val)
	}
	p.limit = n
	return nil
}

// personView runs one command: it makes its calls through r, writes the
// person's view on out and returns the envelope (printed instead with
// --json; a refusal when not Success, and then out is not used).
type personView func(ctx context.Context, r *planview.Reader, p personArgs, th theme, out io.Writer) (core.Envelope, error)

// run parses args, opens the store, reads through the dispatch and
// renders; name is the command's full name, for messages.
func (pc personCommand) run(name string, args []string, stdout, stderr io.Writer) int {
	p, err := splitPersonArgs(args, pc.paged)
	if err == nil && len(p.pos) != pc.npos {
		err = fmt.Errorf("want %d argument(s), got %d", pc.npos, len(p.pos))
	}
	if err != nil {
		fmt.Fprintf(stderr, "specd %s: %v\n%s", name, err, personUsage)
		return 2
	}
	c, code := personConfig(name, p.rest, stderr)
	if c == nil {
		return code
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
	var view strings.Builder
	env, err := pc.view(context.Background(), r, p, newTheme(stdout), &view)
	if err != nil {
		fmt.Fprintf(stderr, "specd %s: %v\n", name, err)
		return 1
	}
	return printPersonAnswer(stdout, stderr, name, p.json, env, view.String())
}

// personConfig is parseConfig for a person command, which takes no
// arguments beyond its own: it returns the configuration, or nil and the
// exit status (0 after -h, 2 on a usage error; the usage is printed).
func personConfig(name string, args []string, stderr io.Writer) (*config, int) {
	c, extra, err := parseConfig(name, args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, personUsage)
		return nil, 0
	case err != nil:
		fmt.Fprintln(stderr, "specd:", err)
		return nil, 2
	case len(extra) > 0:
		fmt.Fprintf(stderr, "specd %s: unexpected %q\n%s", name, extra[0], personUsage)
		return nil, 2
	}
	return c, 0
}

// printPersonAnswer prints a person command's answer and returns its exit
// status: with --json the envelope (as specd call prints it), else the
// view on success or the refusal on stderr; 1 when the envelope is a
// refusal.
func printPersonAnswer(stdout, stderr io.Writer, name string, asJSON bool, env core.Envelope, view string) int {
	switch {
	case asJSON:
		printJSON(stdout, env)
	case env.Success:
		_, _ = io.WriteString(stdout, view)
	default:
		printRefusal(stderr, name, planview.RefusalOf(env))
	}
	return exitStatus(env)
}

// quietOneShot lowers the default log level of one-shot commands (call and
// the person commands) to warn: a person reads their output, not the
// per-call info line. --log-level and SPECD_LOG_LEVEL still decide.
func quietOneShot(c *config) {
	if c.Sources["log-level"] == "default" {
		c.LogLevel = slog.LevelWarn
	}
}

// printJSON writes v as indented JSON, as `specd call` writes its
// envelope.
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
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
	if l == nil { // a refusal, or err: planview returns a list only with a nil error
		return env, err
	}
	if len(l.Specs) == 0 {
		fmt.Fprintln(out, "No specs yet. Create one with:")
		fmt.Fprintln(out, `  specd call authoring '{"action":"spec-create","name":"My first spec"}'`)
		return env, nil
	}
	th.specTable(out, l.Specs)
	if l.Page.HasMore {
		fmt.Fprintf(out, "more: specd spec list --cursor %s\n", l.Page.Next)
	}
	return env, nil
}

// specTable writes the specs as a table: id, title (clipped to 40
// characters), folder, progress bar and current phase, with a bold header
// and no trailing blanks.
func (th theme) specTable(out io.Writer, specs []planview.SpecRow) {
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
	for _, s := range specs {
		t.Row(s.ID, clip(s.Title, 40), s.Lifecycle, th.bar(s.Percent()), s.CurrentPhase)
	}
	for _, line := range strings.Split(t.Render(), "\n") {
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	}
}

// nodeLine is one node of the tree: mark, id, title, and who holds it or
// what blocks it.
func (th theme) nodeLine(n *planview.Node) string {
	line := th.mark(n.Status) + " " + th.dim.Render(n.ID) + " " + n.Title
	if n.Type == "phase" {
		line = th.mark(n.Status) + " " + th.bold.Render(n.ID+" "+n.Title) + "  " + th.bar(n.Percent()) +
			th.dim.Render(fmt.Sprintf(" (%d/%d)", n.Completed, n.Total))
	}
	return line + th.nodeNote(n)
}

// nodeNote is what a node's line says after its title: who holds it, what
// blocks it or what it waits for; "" when none of these applies.
func (th theme) nodeNote(n *planview.Node) string {
	switch {
	case n.Status == "in_progress" && n.HeldBy != "":
		return th.run.Render(" — held by " + n.HeldBy)
	case n.Status == "blocked":
		return th.bad.Render(" — blocked: " + n.Blocker)
	case n.Status != "completed" && len(n.BlockedBy) > 0:
		return th.dim.Render(" — waits for " + strings.Join(n.BlockedBy, ", "))
	}
	return ""
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
	if s == nil { // a refusal, or err: planview returns a spec only with a nil error
		return env, err
	}
	th.specHeader(out, s)
	if len(s.Phases) == 0 {
		fmt.Fprintln(out, "\nNo phases yet.")
	}
	for _, ph := range s.Phases {
		fmt.Fprintln(out)
		fmt.Fprintln(out, th.subtree(ph).String())
	}
	th.heldList(out, s.InProgress())
	th.blockerList(out, s.Blocked())
	return env, nil
}

// specHeader writes a spec's title; its id, folder, status and version;
// its progress and current phase; and, when the answer was shortened to
// fit the budget, a note saying so.
func (th theme) specHeader(out io.Writer, s *planview.Spec) {
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
}

// heldList writes the "In progress" section: each task in progress, who
// holds it ("unknown" when no one is named) and since when. It writes
// nothing when held is empty.
func (th theme) heldList(out io.Writer, held []*planview.Node) {
	if len(held) == 0 {
		return
	}
	fmt.Fprintln(out, "\n"+th.bold.Render("In progress"))
	for _, n := range held {
		fmt.Fprintf(out, "  %s %s %s — %s", th.mark(n.Status), n.ID, n.Title, cmp.Or(n.HeldBy, "unknown"))
		if n.StartedAt != "" {
			fmt.Fprintf(out, " since %s", n.StartedAt)
		}
		fmt.Fprintln(out)
	}
}

// blockerList writes the "Blockers" section: each blocked task and why it
// cannot start. It writes nothing when blocked is empty.
func (th theme) blockerList(out io.Writer, blocked []*planview.Node) {
	if len(blocked) == 0 {
		return
	}
	fmt.Fprintln(out, "\n"+th.bold.Render("Blockers"))
	for _, n := range blocked {
		fmt.Fprintf(out, "  %s %s %s — %s\n", th.mark(n.Status), n.ID, n.Title, waitReason(n.Blocker, n.BlockedBy))
	}
}

// waitReason is why a task cannot start: reason, then "waits for" the
// tasks it waits on, joined by "; " (no separator when reason is empty).
func waitReason(reason string, waitsFor []string) string {
	if len(waitsFor) == 0 {
		return reason
	}
	return strings.TrimPrefix(reason+"; waits for "+strings.Join(waitsFor, ", "), "; ")
}

func taskNextView(ctx context.Context, r *planview.Reader, p personArgs, th theme, out io.Writer) (core.Envelope, error) {
	env, n, err := r.NextTask(ctx, p.pos[0])
	if n == nil { // a refusal, or err: planview returns an answer only with a nil error
		return env, err
	}
	switch {
	case n.Found:
		th.nextTask(out, n)
	case n.SpecComplete:
		fmt.Fprintf(out, "%s %s is complete: nothing left to do.\n", th.ok.Render("✓"), n.SpecID)
	default:
		th.nothingToStart(out, n)
	}
	return env, nil
}

// nextTask writes the task to start in a box and the call that starts it.
func (th theme) nextTask(out io.Writer, n *planview.Next) {
	box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("6")).Padding(0, 1)
	start, _ := json.Marshal(map[string]any{"action": "start", "spec_id": n.SpecID, "task_id": n.TaskID})
	body := th.bold.Render("Next task") + "\n" +
		th.mark(n.Status) + " " + n.TaskID + " " + n.Title + "\n" +
		th.dim.Render(fmt.Sprintf("%s in %s of %s", n.Type, n.PhaseID, n.SpecID))
	fmt.Fprintln(out, box.Render(body))
	fmt.Fprintf(out, "start it: specd call task '%s'\n", start)
}

// nothingToStart writes why no task of an unfinished spec can start: the
// blocked tasks and why, the tasks in progress and who holds them, and the
// answer's hint.
func (th theme) nothingToStart(out io.Writer, n *planview.Next) {
	fmt.Fprintf(out, "Nothing can start now in %s.\n", n.SpecID)
	for _, b := range n.Blocked {
		fmt.Fprintf(out, "  %s %s — %s\n", th.mark("blocked"), b.TaskID, waitReason(b.Reason, b.WaitingOn))
	}
	for _, ip := range n.InProgress {
		fmt.Fprintf(out, "  %s %s %s — held by %s\n", th.mark("in_progress"), ip.TaskID, ip.Title, ip.StartedBy)
	}
	if n.Hint != "" {
		fmt.Fprintln(out, n.Hint)
	}
}

func journalView(ctx context.Context, r *planview.Reader, p personArgs, th theme, out io.Writer) (core.Envelope, error) {
	env, j, err := r.Journal(ctx, p.pos[0], cmp.Or(p.limit, 20), p.cursor)
	if j == nil { // a refusal, or err: planview returns a page only with a nil error
		return env, err
	}
	if len(j.Entries) == 0 {
		fmt.Fprintln(out, "No journal entries.")
	}
	for i, e := range j.Entries {
		if i > 0 {
			fmt.Fprintln(out)
		}
		th.journalEntry(out, e)
	}
	if j.Page.HasMore {
		fmt.Fprintf(out, "\nmore: specd journal %s --cursor %s\n", j.SpecID, j.Page.Next)
	}
	return env, nil
}

// journalEntry writes one journal entry: sequence, time, type and title;
// author and task; then the content's non-blank lines, indented.
func (th theme) journalEntry(out io.Writer, e planview.JournalEntry) {
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
