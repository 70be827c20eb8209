package cluster

import (
	"testing"
	"unsafe"
)

// A TaskInfo is what every task held costs, pending or not: 192 bytes, a size class of
// its own (objects of up to 512 bytes carry no header). What only a placed task needs is
// in its placement, so that pending tasks do not pay for it; a field that takes TaskInfo
// past 192 bytes puts it in the 208-byte class, 16 bytes more for every task
// (BenchmarkMemory's B/pending-task): move it to the placement, or to taskExtra if few
// tasks have it, or make room.
func TestTaskInfoSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(TaskInfo{}); n > 192 {
		t.Fatalf("TaskInfo is %d bytes: it leaves the 192-byte size class", n)
	}
}
