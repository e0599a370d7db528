package tools

import (
	"context"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

const journalDescription = `Use this when you record or read why things happened: add a decision, deviation, blocker or note (with task_id it also clears that task's needs_journaling), list entries newest first (filter by task_id or entry_type, paged by sequence), or list completed tasks still waiting for a journal entry. ` +
	`Use task instead to change a task's status (transitions journal themselves), and spec history to see what changed in the spec. ` +
	`Typical composition: task complete → journal list-unjournaled → journal add(task_id).`

func journalTool(d *Deps) *Tool {
	return &Tool{
		Name:        "journal",
		Title:       "specd journal",
		Description: journalDescription,
		Params: []Param{
			pSpecID, pDryRun, pExpectedVersion, pCursor, pLimit(core.PageJournal),
			{Name: "title", Type: String, MaxLength: 500, MinLength: 1, Description: "Entry title."},
			{Name: "content", Type: String, Description: "Entry body."},
			{Name: "entry_type", Type: String, Enum: specs.JournalEntryTypes, Description: "decision, deviation, blocker, note or status_change (add defaults to note)."},
			idParam("task_id", "The task the entry is about."),
		},
		Actions: []Action{
			{
				Name: "add", Summary: "Appends an entry; with task_id the task's needs_journaling is cleared.",
				Required: []string{"spec_id", "title"}, Optional: append([]string{"content", "entry_type", "task_id"}, mutationArgs...),
				SideEffects: EffectWrite, Latency: LatencyFast,
				Handler: func(ctx context.Context, r *Request) Result {
					return d.mutate(ctx, r, func(sp *specs.Spec, j specs.JournalWriter) (map[string]any, error) {
						taskID := r.Args.String("task_id")
						if taskID != "" {
							if err := specs.MarkJournaled(sp, taskID); err != nil {
								return nil, err
							}
						}
						et := r.Args.String("entry_type")
						if et == "" {
							et = "note"
						}
						e := specs.JournalEntry{Timestamp: specs.FormatTime(d.clock()()), EntryType: et, Title: r.Args.String("title"),
							Content: r.Args.String("content"), Author: author(r), TaskID: taskID}
						j.Append(e)
						return map[string]any{"entry": e}, nil
					})
				},
			},
			{
				Name: "list", Summary: "Entries newest first, optionally for one task or entry type, paged by sequence.",
				Required: []string{"spec_id"}, Optional: []string{"task_id", "entry_type", "cursor", "limit"},
				SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast,
				Handler: func(ctx context.Context, r *Request) Result {
					specID, taskID, et := r.Args.String("spec_id"), r.Args.String("task_id"), r.Args.String("entry_type")
					fp := core.Fingerprint("journal", "list", specID, taskID, et)
					key, cerr := core.DecodeCursor(r.Args.String("cursor"), fp)
					if cerr != nil {
						return Fail(cerr.WithRecovery("journal", map[string]any{"action": "list", "spec_id": specID}, nil))
					}
					var before uint64
					if key != "" {
						n, err := strconv.ParseUint(key, 10, 64)
						if err != nil {
							return Fail(core.NewError(errcode.InvalidCursor, "The cursor is not one this server issued.", map[string]any{"field": "cursor"}).
								WithRecovery("journal", map[string]any{"action": "list", "spec_id": specID}, nil))
						}
						before = n
					}
					limit := r.Args.IntOr("limit", core.PageJournal.Default)
					var next string
					var version int64
					var listed []specs.JournalEntry
					res := d.read(ctx, r, func(sp *specs.Spec, j specs.JournalReader) (map[string]any, []core.MetaOption, error) {
						version = sp.Header.Version
						keep := func(e *specs.JournalEntry) bool { return et == "" || e.EntryType == et }
						var entries []specs.JournalEntry
						var more bool
						var err error
						if taskID != "" {
							entries, more, err = j.TaskEntries(taskID, before, limit, keep)
						} else {
							entries, more, err = j.Entries(before, limit, keep)
						}
						if err != nil {
							return nil, nil, err
						}
						if more && len(entries) > 0 {
							next = core.EncodeCursor(strconv.FormatUint(entries[len(entries)-1].Seq, 10), fp)
						}
						listed = entries
						return map[string]any{"entries": entries, "count": len(entries)}, nil, nil
					})
					res.Meta = append(res.Meta, core.WithPagination(next, limit, nil))
					if data, ok := res.Data.(map[string]any); ok && res.Err == nil {
						res.Degrade = journalPage(data, listed, specID, version, limit, func(seq uint64) string {
							return core.EncodeCursor(strconv.FormatUint(seq, 10), fp)
						}, r.Args)
					}
					return res
				},
			},
			{
				Name: "list-unjournaled", Summary: "Completed tasks that still need a journal entry, in execution order.",
				Required: []string{"spec_id"}, SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast,
				Handler: func(ctx context.Context, r *Request) Result {
					var tasks []map[string]any
					var nodes []*specs.Node
					var version int64
					res := d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
						version = sp.Header.Version
						ids := specs.Unjournaled(sp)
						tasks = make([]map[string]any, 0, len(ids))
						for _, id := range ids {
							n := sp.Node(id)
							nodes = append(nodes, n)
							tasks = append(tasks, map[string]any{"task_id": id, "title": n.Title, "type": n.Type, "completed_at": n.MetaString("completed_at")})
						}
						return map[string]any{"tasks": tasks, "count": len(tasks)}, nil, nil
					})
					// Over the token budget, the last tasks in execution order
					// go (archived as the node at this version); they come
					// back in this list once the first ones are journaled.
					if data, ok := res.Data.(map[string]any); ok && res.Err == nil {
						specID := r.Args.String("spec_id")
						res.Degrade = &ListAnswer[map[string]any]{Data: data, Key: "tasks", Items: tasks, CountKey: "count",
							ID: func(i int) string { return "node:" + nodes[i].ID },
							Archive: func(i int) []ArchiveRef {
								return []ArchiveRef{{ID: ArchiveID(specID, version, "node:"+nodes[i].ID), Content: nodes[i]}}
							}}
					}
					return res
				},
			},
		},
	}
}

// journalPage is how a journal page shrinks over the token budget: the
// oldest entries of the page (its end: pages are newest first) go first,
// each named journal:<seq> and archived as spec:<id>@<version>/journal:<seq>
// (research archive-get serves the entry from the store); the cursor
// continues after the last entry kept.
func journalPage(data map[string]any, entries []specs.JournalEntry, specID string, version int64, limit int, cursor func(seq uint64) string, args Args) *ListAnswer[specs.JournalEntry] {
	return &ListAnswer[specs.JournalEntry]{
		Data: data, Key: "entries", Items: entries, CountKey: "count", PageSize: limit,
		ID: func(i int) string { return "journal:" + strconv.FormatUint(entries[i].Seq, 10) },
		Archive: func(i int) []ArchiveRef {
			return []ArchiveRef{{ID: ArchiveID(specID, version, "journal:"+strconv.FormatUint(entries[i].Seq, 10)), Content: entries[i]}}
		},
		Next: func(kept int) string { return cursor(entries[kept-1].Seq) },
		Continue: func(c string) (string, map[string]any) {
			next := map[string]any{"action": "list", "spec_id": specID, "cursor": c}
			for _, k := range []string{"task_id", "entry_type", "limit"} {
				if args.Has(k) {
					next[k] = args[k]
				}
			}
			return "journal", next
		},
	}
}
