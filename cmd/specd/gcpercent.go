package main

import (
	"runtime/debug"
	"strconv"
)

// serverGCPercent is the garbage collector's target (GOGC) of `specd serve
// --transport http` when the environment sets no GOGC: the heap may grow
// to three times what is live between collections instead of twice. Under
// `make load` the shared server's collections were about a sixth of its
// CPU; at 200 its CPU per write fell by about as much (README, "Write
// throughput"), for a heap that is a small multiple of the node cache
// (about 330 MB live when full). Measured again against 100 and 400, with
// and without a GOMEMLIMIT (README, "Memory and the garbage collector"):
// 100 costs about 10% more CPU per write, 400 saved nothing steady for a
// quarter to two thirds more memory. A GOGC in the environment (off
// included) wins, and a GOMEMLIMIT still bounds the heap: the runtime
// collects earlier when it nears the limit.
const serverGCPercent = 200

// setServerGC applies serverGCPercent unless getenv("GOGC") is set (the
// runtime has applied that one already). It returns the percent in effect
// and whether it came from the environment.
func setServerGC(getenv func(string) string) (percent string, fromEnv bool) {
	if v := getenv("GOGC"); v != "" {
		return v, true
	}
	debug.SetGCPercent(serverGCPercent)
	return strconv.Itoa(serverGCPercent), false
}
