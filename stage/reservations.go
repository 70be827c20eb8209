package stage

import (
	"cmp"
	"slices"
	"time"
)

// reservation is one entry of a timeline's reservations (Timeline.res): a handle, and,
// while it is held, its start, its profile and whether Suspend took it off the
// timeline. A released entry keeps its handle and has no profile, until the list is
// compacted.
//
// The list is in handle order: Reserve and Replace issue handles in increasing order
// and append, so a handle is found by binary search, O(log n) for the n entries, in
// memory that holds nothing else — where a map hashed the handle, and assigned and
// deleted an entry for every reservation. Released entries at the end are dropped at
// once; those elsewhere when they are as many as the held ones (compact), so the list
// holds at most about twice the reservations held, and each entry is moved O(1) times
// on average.
type reservation struct {
	h       Handle
	start   time.Duration
	profile Profile
	lifted  bool
}

// released reports whether r was released (its entry waits to be compacted away).
func (r *reservation) released() bool { return r.profile.profile == nil }

// find returns the index of held reservation h in tl.res; false when h is not held
// (never issued, or released).
func (tl *Timeline) find(h Handle) (int, bool) {
	i, ok := slices.BinarySearchFunc(tl.res, h, func(r reservation, h Handle) int { return cmp.Compare(r.h, h) })
	return i, ok && !tl.res[i].released()
}

// add records a new reservation of p from start and returns its handle.
func (tl *Timeline) add(start time.Duration, p Profile) Handle {
	tl.last++
	tl.res = append(tl.res, reservation{h: tl.last, start: start, profile: p})
	tl.held++
	return tl.last
}

// drop releases the reservation at index i of tl.res.
func (tl *Timeline) drop(i int) {
	tl.res[i] = reservation{h: tl.res[i].h}
	tl.held--
	k := len(tl.res)
	for k > 0 && tl.res[k-1].released() {
		k--
	}
	clear(tl.res[k:])
	tl.res = tl.res[:k]
	if 2*tl.held <= len(tl.res) {
		tl.compact()
	}
}

// compact drops the released entries of tl.res, keeping the held ones in order.
func (tl *Timeline) compact() {
	kept := tl.res[:0]
	for _, r := range tl.res {
		if !r.released() {
			kept = append(kept, r)
		}
	}
	clear(tl.res[len(kept):])
	tl.res = kept
}
