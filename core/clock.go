package core

import "time"

// Clock supplies the current time: specd's one clock type. The server's
// runtime holds one (tests fix it); the domain takes it where it stamps
// times (spec mutations, fixes, archive and retention times). A nil Clock
// is the wall clock.
type Clock func() time.Time

// Now is c's time (the wall clock's when c is nil), in UTC.
func (c Clock) Now() time.Time {
	if c == nil {
		return time.Now().UTC()
	}
	return c().UTC()
}
