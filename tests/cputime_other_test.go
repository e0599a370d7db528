//go:build !unix

package tests

import "time"

// processCPU is 0 where getrusage is missing: the benchmark's cpu-ns/op
// then reads 0.
func processCPU() time.Duration { return 0 }
