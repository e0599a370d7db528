//go:build !race

package etcdstore_test

// claimTasks is the number of tasks TestClaimsAcrossServers' twelve workers
// claim; under -race it is smaller (racecount_on_test.go).
const claimTasks = 60
