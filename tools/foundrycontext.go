package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

// foundryContext names, per tool, the parameter foundry-mcp callers use to
// say which project they mean: the workspace folder on spec, task and journal
// actions, the specs folder ("path") on authoring, lifecycle and
// verification actions. A specd process serves one workspace, so the
// parameter is accepted on every action of those tools when it names this
// workspace or a folder inside it (relative paths are taken from the
// workspace root), and answered WORKSPACE_MISMATCH otherwise. Handlers never
// see it.
var foundryContext = map[string]string{
	"spec": "workspace", "task": "workspace", "journal": "workspace",
	"authoring": "path", "lifecycle": "path", "verification": "path",
}

// acceptFoundryContext declares t's foundry context parameter on every
// action and checks it before the handler runs. Tools that already declare
// a parameter of that name (with another meaning) are left alone.
func acceptFoundryContext(t *mcptool.Tool, workspace string) {
	name, ok := foundryContext[t.Name]
	if !ok {
		return
	}
	if _, taken := t.Param(name); taken {
		return
	}
	desc := "foundry-mcp compatibility: the workspace folder; must be this server's (or inside it)."
	if name == "path" {
		desc = "foundry-mcp compatibility: the specs folder; must be inside this server's workspace."
	}
	t.Params = append(t.Params, mcptool.Param{Name: name, Type: mcptool.String, MaxLength: 4096, Description: desc})
	for i := range t.Actions {
		a := &t.Actions[i]
		a.Optional = append(a.Optional, name)
		next := a.Handler
		tool, action := t.Name, a.Name
		a.Handler = func(ctx context.Context, r *mcptool.Request) mcptool.Result {
			if r.Args.Has(name) {
				if err := inWorkspace(workspace, r.Args.String(name)); err != nil {
					return mcptool.Fail(workspaceMismatch(tool, action, name, r.Args))
				}
				delete(r.Args, name)
			}
			return next(ctx, r)
		}
	}
}

// inWorkspace reports whether given (absolute, or relative to workspace)
// names workspace or a folder below it, comparing real paths where they
// exist. It only compares names: nothing is opened for the caller.
func inWorkspace(workspace, given string) error {
	if workspace == "" {
		return nil
	}
	root := realPath(workspace)
	p := given
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	p = realPath(p)
	if p == root || strings.HasPrefix(p, root+string(filepath.Separator)) {
		return nil
	}
	return os.ErrNotExist
}

// realPath is p with symlinks resolved where it exists, else cleaned.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// workspaceMismatch answers a call naming another workspace: the caller's
// own text is echoed, the server's folder is never shown; recovery is the
// same call without the parameter.
func workspaceMismatch(tool, action, name string, args mcptool.Args) *core.Error {
	retry := map[string]any{"action": action}
	for k, v := range args {
		if k != name {
			retry[k] = v
		}
	}
	return core.FieldError(errcode.WorkspaceMismatch,
		fmt.Sprintf("%s %q is not this server's workspace; specd serves one workspace per process.", name, args.String(name)),
		core.FieldDetail{Field: name, Received: args.String(name)}).
		WithRemediation(fmt.Sprintf("Omit %s to use this server's workspace, or start specd for that folder (specd serve --workspace %s) and call that server.", name, args.String(name))).
		WithRecovery(tool, retry, nil)
}
