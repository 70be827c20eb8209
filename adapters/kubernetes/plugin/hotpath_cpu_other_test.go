//go:build !linux

package plugin_test

import "time"

// threadCPU is -1 where the thread's CPU time is not read: the benchmarks then
// report wall time only.
func threadCPU() time.Duration { return -1 }
