// Package flock takes the operating system's advisory whole-file locks
// (flock(2)) on open files, retrying a call a signal interrupted (EINTR), so
// callers never see EINTR as a failure.
//
// A lock belongs to the open file description: closing the last descriptor
// (and any memory mapping) of it lets go, and Release lets go at once. Where
// the system has no flock (not unix), every lock is granted at once and
// Release does nothing: callers there rely on another guard.
//
// flock imports only the standard library.
package flock

// Kind is the kind of lock: Shared locks coexist, an Exclusive one excludes
// every other lock on the file.
type Kind int

// The kinds of lock.
const (
	Shared Kind = iota + 1
	Exclusive
)
