//go:build !linux

package procrun

// runIDVar names the environment variable that marks every process of one
// Run (see sweep).
const runIDVar = "SPECD_RUN_ID"

// sweep has nothing beyond the process-group kill where /proc and
// PR_SET_CHILD_SUBREAPER are not available.
func sweep(int, string) {}

// becomeSubreaper reports that orphans are not reparented to the server here.
func becomeSubreaper() bool { return false }
