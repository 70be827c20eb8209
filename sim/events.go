package sim

import "time"

// kind is an event's type. At equal times events run in kind order, then in the order
// they were scheduled (seq): the explicit tie-break that makes runs reproducible.
type kind uint8

const (
	// evNode: a running task on node a may end a stage (its version must be current).
	evNode kind = iota
	// evBackground: node a's background load changes.
	evBackground
	// evFail, evRepair: failure a takes its node out, or brings it back.
	evFail
	evRepair
	// evStart: task a's future-start placement begins (attempt b).
	evStart
	// evArrival: job a is submitted.
	evArrival
	// evBeat: node a's periodic heartbeat (pull mode) and usage sample.
	evBeat
	// evExtra: node a's out-of-band heartbeat after a task on it ended (pull mode).
	evExtra
	// evRetry: push mode's periodic retry of pending tasks.
	evRetry
	// evSample: cluster-wide metrics sample.
	evSample
	// evRedivide: the scheduler's estimator re-divides stages (policies with Feedback).
	evRedivide
	// evScaleUp: a scale-up round (policies with ScaleUp).
	evScaleUp
)

type event struct {
	at   time.Duration
	seq  uint64
	kind kind
	a    int32
	b    uint32
}

func (e *event) before(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	if e.kind != o.kind {
		return e.kind < o.kind
	}
	return e.seq < o.seq
}

// queue is a binary min-heap of events, ordered by (time, kind, seq).
type queue struct {
	h   []event
	seq uint64
}

func (q *queue) push(at time.Duration, k kind, a int32, b uint32) {
	q.seq++
	q.h = append(q.h, event{at: at, seq: q.seq, kind: k, a: a, b: b})
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].before(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *queue) len() int { return len(q.h) }

func (q *queue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.h[r].before(&q.h[l]) {
			m = r
		}
		if !q.h[m].before(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}
