package cluster

import (
	"testing"
	"unsafe"
)

// A TaskInfo is the largest allocation per task. Objects of more than 512 bytes that
// hold pointers carry an 8-byte header, so up to 632 bytes it takes the 640-byte size
// class, beyond it the 704-byte one: 64 bytes more for every task held
// (BenchmarkMemory's B/pending-task).
func TestTaskInfoSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(TaskInfo{}); n > 632 {
		t.Fatalf("TaskInfo is %d bytes: with its header it leaves the 640-byte size class", n)
	}
}
