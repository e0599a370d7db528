// Package errlog is specd's record of the error answers it gave: one Record
// per failed call (tool, action, code, type, message, when), kept bounded in
// the store (Store; the newest MaxRecords), and the summaries the
// error tool answers with (Stats, Patterns). It imports only the standard
// library.
package errlog

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// MaxRecords is how many records the store keeps; older ones are dropped
// as new ones arrive.
const MaxRecords = 1000

// Store is the store's record of the error answers specd gave (bounded to
// MaxRecords, oldest dropped first); every method is one transaction
// (specs/specstore implements it over the store port).
type Store interface {
	// ErrorRecord appends recs (each gets its id and seq).
	ErrorRecord(ctx context.Context, recs ...Record) error
	// Errors returns the records newest first that pass f, at most limit
	// (0: all), below the id before ("" = from the newest), and whether
	// older matching records remain.
	Errors(ctx context.Context, f Filter, before string, limit int) ([]Record, bool, error)
	// ErrorGet reads one record by id, or by the request_id of its call
	// (the newest such record). NOT_FOUND when it is not (or no longer)
	// kept.
	ErrorGet(ctx context.Context, id string) (Record, error)
	// ErrorCleanup deletes the records older than before (RFC 3339; ""
	// deletes every record), or with dryRun only counts them.
	ErrorCleanup(ctx context.Context, before string, dryRun bool) (int, error)
}

// Record is one error answer specd gave.
type Record struct {
	ID        string `json:"id"` // "err-<seq>", in the order they were recorded
	Seq       uint64 `json:"-"`
	At        string `json:"at"` // RFC 3339, UTC
	RequestID string `json:"request_id"`
	Tool      string `json:"tool"`
	Action    string `json:"action,omitempty"`
	Code      string `json:"error_code"`
	Type      string `json:"error_type"`
	Message   string `json:"message"`
}

// Filter selects records; empty fields match everything.
type Filter struct {
	Tool, Action, Code, Type string
	Since                    string // RFC 3339: only records at or after it
}

// Match reports whether rec passes f.
func (f Filter) Match(rec Record) bool {
	for _, field := range [...]struct{ want, got string }{
		{f.Tool, rec.Tool}, {f.Action, rec.Action}, {f.Code, rec.Code}, {f.Type, rec.Type},
	} {
		if field.want != "" && field.got != field.want {
			return false
		}
	}
	return f.Since == "" || rec.At >= f.Since
}

// Count is one group of a summary.
type Count struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
}

// Stats is error stats' answer: totals by code, type and tool, largest
// first (ties by key), with the oldest and newest record's time.
type Stats struct {
	Total  int     `json:"total"`
	ByCode []Count `json:"by_code"`
	ByType []Count `json:"by_type"`
	ByTool []Count `json:"by_tool"`
	Oldest string  `json:"oldest,omitempty"`
	Newest string  `json:"newest,omitempty"`
}

// Summarize counts recs (in any order).
func Summarize(recs []Record) Stats {
	st := Stats{Total: len(recs), ByCode: []Count{}, ByType: []Count{}, ByTool: []Count{}}
	code, typ, tool := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range recs {
		code[r.Code]++
		typ[r.Type]++
		tool[r.Tool]++
		if st.Oldest == "" || r.At < st.Oldest {
			st.Oldest = r.At
		}
		if r.At > st.Newest {
			st.Newest = r.At
		}
	}
	st.ByCode, st.ByType, st.ByTool = ranked(code), ranked(typ), ranked(tool)
	return st
}

// Pattern is an error that recurs: the same code from the same tool and
// action, with how often, when first and last, and one message seen.
type Pattern struct {
	Tool    string `json:"tool"`
	Action  string `json:"action,omitempty"`
	Code    string `json:"error_code"`
	Count   int    `json:"count"`
	First   string `json:"first"`
	Last    string `json:"last"`
	Message string `json:"example_message"`
}

// Patterns groups recs by (tool, action, code) and returns the groups seen
// at least min times, most frequent first (ties: newest last occurrence
// first), at most limit of them.
func Patterns(recs []Record, min, limit int) []Pattern {
	byKey := map[string]*Pattern{}
	for _, r := range recs {
		k := r.Tool + "\x00" + r.Action + "\x00" + r.Code
		p := byKey[k]
		if p == nil {
			p = &Pattern{Tool: r.Tool, Action: r.Action, Code: r.Code, First: r.At, Last: r.At}
			byKey[k] = p
		}
		p.add(r)
	}
	out := []Pattern{}
	for _, p := range byKey {
		if p.Count >= min {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b Pattern) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(b.Last, a.Last), strings.Compare(a.name(), b.name()))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// add counts r, one more occurrence of p, keeping its first time and its
// last time with that record's message (the later of equal times).
func (p *Pattern) add(r Record) {
	p.Count++
	if r.At < p.First {
		p.First = r.At
	}
	if r.At >= p.Last {
		p.Last, p.Message = r.At, r.Message
	}
}

// name is "tool action code", the last tie-break of Patterns' order.
func (p Pattern) name() string {
	return strings.Join([]string{p.Tool, p.Action, p.Code}, " ")
}

// ranked lists m's counts largest first, ties by key.
func ranked(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, n := range m {
		out = append(out, Count{Key: k, Count: n})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Key, b.Key))
	})
	return out
}
