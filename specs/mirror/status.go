package mirror

import (
	"context"
	"sort"
)

// Status is a pass's report and what a person changed that no pass has
// had to refuse yet.
type Status struct {
	Dir string `json:"dir"`
	// Files is how many spec files the mirror keeps.
	Files int `json:"files"`
	Report
	// Edited are files the mirror wrote that were changed since by hand;
	// their spec has not changed since, so nothing was refused yet (its
	// next change will be a conflict).
	Edited []string `json:"edited"`
	// Missing are files the mirror wrote that were removed by hand; the
	// spec's next change writes them again.
	Missing []string `json:"missing"`
}

// Status runs a pass (Sync) and then reads every file the mirror keeps,
// reporting those a person changed or removed. Errors as Sync's.
func (m *Mirror) Status(ctx context.Context) (Status, error) {
	rep, err := m.Sync(ctx)
	out := Status{Dir: m.Dir(), Report: rep, Edited: []string{}, Missing: []string{}}
	if err != nil || rep.Skipped {
		return out, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	unlock, err := m.ws.Lock(ctx, lockFile)
	if err != nil {
		return out, err
	}
	defer unlock()
	st, _, err := m.loadState(ctx)
	if err != nil {
		return out, err
	}
	if err := m.inspect(ctx, m.folder(st), &out); err != nil {
		return out, err
	}
	sort.Strings(out.Edited)
	sort.Strings(out.Missing)
	return out, nil
}

// inspect reads every file the mirror keeps in fs (a file in conflict is
// in out.Conflicts already), counts them in out.Files and adds those a
// person changed to out.Edited and those removed to out.Missing.
func (m *Mirror) inspect(ctx context.Context, fs *folderState, out *Status) error {
	for _, rec := range fs.Specs {
		if rec.SHA256 == "" || rec.Pending != "" {
			continue
		}
		out.Files++
		h, err := m.disk(ctx, rec.File)
		if err != nil {
			return err
		}
		switch h {
		case rec.SHA256:
		case "":
			out.Missing = append(out.Missing, m.show(rec.File))
		default:
			out.Edited = append(out.Edited, m.show(rec.File))
		}
	}
	return nil
}
