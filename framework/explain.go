package framework

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
)

// This file explains refusals the way kube-scheduler does ("0/5 nodes are available:
// 3 Insufficient memory, 2 Insufficient cpu."): a Tally counts the nodes (or, in a
// Decision, the skips) by reason, dimension and plugin, and remembers the node that
// came closest.

// Count is how many nodes refused a task for one reason — or, in a Decision's tally,
// how many times a heartbeat passed a job or task over for it.
type Count struct {
	Reason Reason
	// Dim names the dimension short of room (NoRoom, OverCapacity); empty otherwise.
	Dim string
	// Plugin names the plugin that refused, when no dimension is named; empty
	// otherwise.
	Plugin string
	// N is how many.
	N int
}

// String is the count in the kube style: "3 short of memory", "2 gang short of
// MinMember tasks (Gang)".
func (c Count) String() string { return fmt.Sprintf("%d %s", c.N, c.Why()) }

// Why is the count's reason, dimension and plugin in words, without the number:
// "short of memory". Refusals of one key read the same, so that a host scheduler that
// aggregates its nodes' messages (kube-scheduler's "0/5 nodes are available: …")
// counts them together.
func (c Count) Why() string {
	switch {
	case c.Reason == NoRoom && c.Dim != "":
		return "short of " + c.Dim
	case c.Reason == OverCapacity && c.Dim != "":
		return "too small for its " + c.Dim
	case c.Plugin != "":
		return fmt.Sprintf("%v (%s)", c.Reason, c.Plugin)
	}
	return c.Reason.String()
}

// Tally counts refusals by reason, dimension and plugin: why a task fits none of the
// nodes it was tried on (PlacementError.Refusals, Scheduler.Explain), or why a
// heartbeat passed work over (Decision.Refusals). A host scheduler that asks the
// probes node by node tallies their answers with Add. The zero Tally is empty and
// ready to use.
type Tally struct {
	// Of is how many nodes were considered in all, refused or not (in a Decision's
	// tally: how many skips were counted).
	Of int
	// Counts are the refusals by reason, dimension and plugin: the most frequent first,
	// ties in Reason, Dim and Plugin order.
	Counts []Count
	// Closest is the node that came closest to holding the task among those short of
	// room: the one whose shortfall is the smallest share of its capacity on the
	// dimension short (ties to the node counted first). A push placement ranks the
	// nodes it filtered and the roomiest of those the free index ruled out, not every
	// one of them. Empty when none was short of room.
	Closest string
	// Short is the Closest node's match result (Code match.NoRoom): the stage, the
	// dimension, what it needs and what is free there.
	Short match.Result
	// Unresolvable reports that no node of the cluster could hold the task even empty —
	// its peak exceeds every node's capacity on a non-compressible dimension, or no
	// node has the GPU devices it asks (cluster.State.CouldHold) — so that no wait and
	// no preemption can place it: only a larger node can.
	Unresolvable bool

	share float64      // Closest's shortfall as a share of its capacity
	last  match.Result // with no Closest, the latest refusal's match verdict other than NoRoom
}

// Add counts node's answer: status st, with its match result r, and the node's
// capacity, to rank how close it came. A status that is OK counts in Of only. A host
// scheduler that probes node by node (Scheduler.Filter) tallies its answers this way.
func (t *Tally) Add(node string, capacity resource.Tuple, st Status, r match.Result) {
	t.Of++
	if st.OK() {
		return
	}
	t.count(CountOf(st, r), 1)
	if r.Code == match.NoRoom {
		t.closer(node, capacity, st, r)
	} else if r.Code != match.Fit && r.Code != match.FitCompressed && t.Closest == "" {
		t.last = r
	}
}

// closer makes node, of capacity, the Closest if it refused for want of room (st
// NoRoom, with its match result r) and came closer than the Closest so far.
func (t *Tally) closer(node string, capacity resource.Tuple, st Status, r match.Result) {
	if st.Reason != NoRoom || r.Code != match.NoRoom || node == "" {
		return
	}
	if share := r.ShortfallShare(capacity); t.Closest == "" || share < t.share {
		t.Closest, t.Short, t.share = node, r, share
	}
}

// CountOf is the key under which a Tally counts refusal st with match result r
// (N is 1): its reason, and the dimension short of room (NoRoom, OverCapacity with a
// match verdict) or else the plugin that refused.
func CountOf(st Status, r match.Result) Count { return countOf(st.Reason, st.Plugin, &r) }

// countOf is CountOf for reason and plugin, with r read in place.
func countOf(reason Reason, plugin string, r *match.Result) Count {
	c := Count{Reason: reason}
	if (reason == NoRoom || reason == OverCapacity) && r.Code == match.NoRoom {
		c.Dim = r.DimName
	} else {
		c.Plugin = plugin
	}
	c.N = 1
	return c
}

// count adds n refusals under key k.
func (t *Tally) count(k Count, n int) {
	if n <= 0 {
		return
	}
	for i := range t.Counts {
		if c := &t.Counts[i]; c.Reason == k.Reason && c.Dim == k.Dim && c.Plugin == k.Plugin {
			c.N += n
			return
		}
	}
	k.N = n
	if t.Counts == nil {
		t.Counts = make([]Count, 0, 4)
	}
	t.Counts = append(t.Counts, k)
}

// sort orders the counts: the most frequent first, ties in Reason, Dim, Plugin order.
func (t *Tally) sort() {
	slices.SortFunc(t.Counts, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Reason, b.Reason), strings.Compare(a.Dim, b.Dim), strings.Compare(a.Plugin, b.Plugin))
	})
}

// Refused is how many refusals the tally counts.
func (t Tally) Refused() int {
	n := 0
	for _, c := range t.Counts {
		n += c.N
	}
	return n
}

// String lists the counts, most frequent first, in the kube style: "3 short of
// memory, 2 short of cpu". It does not sort a tally built with Add: call Sorted first,
// or read a tally the framework returned (already sorted).
func (t Tally) String() string {
	var b strings.Builder
	for i, c := range t.Counts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// Sorted returns the tally with its counts in order (the most frequent first), as
// String and the framework's own tallies have them. The counts are copied.
func (t Tally) Sorted() Tally {
	t.Counts = slices.Clone(t.Counts)
	t.sort()
	return t
}

// Explain is the tally as one kube-style sentence about a task: "0/5 nodes can take
// it: 3 short of memory, 2 short of cpu; closest: node "n2", stage 0 needs …", ending
// "; unresolvable: …" when no node could hold it even empty.
func (t Tally) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d nodes can take it", t.Of-t.Refused(), t.Of)
	if len(t.Counts) > 0 {
		b.WriteString(": ")
		b.WriteString(t.String())
	}
	if t.Closest != "" {
		fmt.Fprintf(&b, "; closest: node %q, %v", t.Closest, t.Short)
	}
	if t.Unresolvable {
		b.WriteString("; unresolvable: no node could hold it even empty")
	}
	return b.String()
}
