package finegrain

import (
	"fmt"
	"strings"
	"time"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

// Explain says why pending task id cannot start at now, node by node, in the
// kube-scheduler style: "0/5 nodes can take it: 3 short of memory, 2 short of cpu;
// closest: node …" (Tally.Explain), with the counts as data. It runs the checks a push
// placement runs — the PreFilter plugins (queue limits, gangs), then the Filter
// plugins on every node the free index offers, the rest counted as short of the index
// dimension — and changes nothing. A tally with fewer refusals than nodes means the
// task could start somewhere now: in pull mode, whether a heartbeat offers it that
// node also depends on the fairness order and locality waits, which each Decision's
// Refusals and Skips report. Tally.Unresolvable says that no node could hold the task
// even empty.
func (s *Scheduler) Explain(id string, now time.Duration) (Tally, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.asked("explanation of task", id, now)
	if err != nil {
		return Tally{}, err
	}
	return s.fw.Explain(t, now), nil
}

// UnresolvableError is Submit's refusal of a task that no node of the cluster could
// hold even empty (ErrUnresolvable).
type UnresolvableError struct {
	Task string
	// Need is the non-compressible part of the task's peak demand as placed (its
	// declared profile's peak, or its request): a compressible demand may run
	// compressed, so it is never the reason.
	Need resource.Tuple
	// GPU is the task's GPU demand.
	GPU gpu.Demand
	// Largest is, dimension by dimension, the largest capacity of any node.
	Largest resource.Tuple

	schema *resource.Schema
}

func (e *UnresolvableError) Error() string {
	var over []string
	for i := 0; i < e.schema.Len(); i++ {
		switch {
		case e.Need[i] <= e.Largest[i]:
		case e.Largest[i] == 0:
			over = append(over, fmt.Sprintf("%s (no node has any)", e.schema.Format(e.Need.Only(1<<i))))
		default:
			over = append(over, fmt.Sprintf("%s (the largest node has %s)", e.schema.Format(e.Need.Only(1<<i)), e.schema.Format(e.Largest.Only(1<<i))))
		}
	}
	var what string
	switch {
	case len(over) > 0:
		what = "it needs " + strings.Join(over, ", ")
	case !e.GPU.IsZero():
		what = fmt.Sprintf("no node has the GPU devices it asks (%v) with room for %s", e.GPU, e.schema.Format(e.Need))
	default:
		what = fmt.Sprintf("no one node has all of %s", e.schema.Format(e.Need))
	}
	return fmt.Sprintf("finegrain: task %q: %s: %v", e.Task, what, ErrUnresolvable)
}

// Unwrap returns ErrUnresolvable.
func (e *UnresolvableError) Unwrap() error { return ErrUnresolvable }
