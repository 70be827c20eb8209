package policy

import (
	"fmt"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// Monitor is Alg. 3 driven by usage reports: each report of a server's usage over a
// window becomes the window's prediction conformity (eq. 16, predict.Conformity),
// which is recorded in the conformity log the adjuster reads, and the adjuster then
// re-decides the server's mode. It is what a scheduler runs when a node agent reports;
// the reference Scheduler's ReportUsage is one.
//
// A Monitor is safe for concurrent use as far as its log and adjuster are: the
// reference Scheduler calls it under its own lock.
type Monitor struct {
	schema *resource.Schema
	log    *predict.ConformityLog
	adj    *Adjuster
	idle   resource.Vector
}

// NewMonitor returns the monitor recording conformity in log and adjusting with adj,
// which must read the same log. idleThreshold is eq. 16's per-dimension share of
// capacity below which a server counts as short of idle resources, each in [0, 1].
func NewMonitor(schema *resource.Schema, adj *Adjuster, log *predict.ConformityLog, idleThreshold resource.Vector) (*Monitor, error) {
	switch {
	case schema == nil:
		return nil, settingErr("schema", "nil", resource.ErrSchemaMismatch)
	case adj == nil:
		return nil, settingErr("adjuster", "nil", ErrInvalidValue)
	case log == nil:
		return nil, settingErr("conformity log", "nil", ErrNilConformity)
	case !schema.Equal(adj.schema):
		return nil, settingErr("adjuster", "of another schema", resource.ErrSchemaMismatch)
	case adj.conf != Conformity(log):
		return nil, settingErr("adjuster", "reading another conformity log", ErrInvalidValue)
	}
	if err := schema.ValidateRatios(idleThreshold, 1, false); err != nil {
		return nil, fmt.Errorf("policy: conformity idle threshold: %w", err)
	}
	return &Monitor{schema: schema, log: log, adj: adj, idle: idleThreshold}, nil
}

// IdleThreshold is eq. 16's idle threshold (NewMonitor).
func (m *Monitor) IdleThreshold() resource.Vector { return m.idle }

// Report takes server's usage over window, on a server of the given capacity: it
// computes the window's conformity, records it, and returns the adjuster's change of
// the server's mode (From = To when the mode stays). A window predict.Conformity
// refuses, or a server the adjuster does not know, is an error, and then nothing is
// recorded.
func (m *Monitor) Report(server string, capacity resource.Tuple, window []predict.Interval) (Change, error) {
	if _, ok := m.adj.Lookup(server); !ok {
		return Change{}, settingErr("server ID", server, ErrUnknownServer)
	}
	f, err := predict.Conformity(m.schema, capacity, m.idle, window)
	if err != nil {
		return Change{}, err
	}
	if err := m.log.Record(server, f); err != nil {
		return Change{}, err
	}
	return m.adj.AdjustServer(server)
}
