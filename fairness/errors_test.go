package fairness_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
)

// dump is everything observable about a tree: every entry, depth first, and the offer
// order.
func dump(t *testing.T, tree *fairness.Tree) []any {
	t.Helper()
	var out []any
	var rec func(q string)
	rec = func(q string) {
		es, err := tree.Snapshot(q)
		require.NoError(t, err)
		for _, e := range es {
			out = append(out, e)
			if e.Kind == fairness.KindQueue {
				rec(e.ID)
			}
		}
	}
	root, err := tree.Queue("")
	require.NoError(t, err)
	out = append(out, root, tree.Capacity(), tree.Len())
	rec("")
	return append(out, collect(tree))
}

func sampleTree(t *testing.T) *fairness.Tree {
	t.Helper()
	tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(100, 100))
	require.NoError(t, err)
	require.NoError(t, tree.AddQueue("", "q", fairness.MaxShare(0.5)))
	require.NoError(t, tree.AddQueue("q", "sub", fairness.OrderedBy(fairness.Fair{})))
	require.NoError(t, tree.AddJob("q", "j", fairness.Weight(2)))
	require.NoError(t, tree.AddJob("sub", "k", fairness.MaxShare(3)))
	require.NoError(t, tree.AddPending("j", 4, cpuMem.MustTuple(4, 8)))
	require.NoError(t, tree.AddPending("k", 2, cpuMem.MustTuple(2, 2)))
	require.NoError(t, tree.Start("j", cpuMem.MustTuple(1, 2), cpuMem.MustTuple(1, 2)))
	require.NoError(t, tree.Allocate("k", cpuMem.MustTuple(5, 1)))
	return tree
}

func TestTreeErrors(t *testing.T) {
	big := cpuMem.MustTuple(1000, 1000)
	neg := resource.Tuple{-1}
	outside := resource.Tuple{0, 0, 5}
	for _, c := range []struct {
		name string
		op   func(*fairness.Tree) error
		want error
	}{
		{"queue empty ID", func(tr *fairness.Tree) error { return tr.AddQueue("", "") }, fairness.ErrInvalidID},
		{"queue duplicate", func(tr *fairness.Tree) error { return tr.AddQueue("", "q") }, fairness.ErrDuplicate},
		{"queue duplicate deeper", func(tr *fairness.Tree) error { return tr.AddQueue("sub", "q") }, fairness.ErrDuplicate},
		{"queue unknown parent", func(tr *fairness.Tree) error { return tr.AddQueue("nope", "x") }, fairness.ErrUnknownQueue},
		{"queue under a job", func(tr *fairness.Tree) error { return tr.AddQueue("j", "x") }, fairness.ErrUnknownQueue},
		{"queue zero weight", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.Weight(0)) }, fairness.ErrInvalidWeight},
		{"queue negative weight", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.Weight(-1)) }, fairness.ErrInvalidWeight},
		{"queue NaN weight", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.Weight(math.NaN())) }, fairness.ErrInvalidWeight},
		{"queue Inf weight", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.Weight(math.Inf(1))) }, fairness.ErrInvalidWeight},
		{"queue negative min", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.MinShare(-0.1)) }, fairness.ErrInvalidShare},
		{"queue NaN min", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.MinShare(math.NaN())) }, fairness.ErrInvalidShare},
		{"queue Inf min", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.MinShare(math.Inf(1))) }, fairness.ErrInvalidShare},
		{"queue NaN max", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.MaxShare(math.NaN())) }, fairness.ErrInvalidShare},
		{"queue negative max", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.MaxShare(-1)) }, fairness.ErrInvalidShare},
		{"queue min above max", func(tr *fairness.Tree) error {
			return tr.AddQueue("", "x", fairness.MinShare(0.6), fairness.MaxShare(0.5))
		}, fairness.ErrMinAboveMax},
		{"queue nil policy", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.OrderedBy(nil)) }, fairness.ErrNilPolicy},
		{"queue nil option", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.Weight(2), nil) }, fairness.ErrNilOption},
		{"job nil option", func(tr *fairness.Tree) error { return tr.AddJob("q", "x", nil) }, fairness.ErrNilOption},
		{"update queue nil option", func(tr *fairness.Tree) error { return tr.UpdateQueue("q", fairness.Weight(3), nil) }, fairness.ErrNilOption},
		{"update job nil option", func(tr *fairness.Tree) error { return tr.UpdateJob("j", nil) }, fairness.ErrNilOption},
		{"job empty ID", func(tr *fairness.Tree) error { return tr.AddJob("q", "") }, fairness.ErrInvalidID},
		{"job duplicate", func(tr *fairness.Tree) error { return tr.AddJob("", "k") }, fairness.ErrDuplicate},
		{"job unknown queue", func(tr *fairness.Tree) error { return tr.AddJob("nope", "x") }, fairness.ErrUnknownQueue},
		{"job bad weight", func(tr *fairness.Tree) error { return tr.AddJob("q", "x", fairness.Weight(0)) }, fairness.ErrInvalidWeight},
		{"job with policy", func(tr *fairness.Tree) error { return tr.AddJob("q", "x", fairness.OrderedBy(fairness.FIFO{})) }, fairness.ErrInvalidKind},
		{"job min above max", func(tr *fairness.Tree) error {
			return tr.AddJob("q", "x", fairness.WithShare(fairness.Share{Weight: 1, Min: 2, Max: 1}))
		}, fairness.ErrMinAboveMax},
		{"update unknown queue", func(tr *fairness.Tree) error { return tr.UpdateQueue("nope", fairness.Weight(2)) }, fairness.ErrUnknownQueue},
		{"update root", func(tr *fairness.Tree) error { return tr.UpdateQueue("", fairness.Weight(2)) }, fairness.ErrInvalidID},
		{"update queue bad", func(tr *fairness.Tree) error { return tr.UpdateQueue("q", fairness.MinShare(0.9)) }, fairness.ErrMinAboveMax},
		{"update unknown job", func(tr *fairness.Tree) error { return tr.UpdateJob("nope", fairness.Weight(2)) }, fairness.ErrUnknownJob},
		{"update job bad", func(tr *fairness.Tree) error { return tr.UpdateJob("j", fairness.Weight(-2)) }, fairness.ErrInvalidWeight},
		{"update job policy", func(tr *fairness.Tree) error { return tr.UpdateJob("j", fairness.OrderedBy(fairness.Fair{})) }, fairness.ErrInvalidKind},
		{"job negative slot", func(tr *fairness.Tree) error { return tr.AddJob("q", "x", fairness.Slot(-1)) }, fairness.ErrInvalidCount},
		{"queue slot", func(tr *fairness.Tree) error { return tr.AddQueue("", "x", fairness.Slot(3)) }, fairness.ErrInvalidKind},
		{"update job negative slot", func(tr *fairness.Tree) error { return tr.UpdateJob("j", fairness.Slot(-5)) }, fairness.ErrInvalidCount},
		{"remove unknown job", func(tr *fairness.Tree) error { return tr.RemoveJob("nope") }, fairness.ErrUnknownJob},
		{"remove unknown queue", func(tr *fairness.Tree) error { return tr.RemoveQueue("nope") }, fairness.ErrUnknownQueue},
		{"remove root", func(tr *fairness.Tree) error { return tr.RemoveQueue("") }, fairness.ErrInvalidID},
		{"remove non-empty queue", func(tr *fairness.Tree) error { return tr.RemoveQueue("q") }, fairness.ErrNotEmpty},
		{"pending unknown job", func(tr *fairness.Tree) error { return tr.AddPending("nope", 1, resource.Tuple{}) }, fairness.ErrUnknownJob},
		{"pending zero tasks", func(tr *fairness.Tree) error { return tr.AddPending("j", 0, resource.Tuple{}) }, fairness.ErrInvalidCount},
		{"pending negative tasks", func(tr *fairness.Tree) error { return tr.AddPending("j", -1, resource.Tuple{}) }, fairness.ErrInvalidCount},
		{"pending count overflows", func(tr *fairness.Tree) error { return tr.AddPending("k", math.MaxInt-3, resource.Tuple{}) }, fairness.ErrInvalidCount},
		{"pending negative demand", func(tr *fairness.Tree) error { return tr.AddPending("j", 1, neg) }, resource.ErrNegative},
		{"pending outside schema", func(tr *fairness.Tree) error { return tr.AddPending("j", 1, outside) }, resource.ErrOutsideSchema},
		{"remove pending unknown", func(tr *fairness.Tree) error { return tr.RemovePending("nope", 1, resource.Tuple{}) }, fairness.ErrUnknownJob},
		{"remove pending zero", func(tr *fairness.Tree) error { return tr.RemovePending("j", 0, resource.Tuple{}) }, fairness.ErrInvalidCount},
		{"remove pending too many", func(tr *fairness.Tree) error { return tr.RemovePending("j", 4, resource.Tuple{}) }, fairness.ErrUnderflow},
		{"remove pending too much", func(tr *fairness.Tree) error { return tr.RemovePending("j", 1, big) }, fairness.ErrUnderflow},
		{"remove pending negative", func(tr *fairness.Tree) error { return tr.RemovePending("j", 1, neg) }, resource.ErrNegative},
		{"start unknown", func(tr *fairness.Tree) error { return tr.Start("nope", resource.Tuple{}, resource.Tuple{}) }, fairness.ErrUnknownJob},
		{"start nothing pending", func(tr *fairness.Tree) error {
			require.NoError(t, tr.AddJob("q", "empty"))
			return tr.Start("empty", resource.Tuple{}, resource.Tuple{})
		}, fairness.ErrUnderflow},
		{"start request too big", func(tr *fairness.Tree) error { return tr.Start("j", big, resource.Tuple{}) }, fairness.ErrUnderflow},
		{"start negative usage", func(tr *fairness.Tree) error { return tr.Start("j", resource.Tuple{}, neg) }, resource.ErrNegative},
		{"allocate unknown", func(tr *fairness.Tree) error { return tr.Allocate("nope", resource.Tuple{}) }, fairness.ErrUnknownJob},
		{"allocate negative", func(tr *fairness.Tree) error { return tr.Allocate("j", neg) }, resource.ErrNegative},
		{"release unknown", func(tr *fairness.Tree) error { return tr.Release("nope", resource.Tuple{}) }, fairness.ErrUnknownJob},
		{"release more than held", func(tr *fairness.Tree) error { return tr.Release("j", cpuMem.MustTuple(2, 2)) }, fairness.ErrUnderflow},
		{"release with none running", func(tr *fairness.Tree) error {
			require.NoError(t, tr.AddJob("q", "idle"))
			return tr.Release("idle", resource.Tuple{})
		}, fairness.ErrUnderflow},
		{"release outside schema", func(tr *fairness.Tree) error { return tr.Release("j", outside) }, resource.ErrOutsideSchema},
		{"resize unknown", func(tr *fairness.Tree) error { return tr.Resize("nope", resource.Tuple{}, resource.Tuple{}) }, fairness.ErrUnknownJob},
		{"resize from more than held", func(tr *fairness.Tree) error { return tr.Resize("j", cpuMem.MustTuple(2, 2), resource.Tuple{}) }, fairness.ErrUnderflow},
		{"resize with none running", func(tr *fairness.Tree) error {
			require.NoError(t, tr.AddJob("q", "idle"))
			return tr.Resize("idle", resource.Tuple{}, resource.Tuple{})
		}, fairness.ErrUnderflow},
		{"resize to negative", func(tr *fairness.Tree) error { return tr.Resize("j", resource.Tuple{}, neg) }, resource.ErrNegative},
		{"resize to outside schema", func(tr *fairness.Tree) error { return tr.Resize("j", resource.Tuple{}, outside) }, resource.ErrOutsideSchema},
		{"resize from outside schema", func(tr *fairness.Tree) error { return tr.Resize("j", outside, resource.Tuple{}) }, resource.ErrOutsideSchema},
		{"admit unknown", func(tr *fairness.Tree) error { return tr.Admit("nope", resource.Tuple{}) }, fairness.ErrUnknownJob},
		{"admit negative", func(tr *fairness.Tree) error { return tr.Admit("j", neg) }, resource.ErrNegative},
		{"admit over queue max", func(tr *fairness.Tree) error { return tr.Admit("j", cpuMem.MustTuple(60, 0)) }, fairness.ErrOverMax},
		{"admit over job max (tasks, Fair)", func(tr *fairness.Tree) error {
			require.NoError(t, tr.Admit("k", resource.Tuple{}), "a 2nd running task is within max 3")
			require.NoError(t, tr.Allocate("k", resource.Tuple{}))
			require.NoError(t, tr.Admit("k", resource.Tuple{}), "a 3rd too")
			require.NoError(t, tr.Allocate("k", resource.Tuple{}))
			return tr.Admit("k", resource.Tuple{})
		}, fairness.ErrOverMax},
		{"capacity negative", func(tr *fairness.Tree) error { return tr.SetCapacity(neg) }, resource.ErrNegative},
		{"snapshot unknown", func(tr *fairness.Tree) error { _, err := tr.Snapshot("nope"); return err }, fairness.ErrUnknownQueue},
		{"queue entry unknown", func(tr *fairness.Tree) error { _, err := tr.Queue("nope"); return err }, fairness.ErrUnknownQueue},
		{"job entry unknown", func(tr *fairness.Tree) error { _, err := tr.Job("nope"); return err }, fairness.ErrUnknownJob},
		{"parent unknown job", func(tr *fairness.Tree) error { _, err := tr.Parent(fairness.KindJob, "nope"); return err }, fairness.ErrUnknownJob},
		{"parent unknown queue", func(tr *fairness.Tree) error { _, err := tr.Parent(fairness.KindQueue, "nope"); return err }, fairness.ErrUnknownQueue},
		{"parent of root", func(tr *fairness.Tree) error { _, err := tr.Parent(fairness.KindQueue, ""); return err }, fairness.ErrInvalidID},
		{"parent bad kind", func(tr *fairness.Tree) error { _, err := tr.Parent(fairness.KindTask, "j"); return err }, fairness.ErrInvalidKind},
		{"walk children unknown", func(tr *fairness.Tree) error {
			return tr.WalkChildren("nope", func(string, fairness.Kind) bool { return true })
		}, fairness.ErrUnknownQueue},
	} {
		t.Run(c.name, func(t *testing.T) {
			tree := sampleTree(t)
			before := dump(t, tree)
			err := c.op(tree)
			require.ErrorIs(t, err, c.want)
			assert.Contains(t, err.Error(), "fairness:")
			after := dump(t, tree)
			if c.name != "start nothing pending" && c.name != "release with none running" && c.name != "resize with none running" && c.name != "admit over job max (tasks, Fair)" {
				assert.Equal(t, before, after, "a rejected call changed the tree")
			}
		})
	}
}

func TestErrorsNameFieldAndValue(t *testing.T) {
	tree := sampleTree(t)
	err := tree.AddJob("q", "x", fairness.Weight(-3))
	var fe *fairness.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, `job "x" weight`, fe.Field)
	assert.Equal(t, -3.0, fe.Value)
	assert.Equal(t, `fairness: job "x" weight = -3: weight must be a positive finite number`, err.Error())

	err = tree.Release("j", cpuMem.MustTuple(2, 2))
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, fe.Field, `job "j" running amount`)
}

func TestNewTreeErrors(t *testing.T) {
	_, err := fairness.NewTree(nil, resource.Tuple{})
	require.ErrorIs(t, err, resource.ErrSchemaMismatch)
	_, err = fairness.NewTree(cpuMem, resource.Tuple{-1})
	require.ErrorIs(t, err, resource.ErrNegative)
	_, err = fairness.NewTree(cpuMem, resource.Tuple{1, 1, 1})
	require.ErrorIs(t, err, resource.ErrOutsideSchema)
	_, err = fairness.NewTree(cpuMem, resource.Tuple{}, fairness.WithPolicy(nil))
	require.ErrorIs(t, err, fairness.ErrNilPolicy)
	_, err = fairness.NewTree(cpuMem, resource.Tuple{}, fairness.WithPolicy(fairness.FIFO{}), nil)
	require.ErrorIs(t, err, fairness.ErrNilOption)
	require.ErrorContains(t, err, "tree options[1]")
}

func TestSortErrors(t *testing.T) {
	ok := fairness.Entry{ID: "a", Share: fairness.DefaultShare()}
	for _, c := range []struct {
		name    string
		schema  *resource.Schema
		policy  fairness.Policy
		cap     resource.Tuple
		entries []fairness.Entry
		want    error
	}{
		{"nil schema", nil, fairness.DRF{}, resource.Tuple{}, nil, resource.ErrSchemaMismatch},
		{"nil policy", cpuMem, nil, resource.Tuple{}, nil, fairness.ErrNilPolicy},
		{"bad capacity", cpuMem, fairness.DRF{}, resource.Tuple{-1}, nil, resource.ErrNegative},
		{"empty ID", cpuMem, fairness.DRF{}, resource.Tuple{}, []fairness.Entry{{Share: fairness.DefaultShare()}}, fairness.ErrInvalidID},
		{"duplicate", cpuMem, fairness.DRF{}, resource.Tuple{}, []fairness.Entry{ok, ok}, fairness.ErrDuplicate},
		{"zero weight", cpuMem, fairness.DRF{}, resource.Tuple{}, []fairness.Entry{{ID: "a"}}, fairness.ErrInvalidWeight},
		{"bad kind", cpuMem, fairness.DRF{}, resource.Tuple{}, []fairness.Entry{{ID: "a", Kind: 7, Share: fairness.DefaultShare()}}, fairness.ErrInvalidKind},
		{"negative running", cpuMem, fairness.Fair{}, resource.Tuple{}, []fairness.Entry{{ID: "a", Share: fairness.DefaultShare(), Running: -1}}, fairness.ErrInvalidCount},
		{"negative pending", cpuMem, fairness.Fair{}, resource.Tuple{}, []fairness.Entry{{ID: "a", Share: fairness.DefaultShare(), Pending: -1}}, fairness.ErrInvalidCount},
		{"negative usage", cpuMem, fairness.DRF{}, resource.Tuple{}, []fairness.Entry{{ID: "a", Share: fairness.DefaultShare(), Usage: resource.Tuple{-1}}}, resource.ErrNegative},
		{"demand outside schema", cpuMem, fairness.DRF{}, resource.Tuple{}, []fairness.Entry{{ID: "a", Share: fairness.DefaultShare(), Demand: resource.Tuple{0, 0, 1}}}, resource.ErrOutsideSchema},
		{"min above max", cpuMem, fairness.DRF{}, resource.Tuple{}, []fairness.Entry{{ID: "a", Share: fairness.Share{Weight: 1, Min: 2, Max: 1}}}, fairness.ErrMinAboveMax},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := append([]fairness.Entry(nil), c.entries...)
			err := fairness.Sort(c.schema, c.policy, c.cap, c.entries)
			require.ErrorIs(t, err, c.want)
			assert.Equal(t, before, c.entries)
		})
	}
}

func TestShareValidate(t *testing.T) {
	for _, c := range []struct {
		s    fairness.Share
		want error
	}{
		{fairness.DefaultShare(), nil},
		{fairness.Share{Weight: 1, Min: 1, Max: math.Inf(1)}, nil},
		{fairness.Share{Weight: 1, Min: 5, Max: 0}, nil}, // no max
		{fairness.Share{Weight: 1, Min: 5, Max: 5}, nil},
		{fairness.Share{}, fairness.ErrInvalidWeight},
		{fairness.Share{Weight: math.NaN()}, fairness.ErrInvalidWeight},
		{fairness.Share{Weight: 1, Min: math.NaN()}, fairness.ErrInvalidShare},
		{fairness.Share{Weight: 1, Max: math.Inf(-1)}, fairness.ErrInvalidShare},
		{fairness.Share{Weight: 1, Min: 2, Max: 1}, fairness.ErrMinAboveMax},
	} {
		err := c.s.Validate()
		if c.want == nil {
			assert.NoError(t, err, "%+v", c.s)
		} else {
			assert.ErrorIs(t, err, c.want, "%+v", c.s)
		}
	}
}

func TestWaterFillErrors(t *testing.T) {
	good := fairness.Claim{Weight: 1, Demand: 1}
	for _, c := range []struct {
		name   string
		cap    float64
		claims []fairness.Claim
		want   error
	}{
		{"negative capacity", -1, nil, fairness.ErrInvalidShare},
		{"NaN capacity", math.NaN(), nil, fairness.ErrInvalidShare},
		{"Inf capacity", math.Inf(1), nil, fairness.ErrInvalidShare},
		{"zero weight", 1, []fairness.Claim{good, {Demand: 1}}, fairness.ErrInvalidWeight},
		{"NaN weight", 1, []fairness.Claim{{Weight: math.NaN()}}, fairness.ErrInvalidWeight},
		{"negative min", 1, []fairness.Claim{{Weight: 1, Min: -1}}, fairness.ErrInvalidShare},
		{"NaN max", 1, []fairness.Claim{{Weight: 1, Max: math.NaN()}}, fairness.ErrInvalidShare},
		{"min above max", 1, []fairness.Claim{{Weight: 1, Min: 3, Max: 2}}, fairness.ErrMinAboveMax},
		{"negative demand", 1, []fairness.Claim{{Weight: 1, Demand: -1}}, fairness.ErrInvalidShare},
		{"NaN demand", 1, []fairness.Claim{{Weight: 1, Demand: math.NaN()}}, fairness.ErrInvalidShare},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := fairness.WaterFill(c.cap, c.claims)
			require.ErrorIs(t, err, c.want)
		})
	}
	_, err := fairness.WaterFill(1, []fairness.Claim{good, {Weight: -1}})
	assert.ErrorContains(t, err, "claim 1 weight")
}

func TestJainErrors(t *testing.T) {
	_, err := fairness.Jain(nil)
	require.ErrorIs(t, err, fairness.ErrEmpty)
	for _, x := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err := fairness.Jain([]float64{1, x})
		require.ErrorIs(t, err, fairness.ErrInvalidShare)
		assert.ErrorContains(t, err, "allocation 1")
	}
}

func TestProgressiveFillingErrors(t *testing.T) {
	c := cpuMem.MustTuple(9, 18)
	task := cpuMem.MustTuple(1, 1)
	for _, x := range []struct {
		name   string
		schema *resource.Schema
		cap    resource.Tuple
		users  []fairness.User
		want   error
	}{
		{"nil schema", nil, c, nil, resource.ErrSchemaMismatch},
		{"bad capacity", cpuMem, resource.Tuple{-1}, nil, resource.ErrNegative},
		{"zero weight", cpuMem, c, []fairness.User{{Task: task}}, fairness.ErrInvalidWeight},
		{"negative task", cpuMem, c, []fairness.User{{Task: resource.Tuple{-1}, Weight: 1}}, resource.ErrNegative},
		{"negative tasks", cpuMem, c, []fairness.User{{Task: task, Weight: 1, Tasks: -1}}, fairness.ErrInvalidCount},
		{"zero task unbounded", cpuMem, c, []fairness.User{{Weight: 1}}, fairness.ErrInvalidCount},
	} {
		t.Run(x.name, func(t *testing.T) {
			_, err := fairness.ProgressiveFilling(x.schema, x.cap, x.users)
			require.ErrorIs(t, err, x.want)
		})
	}
}

func TestDelayErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  fairness.DelayOption
		want string
	}{
		{"negative W1", fairness.WithWaits(-1, 0), "W1"},
		{"negative W2", fairness.WithWaits(0, -time.Second), "W2"},
		{"overflowing waits", fairness.WithWaits(math.MaxInt64, 1), "W1+W2"},
		{"negative D1", fairness.WithSkips(-1, 0), "D1"},
		{"negative D2", fairness.WithSkips(0, -1), "D2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := fairness.NewDelay(c.opt)
			require.ErrorIs(t, err, fairness.ErrInvalidWait)
			assert.ErrorContains(t, err, c.want)
		})
	}
	_, err := fairness.NewDelay(fairness.WithSkips(1, 1), nil)
	require.ErrorIs(t, err, fairness.ErrNilOption)
	assert.ErrorContains(t, err, "delay options[1]")
	d, err := fairness.NewDelay()
	require.NoError(t, err)
	require.NoError(t, d.Heartbeat(10))
	_, _, err = d.Offer("j", fairness.NodeLocal+1) // RackLocal: fine, passes
	require.NoError(t, err)
	before := d.State("j")
	require.ErrorIs(t, d.Heartbeat(9), fairness.ErrTimeBackwards)
	assert.Equal(t, before, d.State("j"))
	_, _, err = d.Offer("j", fairness.OffSwitch+1)
	require.ErrorIs(t, err, fairness.ErrInvalidLevel)
	assert.Equal(t, before, d.State("j"))
	require.NoError(t, d.Heartbeat(12))
	assert.Equal(t, 2*time.Nanosecond, d.State("j").Wait, "the rejected heartbeat changed nothing")
}

func TestPendingErrors(t *testing.T) {
	p := fairness.NewPending()
	require.NoError(t, p.Add(fairness.PendingTask{ID: "t", Job: "j", Locations: []fairness.Location{{Node: "n", Rack: "r"}}}))
	for _, c := range []struct {
		name string
		task fairness.PendingTask
		want error
	}{
		{"empty ID", fairness.PendingTask{Job: "j"}, fairness.ErrInvalidID},
		{"empty job", fairness.PendingTask{ID: "u"}, fairness.ErrInvalidID},
		{"duplicate", fairness.PendingTask{ID: "t", Job: "k"}, fairness.ErrDuplicate},
		{"location without node", fairness.PendingTask{ID: "u", Job: "j", Locations: []fairness.Location{{Node: "n"}, {Rack: "r"}}}, fairness.ErrInvalidLocation},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorIs(t, p.Add(c.task), c.want)
			assert.Equal(t, 1, p.Len())
			assert.Equal(t, 1, p.JobLen("j"))
			l, ok := p.Best("j", "other", "r")
			assert.True(t, ok)
			assert.Equal(t, fairness.RackLocal, l)
		})
	}
	require.ErrorIs(t, p.Remove("nope"), fairness.ErrUnknownTask)
	assert.Equal(t, 1, p.Len())
}

// PendingIndex.Insert refuses, changing nothing, what Pending.Add refuses, and entries
// it cannot hold: nil, already indexed, racks not matching the nodes; Delete refuses an
// entry it does not hold.
func TestPendingIndexErrors(t *testing.T) {
	type entry = fairness.PendingEntry[int]
	p, other := fairness.NewPendingIndex[int](), fairness.NewPendingIndex[int]()
	held := &entry{ID: "t", Job: "j", Nodes: []string{"n"}, Racks: []string{"r"}}
	require.NoError(t, p.Insert(held))
	elsewhere := &entry{ID: "x", Job: "j"}
	require.NoError(t, other.Insert(elsewhere))
	for _, c := range []struct {
		name  string
		entry *entry
		want  error
	}{
		{"nil", nil, fairness.ErrInvalidID},
		{"indexed", held, fairness.ErrDuplicate},
		{"indexed elsewhere", elsewhere, fairness.ErrDuplicate},
		{"empty ID", &entry{Job: "j"}, fairness.ErrInvalidID},
		{"empty job", &entry{ID: "u"}, fairness.ErrInvalidID},
		{"alike", &entry{ID: "t", Job: "j"}, fairness.ErrDuplicate},
		{"node without name", &entry{ID: "u", Job: "j", Nodes: []string{"n", ""}}, fairness.ErrInvalidLocation},
		{"racks short", &entry{ID: "u", Job: "j", Nodes: []string{"n", "m"}, Racks: []string{"r"}}, fairness.ErrInvalidLocation},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorIs(t, p.Insert(c.entry), c.want)
			assert.Equal(t, 1, p.Len())
			assert.Equal(t, 1, p.JobLen("j"))
			if c.entry != nil && c.entry != held && c.entry != elsewhere {
				assert.False(t, c.entry.Indexed())
			}
			e, l, ok := p.First("j", "other", "r", fairness.OffSwitch)
			require.True(t, ok)
			assert.Equal(t, held, e)
			assert.Equal(t, fairness.RackLocal, l)
		})
	}
	// A nil reference is none: the job is looked up by ID.
	e, l, ok := p.FirstByRef(nil, "j", "n", "r", fairness.OffSwitch)
	assert.True(t, ok)
	assert.Equal(t, held, e)
	assert.Equal(t, fairness.NodeLocal, l)
	l, ok = p.BestByRef(nil, "j", "n", "r")
	assert.True(t, ok)
	assert.Equal(t, fairness.NodeLocal, l)
	visited := 0
	p.AscendByRef(nil, "j", "n", "r", fairness.OffSwitch, func(*entry, fairness.Level) bool { visited++; return true })
	assert.Equal(t, 1, visited)
	d, err := fairness.NewDelay()
	require.NoError(t, err)
	assert.Equal(t, fairness.NodeLocal, d.AllowedByRef(nil, "j"))
	_, _, err = d.OfferByRef(nil, "j", fairness.Level(9))
	require.ErrorIs(t, err, fairness.ErrInvalidLevel)
	assert.Zero(t, d.Len(), "a refused offer changes nothing")

	require.ErrorIs(t, p.Delete(nil), fairness.ErrUnknownTask)
	require.ErrorIs(t, p.Delete(&entry{ID: "t", Job: "j"}), fairness.ErrUnknownTask)
	require.ErrorIs(t, p.Delete(elsewhere), fairness.ErrUnknownTask)
	copied := *p // a copy of the index does not hold the original's entries
	require.ErrorIs(t, copied.Delete(held), fairness.ErrUnknownTask)
	assert.True(t, held.Indexed())
	assert.Equal(t, 1, p.Len())
	require.NoError(t, p.Delete(held))
	assert.Equal(t, 0, p.Len())
	assert.False(t, held.Indexed())
}

func TestErrorsAreDistinct(t *testing.T) {
	all := []error{fairness.ErrInvalidWeight, fairness.ErrInvalidShare, fairness.ErrMinAboveMax,
		fairness.ErrUnknownQueue, fairness.ErrUnknownJob, fairness.ErrUnknownTask, fairness.ErrDuplicate,
		fairness.ErrInvalidID, fairness.ErrNotEmpty, fairness.ErrUnderflow, fairness.ErrOverMax,
		fairness.ErrInvalidCount, fairness.ErrInvalidWait, fairness.ErrTimeBackwards, fairness.ErrInvalidLevel,
		fairness.ErrInvalidLocation, fairness.ErrEmpty, fairness.ErrInvalidKind, fairness.ErrNilPolicy}
	for i, a := range all {
		for j, b := range all {
			assert.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
	}
}
