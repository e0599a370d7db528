//go:build !linux

package store

import "os"

// Without open-file-description locks there is no queue: waiters compete
// for the flock.
// queueOrders reports that waiters are served in arrival order.
const queueOrders = false

func queueTicket(*os.File) int64      { return 0 }
func queueTurn(*os.File, int64) bool  { return true }
func queueWait(*os.File, int64) error { return nil }
func queueLeave(*os.File, int64)      {}
