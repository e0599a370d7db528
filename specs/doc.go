// Package specs is specd's spec domain: the model of a spec (phases, groups,
// tasks, subtasks, verify and research nodes with dependencies), its JSON
// document form (compatible with foundry-mcp spec files), rollups, the
// dependency rules, authoring mutations, status transitions, the next-task
// oracle, lifecycle moves, validation with auto-fix, and analyses (stats,
// dependency analysis, completeness, duplicate detection, diff).
//
// The package is pure Go and imports only the standard library and the
// packages under core/ (core.Error, core.Clock, the error codes, fuzzy
// matching, the workspace's os.Root). It knows nothing about MCP, bbolt or
// feature flags, and names no tools: answers suggest next steps as facts
// ([NextStep]) and errors carry codes and details; the tools name the calls.
//
// # Views
//
// A spec is accessed through a [Spec] view: a [Header] plus a lazily loaded
// [NodeSource] (a map in memory, a stored bucket in specs/specstore) and a
// copy-on-write overlay. Reads go through [Spec.Node]; a mutation clones the
// nodes it changes with [Spec.Edit] and the store writes back exactly
// [Spec.Changes]. Mutations touch only the nodes they change plus the
// ancestors whose rollups change, so a small change to a 10,000-task spec never
// decodes the whole spec.
//
// Every exported mutation is atomic on its view: when it returns an error the
// view (header and nodes) is exactly as it was before the call. The first
// successful mutation on a view increments Header.Version once and every
// mutation sets Header.LastUpdated; a view is meant to live for one store
// transaction.
//
// # Errors
//
// Domain failures are *core.Error values (specd's one error type) whose Code
// is one of the constants of core/errcode, with details (details.field names
// the argument) and, for a not-found id, the closest existing ids as fuzzy
// matches. Doc comments list the codes each function returns.
//
// # Time
//
// Time is injected: [Spec.Clock] (and the core.Clock parameters of the
// functions that create specs or fix documents) supply "now"; nil means the
// wall clock.
// Timestamps are written as UTC RFC 3339 with a Z suffix.
package specs
