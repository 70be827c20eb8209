package framework_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/plugins"
)

// gang is a tiny gang-scheduling Permit plugin: a task of one of its jobs waits
// until k members of its job are reserved, and the k-th allows all of them.
type gang struct {
	named
	k    int
	jobs map[string]bool
	errs []error
}

func (g *gang) Permit(c *framework.Cycle, a *framework.Attempt) (framework.Status, time.Duration) {
	if !g.jobs[a.Task.Job()] {
		return framework.Status{}, 0
	}
	var members []string
	for _, t := range c.Waiting() {
		if t.Job() == a.Task.Job() && t.State() == cluster.Reserved {
			members = append(members, t.ID())
		}
	}
	if len(members)+1 < g.k {
		return framework.Status{Code: framework.Wait}, time.Hour
	}
	for _, id := range members {
		if err := c.Allow(id); err != nil {
			g.errs = append(g.errs, err)
		}
	}
	return framework.Status{}, 0
}

func waitingIDs(c *framework.Cycle) []string {
	var ids []string
	for _, t := range c.Waiting() {
		ids = append(ids, t.ID())
	}
	return ids
}

func TestPermitSuccessCommits(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	var log []string
	r := &recorder{named: named{"R"}, log: &log}
	fw := f.framework(t, with(f.base(t), r, &permitFunc{named: named{"Yes"}}))
	as, err := fw.Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, "n1", as.Node)
	assert.Equal(t, cluster.Running, tk.State())
	assert.Equal(t, 1, f.st.Count(cluster.Running))
	assert.Zero(t, f.st.Count(cluster.Reserved))
	assert.Equal(t, []string{"R.Reserve:t1"}, log)
	assert.Empty(t, fw.TakePermitted())
}

func TestPermitUnschedulableRollsBack(t *testing.T) {
	deny := func(_ *framework.Cycle, a *framework.Attempt) (framework.Status, time.Duration) {
		return framework.Refuse(framework.QoS), 0
	}
	t.Run("push", func(t *testing.T) {
		f := threeNodes(t)
		tk := f.submit(t, "j", "t1", 1000, 1)
		before := takeSnapshot(t, f.st, "t1")
		var log []string
		r := &recorder{named: named{"R"}, log: &log}
		// A wait from an earlier plugin does not keep a task another plugin denies.
		fw := f.framework(t, with(f.base(t), r,
			&permitFunc{named{"Waits"}, waitFor(time.Hour, "t1")},
			&permitFunc{named{"Deny"}, deny}))
		_, err := fw.Place(tk, 0)
		perr := placementError(t, err)
		assert.Equal(t, framework.PermitDenied, perr.Reason)
		assert.Equal(t, "Deny", perr.Plugin)
		assert.Equal(t, []framework.Count{{Reason: framework.PermitDenied, Plugin: "Deny", N: 1}}, perr.Refusals.Counts,
			"the nodes that passed are not counted as refusing")
		assert.Equal(t, 3, perr.Refusals.Of, "every node asked")
		assert.Contains(t, err.Error(), "2/3 nodes can take it: 1 permit denied (Deny)")
		assert.Equal(t, cluster.Pending, tk.State())
		assert.Nil(t, tk.Node())
		assert.Zero(t, f.st.Count(cluster.Reserved))
		assert.Equal(t, before, takeSnapshot(t, f.st, "t1"))
		assert.Equal(t, []string{"R.Reserve:t1", "R.Unreserve:t1"}, log)
	})
	t.Run("pull", func(t *testing.T) {
		f := threeNodes(t)
		f.submit(t, "j", "t1", 1000, 1)
		before := takeSnapshot(t, f.st, "t1")
		jf := &jobFilter{named: named{"Jobs"}}
		fw := f.framework(t, with(f.base(t), &permitFunc{named{"Deny"}, deny}, jf, plugins.NewDelayScheduling(nil)), framework.WithSkipDetails(1))
		d, err := fw.Heartbeat(f.node(t, "n1"), 0)
		require.NoError(t, err)
		assert.Empty(t, d.Assignments)
		require.Len(t, d.Skips, 1)
		assert.Equal(t, framework.PermitDenied, d.Skips[0].Reason)
		require.Len(t, jf.refused, 1)
		assert.Equal(t, framework.Status{Code: framework.Unschedulable, Reason: framework.PermitDenied, Plugin: "Deny"}, jf.refused[0].Status)
		assert.Equal(t, before, takeSnapshot(t, f.st, "t1"))
	})
}

func TestPermitWaitKeepsTheTaskReserved(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	before := takeSnapshot(t, f.st, "t1")
	free := f.node(t, "n1").Timeline().FreeAt(0)
	fw := f.framework(t, with(f.base(t), &permitFunc{named{"Waits"}, waitFor(time.Hour, "t1")}))

	as, err := fw.Place(tk, 0)
	perr := placementError(t, err)
	assert.Equal(t, framework.Assignment{}, as)
	assert.Equal(t, framework.PermitWaiting, perr.Reason)
	assert.Equal(t, "t1", perr.Task)
	assert.Equal(t, 3, perr.Tried)
	assert.Equal(t, cluster.Reserved, tk.State())
	assert.Equal(t, "n1", tk.Node().ID())
	assert.Equal(t, 1, f.st.Count(cluster.Reserved))
	assert.Zero(t, f.st.Count(cluster.Pending))
	assert.Equal(t, free.Sub(capacity(1000, 1)), f.node(t, "n1").Timeline().FreeAt(0), "the reservation is visible")
	assert.NotEqual(t, before, takeSnapshot(t, f.st, "t1"))
	assert.Empty(t, fw.TakePermitted())
}

func TestAllowInALaterPushCycle(t *testing.T) {
	f := threeNodes(t)
	t1 := f.submit(t, "j", "t1", 1000, 1)
	t2 := f.submit(t, "j", "t2", 1000, 1)
	hook := &preHook{named: named{"Hook"}}
	fw := f.framework(t, with(f.base(t), hook, &permitFunc{named{"Waits"}, waitFor(time.Hour, "t1")}))
	_, err := fw.Place(t1, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)

	var seen []string
	var allowErr error
	hook.fn = func(c *framework.Cycle) framework.Status {
		hook.fn = nil
		seen = waitingIDs(c)
		allowErr = c.Allow("t1")
		return framework.Status{}
	}
	as, err := fw.Place(t2, time.Second)
	require.NoError(t, err)
	require.NoError(t, allowErr)
	assert.Equal(t, []string{"t1"}, seen)
	assert.Equal(t, "t2", as.Task)
	assert.Equal(t, cluster.Running, t1.State())
	assert.Equal(t, cluster.Running, t2.State())
	assert.Zero(t, f.st.Count(cluster.Reserved))

	permitted := fw.TakePermitted()
	require.Len(t, permitted, 1)
	assert.Equal(t, "t1", permitted[0].Task)
	assert.Equal(t, "j", permitted[0].Job)
	assert.Equal(t, "n1", permitted[0].Node)
	assert.Equal(t, time.Second, permitted[0].Start, "it starts when allowed, not when reserved")
	assert.Equal(t, time.Second, t1.Start(), "its reservation moved with it")
	assert.Empty(t, fw.TakePermitted(), "taken once")
}

func TestAllowInAPullCycleJoinsTheDecision(t *testing.T) {
	f := threeNodes(t)
	t1 := f.submit(t, "j", "t1", 1000, 1)
	allow := &passFunc{named: named{"Allow"}}
	var allowErr error
	allow.fn = func(c *framework.Cycle, _ *cluster.NodeInfo) error {
		for _, id := range waitingIDs(c) {
			allowErr = c.Allow(id)
		}
		return nil
	}
	fw := f.framework(t, with(f.base(t), &permitFunc{named{"Waits"}, waitFor(time.Hour, "t1")}, allow))
	_, err := fw.Place(t1, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
	require.Equal(t, "n1", t1.Node().ID())

	d, err := fw.Heartbeat(f.node(t, "n2"), time.Second)
	require.NoError(t, err)
	require.NoError(t, allowErr)
	assert.Equal(t, "n2", d.Node)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, "t1", d.Assignments[0].Task)
	assert.Equal(t, "n1", d.Assignments[0].Node, "an allowed task runs where it was reserved")
	assert.Equal(t, cluster.Running, t1.State())
	assert.Empty(t, fw.TakePermitted(), "a pull cycle's allowances are in its Decision")
}

func TestRejectRollsBack(t *testing.T) {
	f := threeNodes(t)
	t1 := f.submit(t, "j", "t1", 1000, 1)
	t2 := f.submit(t, "j", "t2", 1000, 1)
	before := takeSnapshot(t, f.st, "t1", "t2")
	var log []string
	r := &recorder{named: named{"R"}, log: &log}
	hook := &preHook{named: named{"Hook"}}
	fw := f.framework(t, with(f.base(t), hook, r, &permitFunc{named{"Waits"}, waitFor(time.Hour, "t1")}))
	_, err := fw.Place(t1, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
	require.Equal(t, cluster.Reserved, t1.State())

	var rejectErr, again, allow error
	hook.fn = func(c *framework.Cycle) framework.Status {
		rejectErr = c.Reject("t1")
		again = c.Reject("t1")
		allow = c.Allow("t1")
		return framework.Refuse(framework.MaxShare) // t2 stays pending
	}
	_, err = fw.Place(t2, time.Second)
	assert.Equal(t, framework.MaxShare, placementError(t, err).Reason)
	require.NoError(t, rejectErr)
	assert.ErrorIs(t, again, cluster.ErrState)
	assert.ErrorIs(t, allow, cluster.ErrState)
	assert.Equal(t, cluster.Pending, t1.State())
	before.Clock = time.Second // the second cycle's time; nothing else changed
	assert.Equal(t, before, takeSnapshot(t, f.st, "t1", "t2"))
	assert.Equal(t, []string{"R.Reserve:t1", "R.Unreserve:t1"}, log)
	assert.Empty(t, fw.TakePermitted())
}

func TestWaitTimesOut(t *testing.T) {
	cycles := map[string]func(t *testing.T, fw *framework.Framework, f *fixture, now time.Duration) error{
		"heartbeat": func(t *testing.T, fw *framework.Framework, f *fixture, now time.Duration) error {
			_, err := fw.Heartbeat(f.node(t, "n3"), now)
			return err
		},
		"place": func(t *testing.T, fw *framework.Framework, f *fixture, now time.Duration) error {
			_, err := fw.Place(f.submit(t, "other", "o"+now.String(), 10, 0), now)
			return err
		},
	}
	for name, cycle := range cycles {
		t.Run(name, func(t *testing.T) {
			f := threeNodes(t)
			t1 := f.submit(t, "j", "t1", 1000, 1)
			var log []string
			r := &recorder{named: named{"R"}, log: &log}
			// The shortest wait of the Permit plugins counts, whichever comes first.
			fw := f.framework(t, with(f.base(t), r,
				&permitFunc{named{"Long"}, waitFor(20*time.Second, "t1")},
				&permitFunc{named{"Short"}, waitFor(10*time.Second, "t1")},
				&permitFunc{named{"Longer"}, waitFor(30*time.Second, "t1")}))
			_, err := fw.Place(t1, 2*time.Second)
			require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)

			require.NoError(t, cycle(t, fw, f, 12*time.Second-time.Nanosecond))
			assert.Equal(t, cluster.Reserved, t1.State(), "before the deadline")
			assert.Equal(t, []string{"R.Reserve:t1"}, log[:1])

			require.NoError(t, cycle(t, fw, f, 12*time.Second))
			assert.Equal(t, cluster.Pending, t1.State(), "rejected at the first cycle at its deadline")
			assert.Nil(t, t1.Node())
			assert.Contains(t, log, "R.Unreserve:t1")
			assert.Zero(t, f.st.Count(cluster.Reserved))
			assert.Empty(t, fw.TakePermitted())
		})
	}
}

func TestZeroWaitIsRejectedAtTheNextCycle(t *testing.T) {
	f := threeNodes(t)
	t1 := f.submit(t, "j", "t1", 1000, 1)
	fw := f.framework(t, with(f.base(t), &permitFunc{named{"Now"}, waitFor(-time.Second, "t1")}))
	_, err := fw.Place(t1, time.Second)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
	assert.Equal(t, cluster.Reserved, t1.State())
	_, err = fw.Heartbeat(f.node(t, "n2"), time.Second)
	require.NoError(t, err)
	assert.Equal(t, cluster.Pending, t1.State())
}

func TestProbesDoNotExpireWaits(t *testing.T) {
	f := threeNodes(t)
	t1 := f.submit(t, "j", "t1", 1000, 1)
	t2 := f.submit(t, "j", "t2", 1000, 1)
	fw := f.framework(t, with(f.base(t), &permitFunc{named{"Waits"}, waitFor(time.Second, "t1")}))
	_, err := fw.Place(t1, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
	before := takeSnapshot(t, f.st, "t1", "t2")
	st, _ := fw.Filter(t2, f.node(t, "n2"), time.Minute)
	assert.True(t, st.OK())
	_, st = fw.Score(t2, f.node(t, "n2"), time.Minute)
	assert.True(t, st.OK())
	assert.Equal(t, before, takeSnapshot(t, f.st, "t1", "t2"))
	assert.Equal(t, cluster.Reserved, t1.State())

	_, err = fw.Heartbeat(f.node(t, "n2"), time.Minute)
	require.NoError(t, err)
	assert.Equal(t, cluster.Pending, t1.State(), "a cycle does")
}

func TestAllowOfATaskNotWaiting(t *testing.T) {
	f := threeNodes(t)
	t1 := f.submit(t, "j", "t1", 1000, 1)
	t2 := f.submit(t, "j", "t2", 1000, 1)
	t3 := f.submit(t, "j", "t3", 1000, 1)
	hook := &preHook{named: named{"Hook"}}
	fw := f.framework(t, with(f.base(t), hook, &permitFunc{named{"Waits"}, waitFor(time.Hour, "t1", "t2")}))
	free := f.node(t, "n1").Timeline().FreeAt(0)
	_, err := fw.Place(t1, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
	_, err = fw.Place(t2, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)

	// t1 is cancelled while it waits; t2's node leaves.
	require.Equal(t, "n1", t2.Node().ID())
	require.NoError(t, f.st.Cancel(t1, 0))
	assert.Equal(t, free.Sub(capacity(1000, 1)), f.node(t, "n1").Timeline().FreeAt(0), "the cancellation returned t1's hold")
	_, err = f.st.RemoveNode("n1")
	require.NoError(t, err)
	require.Equal(t, cluster.Pending, t2.State())

	errs := map[string][]error{}
	hook.fn = func(c *framework.Cycle) framework.Status {
		for _, id := range []string{"unknown", "t1", "t2", "t3"} {
			errs[id] = append(errs[id], c.Allow(id), c.Reject(id))
		}
		return framework.Refuse(framework.MaxShare)
	}
	_, err = fw.Place(t3, time.Second)
	assert.Equal(t, framework.MaxShare, placementError(t, err).Reason)
	for _, id := range sortedKeys(errs) {
		require.Len(t, errs[id], 2)
		for _, e := range errs[id] {
			assert.ErrorIs(t, e, cluster.ErrState, id)
		}
	}
	assert.Equal(t, cluster.Cancelled, t1.State())
	assert.Equal(t, cluster.Pending, t2.State())
	assert.Equal(t, cluster.Pending, t3.State())
	assert.Zero(t, f.st.Count(cluster.Reserved))
	assert.Equal(t, 1, f.st.Count(cluster.Cancelled))
	assert.Empty(t, fw.TakePermitted())

	// The failed calls took them off the waiting list.
	var waiting []string
	hook.fn = func(c *framework.Cycle) framework.Status {
		waiting = waitingIDs(c)
		return framework.Refuse(framework.MaxShare)
	}
	_, err = fw.Place(t3, 2*time.Second)
	require.Error(t, err)
	assert.Empty(t, waiting)
}

func TestGangCommitsTogether(t *testing.T) {
	f := threeNodes(t)
	g := &gang{named: named{"Gang"}, k: 3, jobs: map[string]bool{"g": true}}
	fw := f.framework(t, with(f.base(t), g))
	members := []*cluster.TaskInfo{f.submit(t, "g", "g1", 1000, 1), f.submit(t, "g", "g2", 1000, 1), f.submit(t, "g", "g3", 1000, 1)}

	for i, m := range members[:2] {
		_, err := fw.Place(m, time.Duration(i)*time.Second)
		require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
		assert.Equal(t, cluster.Reserved, m.State())
		// Another job's task is not held up.
		other := f.submit(t, "o", "o"+m.ID(), 100, 0)
		_, err = fw.Place(other, time.Duration(i)*time.Second)
		require.NoError(t, err)
		assert.Equal(t, cluster.Running, other.State())
	}
	assert.Equal(t, 2, f.st.Count(cluster.Reserved))
	assert.Equal(t, 2, f.st.Count(cluster.Running), "only the other job's tasks")
	assert.Empty(t, fw.TakePermitted())

	as, err := fw.Place(members[2], 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "g3", as.Task)
	assert.Empty(t, g.errs)
	for _, m := range members {
		assert.Equal(t, cluster.Running, m.State(), m.ID())
	}
	assert.Zero(t, f.st.Count(cluster.Reserved))
	permitted := fw.TakePermitted()
	require.Len(t, permitted, 2)
	assert.Equal(t, "g1", permitted[0].Task, "allowed in ID order")
	assert.Equal(t, "g2", permitted[1].Task)
	assert.Equal(t, 2*time.Second, permitted[0].Start, "all start together, when allowed")
	assert.Equal(t, 2*time.Second, permitted[1].Start)
}

func TestGangCompletedInAHeartbeat(t *testing.T) {
	f := threeNodes(t)
	g := &gang{named: named{"Gang"}, k: 2, jobs: map[string]bool{"g": true}}
	fw := f.framework(t, with(f.base(t), g, plugins.NewDelayScheduling(nil)))
	g1 := f.submit(t, "g", "g1", 1000, 1)
	_, err := fw.Place(g1, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
	require.Equal(t, "n1", g1.Node().ID())
	g2 := f.submit(t, "g", "g2", 1000, 1)

	d, err := fw.Heartbeat(f.node(t, "n2"), time.Second)
	require.NoError(t, err)
	assert.Empty(t, g.errs)
	assert.Equal(t, "n2", d.Node)
	assert.Equal(t, map[string]string{"g1": "n1", "g2": "n2"}, assignedTo(d.Assignments))
	assert.Equal(t, cluster.Running, g1.State())
	assert.Equal(t, cluster.Running, g2.State())
	assert.Empty(t, fw.TakePermitted())
}

// A waiting task cancelled through State.Cancel leaves Cycle.Waiting at once, so a
// gang plugin counting Waiting() does not count it as a member.
func TestWaitingDropsACancelledTask(t *testing.T) {
	f := threeNodes(t)
	t1 := f.submit(t, "j", "t1", 1000, 1)
	t2 := f.submit(t, "j", "t2", 1000, 1)
	hook := &preHook{named: named{"Hook"}}
	fw := f.framework(t, with(f.base(t), hook, &permitFunc{named{"Waits"}, waitFor(time.Hour, "t1")}))
	_, err := fw.Place(t1, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
	require.NoError(t, f.st.Cancel(t1, 0))

	var states []cluster.TaskState
	hook.fn = func(c *framework.Cycle) framework.Status {
		for _, tk := range c.Waiting() {
			states = append(states, tk.State())
		}
		return framework.Refuse(framework.MaxShare)
	}
	_, err = fw.Place(t2, time.Second)
	require.Error(t, err)
	assert.Empty(t, states, "no task is kept reserved any more")
}
