//go:build race

package etcdstore_test

// claimTasks is the number of tasks TestClaimsAcrossServers' twelve workers
// claim. Under -race every claim (a decode, a mutation and an encode of the
// whole spec, and etcd itself) is several times slower, so it claims fewer:
// still five rounds of twelve contending workers; the non-race run
// (racecount_off_test.go) claims the full count.
const claimTasks = 24
