package fairness

// firsts maps the sequence numbers of the jobs with a task at one node or rack to their
// first entry there (by task order): it answers "has job j a task here, and which
// first?" in O(1) without searching the place's tree. It is an open-addressing table
// with linear probing, 16 bytes a slot, kept between a quarter and three quarters full
// (but for its smallest sizes), so that it costs about 24 bytes a job it holds.
//
// The zero value is an empty table.
type firsts[T any] struct {
	slots []firstSlot[T] // len a power of two, or 0
	n     int            // slots in use
	shift uint8          // 64 - log2(len(slots))
}

// firstSlot is one slot of a firsts table: empty when e is nil.
type firstSlot[T any] struct {
	job uint64
	e   *PendingEntry[T]
}

// minFirsts is the smallest size of a non-empty firsts table.
const minFirsts = 2

// home is the slot where a probe for job starts: Fibonacci hashing of the sequence
// number, whose top bits spread consecutive numbers over the whole table.
func (f *firsts[T]) home(job uint64) int {
	return int((job * 0x9E3779B97F4A7C15) >> f.shift)
}

// get returns the first entry of job here, or nil when the job has none.
func (f *firsts[T]) get(job uint64) *PendingEntry[T] {
	if f.n == 0 {
		return nil
	}
	mask := len(f.slots) - 1
	for i := f.home(job); ; i = (i + 1) & mask {
		s := &f.slots[i]
		if s.e == nil || s.job == job {
			return s.e
		}
	}
}

// set makes e the first entry of job here.
func (f *firsts[T]) set(job uint64, e *PendingEntry[T]) {
	if 4*(f.n+1) > 3*len(f.slots) {
		f.resize(max(minFirsts, 2*len(f.slots)))
	}
	mask := len(f.slots) - 1
	for i := f.home(job); ; i = (i + 1) & mask {
		s := &f.slots[i]
		if s.e == nil {
			*s = firstSlot[T]{job: job, e: e}
			f.n++
			return
		}
		if s.job == job {
			s.e = e
			return
		}
	}
}

// del drops job's slot, if any. The slots after it in its probe run move back so that
// no probe meets a hole before the slot it looks for (no tombstones), and a table left
// less than a quarter full halves.
func (f *firsts[T]) del(job uint64) {
	if f.n == 0 {
		return
	}
	mask := len(f.slots) - 1
	i := f.home(job)
	for ; f.slots[i].job != job || f.slots[i].e == nil; i = (i + 1) & mask {
		if f.slots[i].e == nil {
			return
		}
	}
	// Backward shift: a slot k after the hole at i moves into it unless its home lies
	// cyclically in (i, k], where a probe for it stops before reaching i.
	for k := (i + 1) & mask; f.slots[k].e != nil; k = (k + 1) & mask {
		if h := f.home(f.slots[k].job); (k-h)&mask >= (k-i)&mask {
			f.slots[i] = f.slots[k]
			i = k
		}
	}
	f.slots[i] = firstSlot[T]{}
	f.n--
	if f.n == 0 {
		*f = firsts[T]{}
	} else if len(f.slots) > minFirsts && 4*f.n < len(f.slots) {
		f.resize(len(f.slots) / 2)
	}
}

// resize moves the slots in use to a table of size slots (a power of two).
func (f *firsts[T]) resize(size int) {
	old := f.slots
	f.slots = make([]firstSlot[T], size)
	f.shift = 64
	for s := size; s > 1; s >>= 1 {
		f.shift--
	}
	mask := size - 1
	for _, s := range old {
		if s.e == nil {
			continue
		}
		i := f.home(s.job)
		for f.slots[i].e != nil {
			i = (i + 1) & mask
		}
		f.slots[i] = s
	}
}
