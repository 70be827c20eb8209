package speculate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/finegrain/finegrain/resource"
)

// This file keeps the scale-up planner as it was first written — every candidate
// scored and sorted, every node scanned for a move — as the reference that Planner.Plan
// is checked against (TestPropPlanMatchesReference): it must plan, and refuse, exactly
// as this does. It shares nothing with scaleup.go but the exported types and the
// errors' helpers.

// refFits reports whether free has room for req on every dimension req asks for.
func refFits(free, req resource.Tuple) bool {
	for d := range req {
		if req[d] > 0 && free[d] < req[d] {
			return false
		}
	}
	return true
}

// refPositive returns t with negative slots set to zero.
func refPositive(t resource.Tuple) resource.Tuple { return t.Max(resource.Tuple{}) }

// refAddChecked returns a + b for non-negative tuples, and false on overflow.
func refAddChecked(a, b resource.Tuple) (resource.Tuple, bool) {
	for d := range a {
		if a[d] > math.MaxInt64-b[d] {
			return a, false
		}
		a[d] += b[d]
	}
	return a, true
}

// refRun is the working state of one ReferencePlan call.
type refRun struct {
	p     *Planner
	in    PlanInput
	idx   map[string]int
	free  []resource.Tuple // per node: capacity − allocated, as the plan goes
	most  resource.Tuple   // at least the largest free amount of any node, per dimension (roomFor)
	remR  []resource.Tuple // per batch task: reclaimable not yet taken
	remP  []resource.Tuple // per batch task: preemptible not yet taken
	local [][]int          // per node: its batch tasks, lowest priority first, then ID; built on first use
	avail resource.Tuple   // R_M
	plan  Plan
}

type refShrinkCand struct {
	i     int // index into in.Batch
	hot   bool
	prio  int
	score float64
}

// ReferencePlan is Plan computed the plain way, for tests only.
func (p *Planner) ReferencePlan(in PlanInput) (Plan, error) {
	idx, err := p.refValidate(in)
	if err != nil {
		return Plan{}, err
	}
	r := &refRun{p: p, in: in, idx: idx, free: make([]resource.Tuple, len(in.Nodes))}
	for i, n := range in.Nodes {
		r.free[i] = n.Capacity.Sub(n.Allocated)
		r.most = r.most.Max(r.free[i])
		r.plan.Idle, _ = refAddChecked(r.plan.Idle, refPositive(r.free[i])) // checked in validate
	}
	r.plan.Need = in.NewDemand
	for _, s := range in.Stragglers {
		r.plan.Need, _ = refAddChecked(r.plan.Need, s.Extra)
	}
	r.remR = make([]resource.Tuple, len(in.Batch))
	r.remP = make([]resource.Tuple, len(in.Batch))
	for i, b := range in.Batch {
		r.remR[i], r.remP[i] = b.Reclaimable, b.Preemptible
	}
	r.avail = r.plan.Idle
	needed := !r.avail.Covers(r.plan.Need) // step 2
	if needed {
		hot := make(map[int]bool)
		for _, s := range in.Stragglers {
			if n := idx[s.Node]; !refFits(r.free[n], s.Extra) {
				hot[n] = true
			}
		}
		short0 := refPositive(r.plan.Need.Sub(r.avail))
		for _, preempt := range []bool{false, true} { // steps 5–6, then 7
			for _, c := range r.refShrinkOrder(hot, short0, preempt) {
				if r.avail.Covers(r.plan.Need) {
					break
				}
				r.refShrink(c.i, preempt, refPositive(r.plan.Need.Sub(r.avail)), "")
			}
		}
	}
	r.refExpand() // steps 3–4, 8–9
	r.plan.Available = r.avail
	if p.cfg.recovery && !needed && r.plan.Reclaimed.IsZero() && r.plan.Preempted.IsZero() {
		r.refRecover()
	}
	return r.plan, nil
}

// refShrink takes from batch task i the part of its remaining reclaimable (preemptible)
// amount that is within limit, and plans the step; for names the straggler a local
// top-up serves.
func (r *refRun) refShrink(i int, preempt bool, limit resource.Tuple, forTask string) resource.Tuple {
	rem := &r.remR[i]
	kind := Reclaim
	if preempt {
		rem, kind = &r.remP[i], Preempt
	}
	take := rem.Min(limit)
	if take.IsZero() {
		return take
	}
	*rem = rem.Sub(take)
	t := &r.in.Batch[i]
	if preempt {
		r.plan.Preempted = r.plan.Preempted.Add(take)
	} else {
		r.plan.Reclaimed = r.plan.Reclaimed.Add(take)
	}
	r.plan.Steps = append(r.plan.Steps, Step{Kind: kind, Task: t.Task, Node: t.Node, For: forTask, Amount: take})
	n := r.idx[t.Node]
	r.free[n] = r.free[n].Add(take)
	r.most = r.most.Max(r.free[n])
	r.avail = r.avail.Add(take)
	return take
}

// refShrinkOrder lists the batch tasks that can help with the shortfall short0, in the
// order steps 5–7 take them (see Planner's Readings).
func (r *refRun) refShrinkOrder(hot map[int]bool, short0 resource.Tuple, preempt bool) []refShrinkCand {
	var cands []refShrinkCand
	for i := range r.in.Batch {
		t := &r.in.Batch[i]
		amount := t.Reclaimable
		if preempt {
			amount = t.Preemptible
		}
		score := 0.0
		for d := range amount {
			if short0[d] > 0 && amount[d] > 0 {
				score = max(score, float64(min(amount[d], short0[d]))/float64(short0[d]))
			}
		}
		if score == 0 {
			continue
		}
		cands = append(cands, refShrinkCand{i: i, hot: hot[r.idx[t.Node]], prio: t.Priority, score: score})
	}
	slices.SortFunc(cands, func(a, b refShrinkCand) int {
		if preempt && a.prio != b.prio {
			return cmp.Compare(a.prio, b.prio)
		}
		if a.hot != b.hot {
			if a.hot {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(r.in.Batch[a.i].Task, r.in.Batch[b.i].Task)
	})
	return cands
}

// refExpand plans steps 8–9 (and 3–4): each straggler in place, else moved, else — with
// the local top-up — in place after shrinking batch tasks on its node, else unserved.
func (r *refRun) refExpand() {
	in := r.in
	order := make([]int, 0, len(in.Stragglers))
	share := make([]float64, len(in.Stragglers))
	for i, s := range in.Stragglers {
		if s.Extra.IsZero() {
			continue
		}
		order = append(order, i)
		share[i] = s.Extra.DominantShare(in.Nodes[r.idx[s.Node]].Capacity)
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(share[b], share[a]); c != 0 {
			return c
		}
		return cmp.Compare(in.Stragglers[a].Task, in.Stragglers[b].Task)
	})
	for _, i := range order {
		s := &in.Stragglers[i]
		n := r.idx[s.Node]
		if refFits(r.free[n], s.Extra) {
			r.free[n] = r.free[n].Sub(s.Extra)
			r.plan.Steps = append(r.plan.Steps, Step{Kind: Expand, Task: s.Task, Node: s.Node, Amount: s.Extra})
			continue
		}
		if r.p.cfg.moves {
			whole := s.Allocated.Add(s.Extra) // checked in validate
			if t := r.refRoomFor(n, whole); t >= 0 {
				r.free[t] = r.free[t].Sub(whole)
				r.free[n] = r.free[n].Add(s.Allocated)
				r.most = r.most.Max(r.free[n])
				r.plan.Steps = append(r.plan.Steps, Step{Kind: Move, Task: s.Task, Node: in.Nodes[t].ID, From: s.Node, Amount: whole, Released: s.Allocated})
				continue
			}
		}
		if r.p.cfg.topUp && r.refTopUp(s, n) {
			r.free[n] = r.free[n].Sub(s.Extra)
			r.plan.Steps = append(r.plan.Steps, Step{Kind: Expand, Task: s.Task, Node: s.Node, Amount: s.Extra})
			continue
		}
		r.plan.Unserved = append(r.plan.Unserved, Unserved{Task: s.Task, Node: s.Node, Extra: s.Extra})
	}
}

// refTopUp makes room for straggler s on its node n by reclaiming, then preempting, from
// the batch tasks on n — only the deficit, and only if the node can cover all of it.
func (r *refRun) refTopUp(s *Straggler, n int) bool {
	deficit := s.Extra.Sub(r.free[n]).Only(refMask(s.Extra))
	deficit = refPositive(deficit)
	if r.local == nil {
		r.local = make([][]int, len(r.in.Nodes))
		for i := range r.in.Batch {
			n := r.idx[r.in.Batch[i].Node]
			r.local[n] = append(r.local[n], i)
		}
		for _, l := range r.local {
			slices.SortFunc(l, func(a, b int) int {
				if c := cmp.Compare(r.in.Batch[a].Priority, r.in.Batch[b].Priority); c != 0 {
					return c
				}
				return cmp.Compare(r.in.Batch[a].Task, r.in.Batch[b].Task)
			})
		}
	}
	local := r.local[n]
	var can resource.Tuple
	for _, i := range local {
		can, _ = refAddChecked(can, r.remR[i].Add(r.remP[i]).Min(deficit))
	}
	if !can.Covers(deficit) {
		return false
	}
	for _, preempt := range []bool{false, true} {
		for _, i := range local {
			if deficit.IsZero() {
				return true
			}
			deficit = deficit.Sub(r.refShrink(i, preempt, deficit, s.Task))
		}
	}
	return deficit.IsZero()
}

// refMask is the set of dimensions where t is positive.
func refMask(t resource.Tuple) resource.Mask {
	var m resource.Mask
	for d, x := range t {
		if x > 0 {
			m |= 1 << d
		}
	}
	return m
}

// refRoomFor is refBestTarget on the plan's free amounts, at once −1 when no node has room
// for req on some dimension: a saturated cluster makes every straggler look.
func (r *refRun) refRoomFor(from int, req resource.Tuple) int {
	if !refFits(r.most, req) {
		return -1
	}
	return refBestTarget(r.in.Nodes, r.free, from, req)
}

// refBestTarget returns the node other than from with room for req that keeps the most
// room — the largest smallest free share after the move — or −1.
func refBestTarget(nodes []Node, free []resource.Tuple, from int, req resource.Tuple) int {
	best, bestSlack := -1, 0.0
	for t := range nodes {
		if t == from || !refFits(free[t], req) {
			continue
		}
		slack := math.Inf(1)
		for d, c := range nodes[t].Capacity {
			if c > 0 {
				slack = min(slack, float64(free[t][d]-req[d])/float64(c))
			}
		}
		if best < 0 || slack > bestSlack || slack == bestSlack && nodes[t].ID < nodes[best].ID {
			best, bestSlack = t, slack
		}
	}
	return best
}

// refRecover plans the resource recovery: shrunk tasks get back what their node has free,
// within what R_NE leaves of R_IDLE, preempted tasks first, then by task ID.
func (r *refRun) refRecover() {
	in := r.in
	surplus := refPositive(r.plan.Idle.Sub(r.plan.Need))
	order := make([]int, len(in.Shrunk))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ra, rb := &in.Shrunk[a], &in.Shrunk[b]
		if ra.Preempted != rb.Preempted {
			if ra.Preempted {
				return -1
			}
			return 1
		}
		return cmp.Compare(ra.Task, rb.Task)
	})
	for _, i := range order {
		s := &in.Shrunk[i]
		n := r.idx[s.Node]
		give := s.Taken.Min(refPositive(r.free[n])).Min(surplus)
		if give.IsZero() {
			continue
		}
		r.free[n] = r.free[n].Sub(give)
		surplus = surplus.Sub(give)
		r.plan.Restored = r.plan.Restored.Add(give)
		r.plan.Steps = append(r.plan.Steps, Step{Kind: Restore, Task: s.Task, Node: s.Node, Amount: give})
	}
}

// refValidate checks in and returns the index of every node ID.
func (p *Planner) refValidate(in PlanInput) (map[string]int, error) {
	s := p.schema
	idx := make(map[string]int, len(in.Nodes))
	listed := make([]resource.Tuple, len(in.Nodes))
	var idle resource.Tuple
	for i, n := range in.Nodes {
		field := func(f string) string { return fmt.Sprintf("Nodes[%d].%s", i, f) }
		if n.ID == "" {
			return nil, fieldErr(field("ID"), n.ID, ErrEmptyID)
		}
		if _, dup := idx[n.ID]; dup {
			return nil, fieldErr(field("ID"), n.ID, ErrDuplicate)
		}
		if err := s.Validate(n.Capacity); err != nil {
			return nil, wrapf(err, "%s", field("Capacity"))
		}
		if err := s.Validate(n.Allocated); err != nil {
			return nil, wrapf(err, "%s", field("Allocated"))
		}
		if !n.Capacity.Only(s.NonCompressible()).Covers(n.Allocated.Only(s.NonCompressible())) {
			return nil, fieldErr(field("Allocated"), s.Format(n.Allocated)+" > capacity "+s.Format(n.Capacity), ErrOverCapacity)
		}
		var ok bool
		if idle, ok = refAddChecked(idle, refPositive(n.Capacity.Sub(n.Allocated))); !ok {
			return nil, fieldErr("Nodes", "free resources sum overflows int64", ErrInvalidValue)
		}
		idx[n.ID] = i
	}
	tasks := make(map[string]struct{}, len(in.Stragglers)+len(in.Batch))
	// task checks a task's ID and node, returning the node's index.
	task := func(field func(string) string, id, node string) (int, error) {
		if id == "" {
			return 0, fieldErr(field("Task"), id, ErrEmptyID)
		}
		if _, dup := tasks[id]; dup {
			return 0, fieldErr(field("Task"), id, ErrDuplicate)
		}
		tasks[id] = struct{}{}
		if node == "" {
			return 0, fieldErr(field("Node"), node, ErrEmptyID)
		}
		n, ok := idx[node]
		if !ok {
			return 0, fieldErr(field("Node"), node, ErrUnknownNode)
		}
		return n, nil
	}
	if err := s.Validate(in.NewDemand); err != nil {
		return nil, wrapf(err, "NewDemand")
	}
	need := in.NewDemand
	for i, st := range in.Stragglers {
		field := func(f string) string { return fmt.Sprintf("Stragglers[%d].%s", i, f) }
		n, err := task(field, st.Task, st.Node)
		if err != nil {
			return nil, err
		}
		if err := s.Validate(st.Allocated); err != nil {
			return nil, wrapf(err, "%s", field("Allocated"))
		}
		if err := s.Validate(st.Extra); err != nil {
			return nil, wrapf(err, "%s", field("Extra"))
		}
		var ok1, ok2, ok3 bool
		need, ok1 = refAddChecked(need, st.Extra)
		_, ok2 = refAddChecked(st.Allocated, st.Extra)
		listed[n], ok3 = refAddChecked(listed[n], st.Allocated)
		if !ok1 || !ok2 || !ok3 {
			return nil, fieldErr(field("Extra"), "amounts sum overflows int64", ErrInvalidValue)
		}
	}
	for i, b := range in.Batch {
		field := func(f string) string { return fmt.Sprintf("Batch[%d].%s", i, f) }
		n, err := task(field, b.Task, b.Node)
		if err != nil {
			return nil, err
		}
		if err := s.Validate(b.Allocated); err != nil {
			return nil, wrapf(err, "%s", field("Allocated"))
		}
		if err := s.Validate(b.Reclaimable); err != nil {
			return nil, wrapf(err, "%s", field("Reclaimable"))
		}
		if err := s.Validate(b.Preemptible); err != nil {
			return nil, wrapf(err, "%s", field("Preemptible"))
		}
		shrink, ok := refAddChecked(b.Reclaimable, b.Preemptible)
		if !ok || !b.Allocated.Covers(shrink) {
			return nil, fieldErr(field("Preemptible"), fmt.Sprintf("reclaimable %s + preemptible %s > allocated %s",
				s.Format(b.Reclaimable), s.Format(b.Preemptible), s.Format(b.Allocated)), ErrInconsistent)
		}
		if listed[n], ok = refAddChecked(listed[n], b.Allocated); !ok {
			return nil, fieldErr(field("Allocated"), "amounts sum overflows int64", ErrInvalidValue)
		}
	}
	for i, n := range in.Nodes {
		if !n.Allocated.Covers(listed[i]) {
			return nil, fieldErr(fmt.Sprintf("Nodes[%d].Allocated", i),
				fmt.Sprintf("%s < %s held by the tasks listed on %s", s.Format(n.Allocated), s.Format(listed[i]), n.ID), ErrInconsistent)
		}
	}
	shrunk := make(map[string]struct{}, len(in.Shrunk))
	for i, r := range in.Shrunk {
		field := func(f string) string { return fmt.Sprintf("Shrunk[%d].%s", i, f) }
		if r.Task == "" {
			return nil, fieldErr(field("Task"), r.Task, ErrEmptyID)
		}
		if _, dup := shrunk[r.Task]; dup {
			return nil, fieldErr(field("Task"), r.Task, ErrDuplicate)
		}
		shrunk[r.Task] = struct{}{}
		if _, ok := idx[r.Node]; !ok {
			if r.Node == "" {
				return nil, fieldErr(field("Node"), r.Node, ErrEmptyID)
			}
			return nil, fieldErr(field("Node"), r.Node, ErrUnknownNode)
		}
		if err := s.Validate(r.Taken); err != nil {
			return nil, wrapf(err, "%s", field("Taken"))
		}
	}
	return idx, nil
}
