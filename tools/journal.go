package tools

import (
	"context"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/research"
	"github.com/specd/specd/specs"
)

const journalDescription = `Use this when you record or read why things happened: add a decision, deviation, blocker or note (with task_id it also clears that task's needs_journaling), list entries newest first (filter by task_id or entry_type, paged by sequence), or list completed tasks still waiting for a journal entry. ` +
	`Use task instead to change a task's status (transitions journal themselves), and spec history to see what changed in the spec. ` +
	`Typical composition: task complete → journal list-unjournaled → journal add(task_id).`

func journalTool(d *Deps) *mcptool.Tool {
	return &mcptool.Tool{
		Name:        "journal",
		Title:       "specd journal",
		Description: journalDescription,
		Params: []mcptool.Param{
			pSpecID, pDryRun, pExpectedVersion, pCursor, pLimit(core.PageJournal),
			{Name: "title", Type: mcptool.String, MaxLength: 500, MinLength: 1, Description: "Entry title."},
			{Name: "content", Type: mcptool.String, Description: "Entry body."},
			{Name: "entry_type", Type: mcptool.String, Enum: specs.JournalEntryTypes, Synonyms: specs.JournalEntryTypeSynonyms, Description: "decision, deviation, blocker, note or status_change (add defaults to note)."},
			idParam("task_id", "The task the entry is about."),
		},
		Actions: []mcptool.Action{
			{
				Name: "add", Summary: "Appends an entry; with task_id the task's needs_journaling is cleared.",
				Required: []string{"spec_id", "title"}, Optional: append([]string{"content", "entry_type", "task_id"}, mutationArgs...),
				SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast, Answer: JournalAddAnswer{}, Typed: mcptool.Typed(d.journalAdd),
			},
			{
				Name: "list", Summary: "Entries newest first, optionally for one task or entry type, paged by sequence.",
				Required: []string{"spec_id"}, Optional: []string{"task_id", "entry_type", "cursor", "limit"},
				SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast, Answer: JournalListAnswer{}, Typed: mcptool.Typed(d.journalList),
			},
			{
				Name: "list-unjournaled", Summary: "Completed tasks that still need a journal entry, in execution order; limit pages them (default all).",
				Required: []string{"spec_id"}, Optional: []string{"cursor", "limit"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
				Answer: UnjournaledAnswer{}, Typed: mcptool.Typed(d.journalListUnjournaled),
			},
		},
	}
}

// JournalAddAnswer is journal add's answer: the entry as stored.
type JournalAddAnswer struct {
	Mutation
	Entry specs.JournalEntry `json:"entry"`
}

func (d *Deps) journalAdd(ctx context.Context, r *mcptool.Request, a journalAddArgs) mcptool.Result {
	e := specs.JournalEntry{EntryType: a.EntryType, Title: a.Title, Content: a.Content, Author: author(r), TaskID: a.TaskID}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, j specs.JournalWriter) (JournalAddAnswer, error) {
		e, err := specs.AddJournalEntry(sp, j, e)
		return JournalAddAnswer{Entry: e}, err
	})
}

// JournalListAnswer is journal list's answer: one page, newest first.
type JournalListAnswer struct {
	SpecID  string               `json:"spec_id"`
	Entries []specs.JournalEntry `json:"entries"`
	Count   int                  `json:"count"`
}

// journalList pages the journal by sequence (the cursor is the last seq
// listed); over the token budget the page's oldest entries go first.
func (d *Deps) journalList(ctx context.Context, r *mcptool.Request, args journalListArgs) mcptool.Result {
	specID, taskID, et := args.SpecID, args.TaskID, args.EntryType
	p, err := mcptool.OpenPage(r, "journal", "list", specID, core.PageJournal, toJournalList.Args(journalListArgs{specArgs: specOf(specID)}), taskID, et)
	if err != nil {
		return mcptool.Fail(err)
	}
	before, err := p.AfterNumber()
	if err != nil {
		return mcptool.Fail(err)
	}
	var more bool
	var version int64
	res := readTo(ctx, d, specID, func(sp *specs.Spec, j specs.JournalReader) (JournalListAnswer, error) {
		version = sp.Header.Version
		entries, m, err := specs.ReadJournal(j, taskID, et, before, p.Limit)
		more = m
		return JournalListAnswer{SpecID: specID, Entries: entries, Count: len(entries)}, err
	})
	if res.Err != nil {
		return res
	}
	a := res.Data.(JournalListAnswer)
	next := ""
	if len(a.Entries) > 0 {
		next = p.Cursor(strconv.FormatUint(a.Entries[len(a.Entries)-1].Seq, 10), more)
	}
	res.Meta = append(res.Meta, p.Meta(next))
	res.Degrade = journalPage(a.Entries, specID, version, p.Limit, func(seq uint64) string { return p.Cursor(strconv.FormatUint(seq, 10), true) }, r.Args,
		func(k int) any { b := a; b.Entries, b.Count = a.Entries[:k], k; return b })
	return res
}

// UnjournaledAnswer is journal list-unjournaled's answer.
type UnjournaledAnswer struct {
	SpecID string                  `json:"spec_id"`
	Tasks  []specs.UnjournaledTask `json:"tasks"`
	Count  int                     `json:"count"`
}

// journalListUnjournaled pages the waiting tasks by their place in the
// execution order (specs.UnjournaledAfter; the cursor is the last task
// listed). Without limit or cursor it answers them all, as before paging.
func (d *Deps) journalListUnjournaled(ctx context.Context, r *mcptool.Request, args journalUnjournaledArgs) mcptool.Result {
	specID := args.SpecID
	restart := toJournalListUnjournaled.Args(journalUnjournaledArgs{specArgs: specOf(specID)})
	p, err := mcptool.OpenPage(r, "journal", "list-unjournaled", specID, core.PageLimits{}, restart)
	if err != nil {
		return mcptool.Fail(err)
	}
	var page specs.UnjournaledPage
	var version int64
	res := readTo(ctx, d, specID, func(sp *specs.Spec, _ specs.JournalReader) (UnjournaledAnswer, error) {
		var err error
		page, err = specs.UnjournaledAfter(sp, p.After, p.Limit)
		version = sp.Header.Version
		return UnjournaledAnswer{SpecID: specID, Tasks: page.Tasks, Count: len(page.Tasks)}, err
	})
	if res.Err != nil {
		if e := core.AsError(res.Err); e.Code == errcode.InvalidCursor {
			e.WithRecovery("journal", restart, nil)
		}
		return res
	}
	a, nodes := res.Data.(UnjournaledAnswer), page.Nodes
	cursor := func(kept int) string { return p.Cursor(nodes[kept-1].ID, true) }
	if args.paged() {
		next := ""
		if page.More {
			next = cursor(len(nodes))
		}
		res.Meta = append(res.Meta, core.WithPagination(next, p.Limit, &page.Total))
	}
	// Over the token budget, the last tasks in execution order go
	// (archived as the node at this version); the cursor continues after
	// the last one kept.
	res.Degrade = &mcptool.ListAnswer[specs.UnjournaledTask]{Items: a.Tasks, PageSize: max(p.Limit, len(a.Tasks)),
		Answer: func(k int) any { b := a; b.Tasks, b.Count = a.Tasks[:k], k; return b },
		ID:     func(i int) string { return "node:" + nodes[i].ID },
		Archive: func(i int) []mcptool.ArchiveRef {
			return []mcptool.ArchiveRef{{ID: research.SpecArchiveID(specID, version, "node:"+nodes[i].ID), Content: nodes[i]}}
		},
		Next:     cursor,
		Continue: mcptool.ContinueWith("journal", restart, r.Args, "limit")}
	return res
}

// journalPage is how a journal page shrinks over the token budget: the
// oldest entries of the page (its end: pages are newest first) go first,
// each named journal:<seq> and archived as spec:<id>@<version>/journal:<seq>
// (research archive-get serves the entry from the store); the cursor
// continues after the last entry kept.
func journalPage(entries []specs.JournalEntry, specID string, version int64, limit int, cursor func(seq uint64) string, args mcptool.Args, answer func(kept int) any) *mcptool.ListAnswer[specs.JournalEntry] {
	return &mcptool.ListAnswer[specs.JournalEntry]{
		Items: entries, PageSize: limit, Answer: answer,
		ID: func(i int) string { return "journal:" + strconv.FormatUint(entries[i].Seq, 10) },
		Archive: func(i int) []mcptool.ArchiveRef {
			return []mcptool.ArchiveRef{{ID: research.SpecArchiveID(specID, version, "journal:"+strconv.FormatUint(entries[i].Seq, 10)), Content: entries[i]}}
		},
		Next:     func(kept int) string { return cursor(entries[kept-1].Seq) },
		Continue: mcptool.ContinueWith("journal", toJournalList.Args(journalListArgs{specArgs: specOf(specID)}), args, "task_id", "entry_type", "limit"),
	}
}

// The journal tool's typed arguments (mcptool.Typed).
type (
	journalAddArgs struct {
		writeArgs
		Title     string `arg:"title,required"`
		Content   string `arg:"content"`
		EntryType string `arg:"entry_type"`
		TaskID    string `arg:"task_id"`
	}
	journalListArgs struct {
		specArgs
		pageArgs
		TaskID    string `arg:"task_id"`
		EntryType string `arg:"entry_type"`
	}
	journalUnjournaledArgs struct {
		specArgs
		pageArgs
	}
)
