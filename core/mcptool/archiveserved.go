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

// archiveCheck is, for one call by sess, whether the caller may call the
// archive action (archiveServed), decided at most once and only when asked:
// most answers never leave content out.
func (r *Registry) archiveCheck(ctx context.Context, rt Runtime, sess Session) func() bool {
	var decided, served bool
	return func() bool {
		if !decided {
			decided, served = true, r.archiveServed(ctx, rt, sess)
		}
		return served
	}
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
	if r.archived == nil {
		return true
	}
	return r.archived()
}
