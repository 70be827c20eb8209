package stage

import (
	"testing"
	"unsafe"
)

// A Go map keeps values of up to 128 bytes inline; a larger reservation would cost an
// allocation per Reserve (it once did, when it grew a field).
func TestReservationFitsInline(t *testing.T) {
	if n := unsafe.Sizeof(reservation{}); n > 128 {
		t.Fatalf("reservation is %d bytes; the timeline's map would allocate each one", n)
	}
}
