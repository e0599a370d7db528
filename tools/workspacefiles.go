package tools

import (
	"path/filepath"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/workspacefs"
)

// openWorkspace opens the server's workspace for one call's file access
// (see core/workspacefs: every caller file goes through it). The caller
// closes it.
func openWorkspace(d *Deps) (*workspacefs.Dir, error) {
	ws, err := workspacefs.Open(d.Workspace)
	if err != nil {
		return nil, fileError(err)
	}
	return ws, nil
}

// withWorkspace runs fn over the server's workspace, opened for this call
// and closed after it.
func withWorkspace[T any](d *Deps, fn func(ws *workspacefs.Dir) (T, error)) (T, error) {
	ws, err := openWorkspace(d)
	if err != nil {
		var zero T
		return zero, err
	}
	defer ws.Close()
	return fn(ws)
}

// fileError gives a workspace path refusal its next call: server context,
// which names the workspace and always runs, so the agent can pick a path
// inside it. Other errors pass through.
func fileError(err error) error {
	e, ok := err.(*core.Error)
	if !ok || e.Recovery != nil {
		return err
	}
	switch e.Code {
	case errcode.InvalidFormat, errcode.NotFound, errcode.PayloadTooLarge, errcode.Unavailable:
		return e.WithNext(toServerContext.Call(serverContextArgs{}), nil)
	}
	return err
}

// showServerPath renders a server-side path for an answer without
// revealing the server's layout: relative to the workspace when inside it,
// else only its base name.
func showServerPath(workspace, p string) string {
	if p == "" {
		return ""
	}
	if workspace != "" {
		if rel, err := filepath.Rel(workspace, p); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(p)
}
