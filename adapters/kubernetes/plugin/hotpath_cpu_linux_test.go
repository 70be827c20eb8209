//go:build linux

package plugin_test

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time the calling OS thread has used (CLOCK_THREAD_CPUTIME_ID),
// or -1 when it cannot be read. On a machine shared with other work a benchmark's
// wall time counts the time others had the cores; its thread's CPU time does not.
func threadCPU() time.Duration {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return -1
	}
	return time.Duration(ts.Nano())
}
