//go:build linux

package store

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"syscall"
)

// A FIFO queue of the processes waiting for the file, on <db>.lock with
// open-file-description byte-range locks (which the kernel releases when the
// file is closed or the process dies). Taking a ticket: under a write lock
// on byte 0, read the counter in bytes 0–7, store counter+1 as this ticket,
// and write-lock the ticket's slot byte. A process then waits (blocking, in
// the kernel) until it can lock the slot of the ticket before it — held by
// the previous taker until it lets the file go — and only then takes the
// flock. Each waiter is woken by its predecessor alone, in order: no thundering
// herd, no random winner, no polling. The flock still provides the mutual
// exclusion; the queue only orders, so a waiter that gives up (and leaves
// its slot) or a process without the queue cannot break it.

const (
	fOFDSetLK  = 37 // F_OFD_SETLK, the same on every Linux architecture
	fOFDSetLKW = 38 // F_OFD_SETLKW
	queueSlots = 1 << 40
)

// queueOrders reports that waiters are served in arrival order.
const queueOrders = true

func slotOf(ticket int64) int64 { return 8 + ticket%queueSlots }

func ofdLock(f *os.File, typ int16, off int64, wait bool) error {
	lk := syscall.Flock_t{Type: typ, Whence: io.SeekStart, Start: off, Len: 1}
	cmd := fOFDSetLK
	if wait {
		cmd = fOFDSetLKW
	}
	for {
		err := syscall.FcntlFlock(f.Fd(), cmd, &lk)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// queueTicket takes the next ticket and holds its slot. 0 means the queue
// is not usable here (a lock file opened read-only, or an error): the caller
// then just competes for the flock.
func queueTicket(f *os.File) int64 {
	if err := ofdLock(f, syscall.F_WRLCK, 0, true); err != nil {
		return 0
	}
	defer func() { _ = ofdLock(f, syscall.F_UNLCK, 0, false) }()
	var b [8]byte
	var last int64
	if n, _ := f.ReadAt(b[:], 0); n == 8 {
		last = int64(binary.LittleEndian.Uint64(b[:]))
	}
	t := last + 1
	binary.LittleEndian.PutUint64(b[:], uint64(t))
	if _, err := f.WriteAt(b[:], 0); err != nil {
		return 0
	}
	if err := ofdLock(f, syscall.F_WRLCK, slotOf(t), false); err != nil {
		return 0
	}
	return t
}

// queueTurn reports, without waiting, whether ticket t's predecessor has
// let go.
func queueTurn(f *os.File, t int64) bool {
	if t <= 1 {
		return true
	}
	if ofdLock(f, syscall.F_WRLCK, slotOf(t-1), false) != nil {
		return false
	}
	_ = ofdLock(f, syscall.F_UNLCK, slotOf(t-1), false)
	return true
}

// queueWait blocks until ticket t's predecessor has let go.
func queueWait(f *os.File, t int64) error {
	if t <= 1 {
		return nil
	}
	if err := ofdLock(f, syscall.F_WRLCK, slotOf(t-1), true); err != nil {
		return err
	}
	return ofdLock(f, syscall.F_UNLCK, slotOf(t-1), false)
}

// queueLeave gives up ticket t's place, letting its successor go on.
func queueLeave(f *os.File, t int64) {
	if t > 0 {
		_ = ofdLock(f, syscall.F_UNLCK, slotOf(t), false)
	}
}
