package finegrain

import (
	"fmt"
	"time"
)

// MaxTime is the latest time the Scheduler accepts (2^61 ns, about 73 years after the
// epoch you choose). Reservations end at most at stage.Forever, so every reservation
// starting by MaxTime keeps a positive length: none saturates to nothing and
// over-commits a node silently.
const MaxTime = time.Duration(1 << 61)

// DefaultClockSkew is how far behind the latest time seen an event may be and still
// be accepted, by default (WithClockSkew).
const DefaultClockSkew = 500 * time.Millisecond

// The time model. Every call that reports an event at a time now (Heartbeat, Place,
// Started, Progress, Finished, Failed, Cancel, RemoveNode, UpdateNode, SetExternalLoad,
// SetExternalDevices, ReportUsage) goes through eventTime:
//
//   - now must be in [0, MaxTime];
//   - the Scheduler keeps the latest time it has accepted; an event up to the clock
//     skew earlier (node agents' clocks and messages are never perfectly in order) is
//     taken to happen at that latest time; one further back is refused, changing
//     nothing;
//   - a call that succeeds moves the latest time forward to its own. So do Heartbeat,
//     Place, Reserve and PostFilter when they start or place nothing: they act at that
//     time whatever they find (tasks booked to start by then start first, and a
//     PostFilter may have evicted tasks before it found no placement). A call refused
//     for its arguments (an unknown ID, a task in another state, a Commit or Unreserve
//     of a task not held for the host) leaves it where it was.
//
// Queries about a time (Filter, Score, NodeFree, FreeSegments) change nothing and
// accept any time in [0, MaxTime].

// eventTime validates the time of an event and returns the time the Scheduler uses
// for it: now, or the latest time seen when now is behind it within the skew. It
// changes nothing; the call moves the state's clock (cluster.State.Advance) once it
// succeeds.
// The event reads "event id", as in `heartbeat of node "n1"`, or "event" alone for an
// event of no one thing (id "").
func (s *Scheduler) eventTime(event, id string, now time.Duration) (time.Duration, error) {
	if err := checkTime(event, id, now); err != nil {
		return 0, err
	}
	latest := s.state.Clock()
	if now < latest-s.cfg.skew {
		return 0, fmt.Errorf("finegrain: %s at %v: time going backwards, the latest time seen is %v (skew tolerated: %v): %w",
			eventName(event, id), now, latest, s.cfg.skew, ErrInvalid)
	}
	return max(now, latest), nil
}

// checkTime refuses a time outside [0, MaxTime].
func checkTime(event, id string, t time.Duration) error {
	if t < 0 || t > MaxTime {
		return fmt.Errorf("finegrain: %s at %v: time outside [0, %v]: %w", eventName(event, id), t, MaxTime, ErrInvalid)
	}
	return nil
}

// eventName is `event "id"`, or event alone when id is "".
func eventName(event, id string) string {
	if id == "" {
		return event
	}
	return fmt.Sprintf("%s %q", event, id)
}
