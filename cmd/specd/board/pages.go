package board

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/specd/specd/cmd/specd/planview"
	"github.com/specd/specd/core"
)

// page is what a template renders.
type page struct {
	Title   string
	Keyed   bool   // show the sign-out button
	Live    string // the page's event stream URL ("" when not live)
	Next    string // login: where to go after
	Error   string // login: the refusal
	Refusal *planview.Refusal

	Folders []folder       // index
	Spec    *planview.Spec // spec page
	Graph   *graph         // spec page: dependency graph (nil without edges)
	Journal []planview.JournalEntry
	History []planview.Version
}

type folder struct {
	Name  string
	Specs []planview.SpecRow
}

// maxListPages bounds how many pages of specs the index reads.
const maxListPages = 10

func (b *Board) index(w http.ResponseWriter, r *http.Request, v viewer) {
	p := page{Title: "Specs", Keyed: v.keyed}
	rows, fail := listAll(v)
	if fail != nil {
		b.refused(w, r, p, fail.env, fail.err)
		return
	}
	byFolder := map[string][]planview.SpecRow{}
	var ids []string
	for _, s := range rows {
		byFolder[s.Lifecycle] = append(byFolder[s.Lifecycle], s)
		ids = append(ids, s.ID)
	}
	for _, f := range planview.Folders {
		p.Folders = append(p.Folders, folder{Name: f, Specs: byFolder[f]})
	}
	if len(ids) > 0 && len(ids) <= 200 {
		q := url.Values{"spec": ids}
		p.Live = "/events?" + q.Encode()
	}
	b.render(w, "index", p, r.URL.Query().Get("part") == "main")
}

// failure is a read the board could not make: the refusal envelope, or
// the error that kept the call from being made.
type failure struct {
	env core.Envelope
	err error
}

// listAll reads the specs, up to maxListPages pages of 100, or the
// failure of the first page that was not answered.
func listAll(v viewer) ([]planview.SpecRow, *failure) {
	var rows []planview.SpecRow
	cursor := ""
	for i := 0; i < maxListPages; i++ {
		env, l, err := v.reader.List(v.ctx, 100, cursor)
		if err != nil || l == nil {
			return nil, &failure{env, err}
		}
		rows = append(rows, l.Specs...)
		if !l.Page.HasMore {
			break
		}
		cursor = l.Page.Next
	}
	return rows, nil
}

// historyVersions is how many versions the spec page shows with diffs.
const historyVersions = 5

func (b *Board) spec(w http.ResponseWriter, r *http.Request, v viewer) {
	id := r.PathValue("id")
	p := page{Title: id, Keyed: v.keyed}
	env, s, err := v.reader.Show(v.ctx, id)
	if err != nil || s == nil {
		b.refused(w, r, p, env, err)
		return
	}
	p.Title, p.Spec = s.Title, s
	p.Graph = layoutGraph(s)
	if _, j, err := v.reader.Journal(v.ctx, id, 20, ""); err == nil && j != nil {
		p.Journal = j.Entries
	}
	if _, h, err := v.reader.History(v.ctx, id, historyVersions); err == nil {
		p.History = h
	}
	if b.cfg.Subscriptions != nil {
		p.Live = "/events?" + url.Values{"spec": {id}}.Encode()
	}
	b.render(w, "spec", p, r.URL.Query().Get("part") == "main")
}

// refused renders a failure envelope (or a missing tool) as a page.
func (b *Board) refused(w http.ResponseWriter, r *http.Request, p page, env core.Envelope, err error) {
	f := planview.RefusalOf(env)
	status := http.StatusBadRequest
	if err != nil {
		f = planview.Refusal{Code: "UNAVAILABLE", Message: err.Error()}
		status = http.StatusServiceUnavailable
	}
	if s, ok := refusalStatus[f.Code]; ok {
		status = s
	}
	p.Refusal, p.Title = &f, "Not shown"
	w.WriteHeader(status)
	b.render(w, "index", p, r.URL.Query().Get("part") == "main")
}

// refusalStatus is the HTTP status of the refusals that have their own
// (any other refusal is 400, an unreachable tool 503).
var refusalStatus = map[string]int{
	"SPEC_NOT_FOUND":      http.StatusNotFound,
	"NOT_FOUND":           http.StatusNotFound,
	"FORBIDDEN":           http.StatusForbidden,
	"RATE_LIMIT_EXCEEDED": http.StatusTooManyRequests,
}

// render executes a page, or only its main part (the live update's fetch).
func (b *Board) render(w http.ResponseWriter, name string, p page, part bool) {
	var buf bytes.Buffer
	t := b.pages[name]
	var err error
	if part {
		err = t.ExecuteTemplate(&buf, "main", p)
	} else {
		err = t.ExecuteTemplate(&buf, "layout", p)
	}
	if err != nil {
		b.log.Error("board: rendering", "page", name, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

var funcs = template.FuncMap{
	"statusText": func(s string) string { return strings.ReplaceAll(s, "_", " ") },
	"mark": func(s string) string {
		switch s {
		case "completed":
			return "✓"
		case "in_progress":
			return "◐"
		case "blocked":
			return "✗"
		case "failed":
			return "!"
		}
		return "○"
	},
	"title": func(s string) string {
		if s == "" {
			return s
		}
		return strings.ToUpper(s[:1]) + s[1:]
	},
	"when":  func(s string) string { return strings.TrimSuffix(strings.Replace(s, "T", " ", 1), "Z") + " UTC" },
	"join":  func(s []string) string { return strings.Join(s, ", ") },
	"value": func(v any) string { b, _ := json.Marshal(v); return clipText(string(b), 160) },
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// graph is the dependency graph laid out in columns: a node's column is the
// length of the longest chain of prerequisites before it.
type graph struct {
	Width, Height int
	Nodes         []graphNode
	Edges         []graphEdge
	Pairs         []planview.Edge // the same edges, as text
	Cut           int             // edges left out of the picture (too many)
}

type graphNode struct {
	ID, Label, Status string
	X, Y, TX, TY      int
}

type graphEdge struct{ X1, Y1, X2, Y2 int }

// Graph geometry.
const (
	maxGraphNodes = 40
	colWidth      = 190
	boxWidth      = 160
	boxHeight     = 30
	rowHeight     = 44
)

func layoutGraph(s *planview.Spec) *graph {
	edges := s.Edges()
	if len(edges) == 0 {
		return nil
	}
	ids, kept, cut := boundEdges(edges)
	g := &graph{Pairs: edges, Cut: cut}
	g.place(s, ids, columns(ids, kept), kept)
	return g
}

// boundEdges keeps the edges, in order, whose nodes fit in maxGraphNodes:
// ids are the kept edges' nodes in first-seen order, cut counts the edges
// left out.
func boundEdges(edges []planview.Edge) (ids []string, kept []planview.Edge, cut int) {
	in := map[string]bool{}
	for _, e := range edges {
		if len(ids)+newEnds(in, e) > maxGraphNodes {
			cut++
			continue
		}
		for _, id := range []string{e.From, e.To} {
			if !in[id] {
				in[id] = true
				ids = append(ids, id)
			}
		}
		kept = append(kept, e)
	}
	return ids, kept, cut
}

// newEnds is how many distinct nodes e would add to the nodes in.
func newEnds(in map[string]bool, e planview.Edge) int {
	n := 0
	if !in[e.From] {
		n++
	}
	if !in[e.To] && e.To != e.From {
		n++
	}
	return n
}

// columns gives each node the length of the longest chain of
// prerequisites before it, bounded: a cycle stops growing after len(ids)
// rounds.
func columns(ids []string, edges []planview.Edge) map[string]int {
	col := map[string]int{}
	for range ids {
		if !relax(col, edges, len(ids)) {
			break
		}
	}
	return col
}

// relax moves every edge's target to the column after its source's (below
// limit) when it is further left; it reports whether any moved.
func relax(col map[string]int, edges []planview.Edge, limit int) bool {
	moved := false
	for _, e := range edges {
		if c := col[e.From] + 1; col[e.To] < c && c < limit {
			col[e.To] = c
			moved = true
		}
	}
	return moved
}

// place lays out ids (sorted by column, stable) in their columns, one row
// after another, draws the edges between their boxes and sizes the
// picture.
func (g *graph) place(s *planview.Spec, ids []string, col map[string]int, edges []planview.Edge) {
	sort.SliceStable(ids, func(i, j int) bool { return col[ids[i]] < col[ids[j]] })
	rows := map[int]int{}
	pos := map[string]graphNode{}
	maxCol, maxRow := 0, 0
	for _, id := range ids {
		c := col[id]
		n := graphNode{ID: id, Label: clipText(id, 20), X: 10 + c*colWidth, Y: 10 + rows[c]*rowHeight}
		if node := s.Nodes[id]; node != nil {
			n.Status = node.Status
		}
		n.TX, n.TY = n.X+10, n.Y+20
		pos[id] = n
		g.Nodes = append(g.Nodes, n)
		maxCol, maxRow = max(maxCol, c), max(maxRow, rows[c])
		rows[c]++
	}
	for _, e := range edges {
		a, z := pos[e.From], pos[e.To]
		g.Edges = append(g.Edges, graphEdge{X1: a.X + boxWidth, Y1: a.Y + boxHeight/2, X2: z.X, Y2: z.Y + boxHeight/2})
	}
	g.Width = 20 + maxCol*colWidth + boxWidth
	g.Height = 20 + maxRow*rowHeight + boxHeight
}

// String is the graph's accessible summary.
func (g *graph) String() string {
	return fmt.Sprintf("%d dependencies between %d tasks", len(g.Pairs), len(g.Nodes))
}
