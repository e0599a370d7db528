package tools

import (
	"fmt"
	"strings"

	"github.com/specd/specd/core"
)

// Warning codes of health check about the spec mirror (--mirror).
const (
	// WarnMirrorConflict: files of the mirror folder a person changed;
	// specd leaves them alone and puts its version beside them.
	WarnMirrorConflict = "MIRROR_CONFLICT"
	// WarnMirrorFailed: the last mirror pass failed (the next change
	// retries it).
	WarnMirrorFailed = "MIRROR_FAILED"
)

// mirrorWarnings are health check's warnings about this server's spec
// mirror, from its last pass: MIRROR_CONFLICT naming every file a person
// changed (context: dir, files, conflicts), MIRROR_FAILED with the pass's
// error. None without a mirror.
func (d *Deps) mirrorWarnings() []core.MetaOption {
	if d.Mirror == nil {
		return nil
	}
	var out []core.MetaOption
	h := d.Mirror.Health()
	err, conflicts := h.Err, h.Conflicts
	if err != nil {
		out = append(out, warnOf(WarnMirrorFailed, "The last pass of the spec mirror in "+d.Mirror.Dir()+" failed: "+errorSummary(err)+". The next change retries it.",
			mirrorFailedContext{Dir: d.Mirror.Dir(), ErrorCode: core.AsError(err).Code}))
	}
	if len(conflicts) > 0 {
		files := make([]string, len(conflicts))
		lines := make([]string, len(conflicts))
		for i, c := range conflicts {
			files[i], lines[i] = c.File, c.String()
		}
		out = append(out, warnOf(WarnMirrorConflict,
			fmt.Sprintf("%d mirrored spec files were changed by hand and are left alone: %s. Delete each file, or replace it with specd's version, and specd manages it again; to keep a change, import the file first (spec import with overwrite).",
				len(conflicts), strings.Join(lines, "; ")),
			mirrorConflictContext{Dir: d.Mirror.Dir(), Files: files, Conflicts: conflicts}))
	}
	return out
}
