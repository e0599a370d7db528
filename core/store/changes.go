package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Change detection for resource subscriptions. Several specd processes
// share one file and take turns on its lock, so a process cannot learn of
// another's commit through memory: it has to look at the file. Looking
// through bbolt costs the lock (and, when this process does not hold the
// file open, an open and a close). Looking at the file's metadata costs one
// stat and no lock: every commit writes the file, so it changes the file's
// modification time (and often its size). ChangeStamp is that stat,  and
// the versions of the subscribed specs (specs/specstore's SpecVersions) the
// locked read a watcher makes only when the stamp says the file may have
// changed.

// freshFor is how long after a write a file's stamp is not trusted to
// change again: file systems keep modification times at a coarse
// granularity (a kernel tick, milliseconds; two seconds on FAT), so a second
// commit within that window may leave the time, and so the stamp, as it
// was.
const freshFor = 2 * time.Second

// ChangeStamp describes the store file as it is now, from one stat and
// without the lock: a token that differs whenever a commit happened since
// another stamp was taken — unless that stamp was fresh, i.e. taken within
// two seconds of the file's last write, when a later commit may keep the
// token. A watcher therefore re-reads when the token changed or when the
// previous stamp was fresh. A missing file has the token "absent".
func (s *Store) ChangeStamp() (token string, fresh bool) {
	st, err := os.Stat(s.opts.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "absent", false
		}
		return "error", true
	}
	mt := st.ModTime()
	ino := fileIno(st)
	return fmt.Sprintf("%d:%d:%d", ino, st.Size(), mt.UnixNano()), time.Since(mt) < freshFor
}

// Exists reports whether the store file exists yet (bucketstore.Lazy): a
// reader that must not create it (a subscription poll) looks first.
func (s *Store) Exists() bool {
	_, err := os.Stat(s.opts.Path)
	return !errors.Is(err, fs.ErrNotExist)
}
