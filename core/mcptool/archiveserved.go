package mcptool

import "context"

// An answer that leaves content out names the ids it is archived under
// (content_archive_hashes); its messages tell the caller to fetch that
// content with the action that serves archives (specd: research
// archive-get) only when this caller may call it. A caller for whom the
// action is off would otherwise be sent to a call that is refused.

// ServeArchiveWith names the action that serves archived content by the
// ids of content_archive_hashes. Without it no answer suggests fetching
// archived content. Call it at start-up, before the registry serves calls.
func (r *Registry) ServeArchiveWith(tool, action string) { r.archive = [2]string{tool, action} }

// archiveCheck readies req, a call by req.Session, to decide whether the
// caller may call the archive action (archiveServed) at most once and only
// when asked (Request.ArchiveServed): most answers never leave content out.
// The decision's inputs live in req itself, so a call pays no allocation
// for a decision it never asks for.
func (r *Registry) archiveCheck(ctx context.Context, rt Runtime, req *Request) {
	req.archive = archiveDecision{r: r, ctx: ctx, rt: rt}
}

// archiveDecision is what Request.ArchiveServed needs to decide, and the
// decision once made.
type archiveDecision struct {
	r               *Registry // nil: the Request was not made by Dispatch
	ctx             context.Context
	rt              Runtime
	decided, served bool
}

// archiveServed is true when the archive action is registered, its tool
// does not refuse it, the caller's role may run it and its feature flag is
// on for the caller — the checks Dispatch would make before running it.
func (r *Registry) archiveServed(ctx context.Context, rt Runtime, sess Session) bool {
	t, ok := r.Tool(r.archive[0])
	if !ok {
		return false
	}
	a, ok := t.Action(r.archive[1])
	if !ok || (t.Refuse != nil && t.Refuse(a.Name) != nil) || rt.permit(ctx, t, a) != nil {
		return false
	}
	return a.Flag == "" || rt.Flags == nil || rt.Flags.Gate(ctx, a.Flag, NewFlagContext(sess, t.Name, a.Name)).On
}

// ArchiveServed says whether this caller may fetch archived content with
// the registry's archive action (Registry.ServeArchiveWith): a handler
// that builds its own degraded answer names that action only when true. A
// Request not made by Dispatch (a unit test's) answers true.
func (r *Request) ArchiveServed() bool {
	d := &r.archive
	if d.r == nil {
		return true
	}
	if !d.decided {
		d.decided, d.served = true, d.r.archiveServed(d.ctx, d.rt, r.Session)
	}
	return d.served
}
