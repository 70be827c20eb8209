package fairness

import (
	"testing"
	"unsafe"
)

// A node's or rack's index holds one located item per task and place: 16 bytes, for
// which locatedDegree and bfree's array sizes are chosen (see locatedDegree). An item
// that grows changes what a pending task costs in every tree it is in: choose them again
// (BenchmarkMemory, cluster's BenchmarkMemory in the root package).
func TestLocatedSize(t *testing.T) {
	if n := unsafe.Sizeof(located[*int]{}); n != 16 {
		t.Fatalf("a located item is %d bytes, locatedDegree is chosen for 16", n)
	}
}
