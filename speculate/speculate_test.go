package speculate_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// thesisCluster is the heterogeneous cluster of the thesis' reasoning (§3.1, §3.2.4.2):
// a fast node (tasks take 50 s), a medium one (100 s) and a slow one (200 s). At now =
// 100 s the job runs X on the slow node (progress 0.2 since 0: 400 s left) and Y on the
// fast node (0.3 since 90 s: 23.3 s left), plus the extra tasks given.
func thesisCluster(t testing.TB, extra ...func(*predict.ProgressTracker)) *predict.ProgressTracker {
	t.Helper()
	tr := tracker(t)
	for _, id := range []string{"f1", "f2", "f3"} {
		finished(t, tr, id, "fast", 0, 50*sec)
	}
	finished(t, tr, "m1", "medium", 0, 100*sec)
	finished(t, tr, "s1", "slow", 0, 200*sec)
	running(t, tr, "X", "slow", 0, 0.2, 100*sec)
	running(t, tr, "Y", "fast", 90*sec, 0.3, 100*sec)
	for _, f := range extra {
		f(tr)
	}
	return tr
}

func newLATE(t testing.TB, opts ...speculate.Option) *speculate.LATE {
	t.Helper()
	l, err := speculate.NewLATE(opts...)
	require.NoError(t, err)
	return l
}

func newPRRL(t testing.TB, opts ...speculate.Option) *speculate.PRRL {
	t.Helper()
	p, err := speculate.NewPRRL(opts...)
	require.NoError(t, err)
	return p
}

// With a faster slot about to free (Y's, on the fast node: a backup there finishes in
// 50 s + 23.3 s, before one on the medium node would, 100 s), the medium node asking
// for work gets nothing from PRRL, and X waits for the fast slot; LATE gives X to the
// medium node.
func TestThesisFasterSlotAboutToFree(t *testing.T) {
	tr := thesisCluster(t)
	job := speculate.Job{Tasks: tr}
	req := speculate.Request{Node: "medium", Now: 100 * sec}

	late, err := newLATE(t).Speculate(job, req)
	require.NoError(t, err)
	assert.Equal(t, speculate.Backup, late.Action)
	assert.Equal(t, "X", late.Task)

	prrl, err := newPRRL(t).Speculate(job, req)
	require.NoError(t, err)
	assert.Equal(t, speculate.None, prrl.Action)
	assert.Equal(t, speculate.ReasonFasterResources, prrl.Reason)
	assert.Equal(t, 1, prrl.SlowTasks)
	assert.Equal(t, 2, prrl.Resources)
	assert.Equal(t, 100*sec, prrl.Finish)

	lists, err := newPRRL(t).Lists(job, req)
	require.NoError(t, err)
	require.Len(t, lists.Slow, 1)
	assert.Equal(t, "X", lists.Slow[0].Task)
	assert.Equal(t, 400*sec, lists.Slow[0].TimeLeft)
	require.Len(t, lists.Resources, 2)
	assert.Equal(t, speculate.Resource{Node: "fast", Task: "Y", Wait: lists.Resources[0].Wait, Finish: 50*sec + lists.Resources[0].Wait}, lists.Resources[0])
	assert.InDelta(t, (70 * sec / 3).Seconds(), lists.Resources[0].Wait.Seconds(), 1e-6)
	assert.Equal(t, speculate.Resource{Node: "medium", Finish: 100 * sec}, lists.Resources[1])
}

// With no faster resource than the requesting one (the fast node asks), PRRL backs up
// what LATE backs up: the task with the largest time left.
func TestThesisNoFasterSlotPicksWhatLATEPicks(t *testing.T) {
	tr := thesisCluster(t, func(tr *predict.ProgressTracker) {
		running(t, tr, "Z", "slow", 0, 0.3, 100*sec) // 233 s left, also slow
	})
	job := speculate.Job{Tasks: tr}
	req := speculate.Request{Node: "fast", Now: 100 * sec}
	late, err := newLATE(t).Speculate(job, req)
	require.NoError(t, err)
	prrl, err := newPRRL(t).Speculate(job, req)
	require.NoError(t, err)
	assert.Equal(t, speculate.Backup, late.Action)
	assert.Equal(t, late.Action, prrl.Action)
	assert.Equal(t, late.Task, prrl.Task)
	assert.Equal(t, "X", prrl.Task)
	assert.Equal(t, 1, prrl.Resources)
	assert.Equal(t, 2, prrl.SlowTasks)
	assert.Equal(t, 50*sec, prrl.Finish)
}

// When the medium node asks and one faster slot will free, the fast slot is kept for
// the slowest task (X) and the medium node takes the second slowest (Z): slowTask[M]
// with M = 2.
func TestThesisSecondSlowestGoesToSecondFastest(t *testing.T) {
	tr := thesisCluster(t, func(tr *predict.ProgressTracker) {
		running(t, tr, "Z", "slow", 0, 0.3, 100*sec)
	})
	d, err := newPRRL(t).Speculate(speculate.Job{Tasks: tr}, speculate.Request{Node: "medium", Now: 100 * sec})
	require.NoError(t, err)
	assert.Equal(t, speculate.Decision{
		Action: speculate.Backup, Reason: speculate.ReasonBackup, Task: "Z",
		TimeLeft: d.TimeLeft, Finish: 100 * sec, SlowTasks: 2, Resources: 2,
	}, d)
	assert.InDelta(t, 700.0/3, d.TimeLeft.Seconds(), 1e-6)

	l, err := newLATE(t).Speculate(speculate.Job{Tasks: tr}, speculate.Request{Node: "medium", Now: 100 * sec})
	require.NoError(t, err)
	assert.Equal(t, "X", l.Task)
}

// Alg. 3.1 step 4: the slow node asks; slowTask[M] has less time left (100 s) than a
// backup would take there (200 s), so PRRL starts nothing. LATE refuses the slow node
// outright (eq. 2.1).
func TestThesisBackupNotFaster(t *testing.T) {
	tr := thesisCluster(t, func(tr *predict.ProgressTracker) {
		running(t, tr, "Z", "slow", 0, 0.5, 100*sec) // rate 0.005: slow, 100 s left
	})
	job := speculate.Job{Tasks: tr}
	req := speculate.Request{Node: "slow", Now: 100 * sec}
	d, err := newPRRL(t).Speculate(job, req)
	require.NoError(t, err)
	assert.Equal(t, speculate.None, d.Action)
	assert.Equal(t, speculate.ReasonNotFaster, d.Reason)
	assert.Equal(t, 2, d.Resources)
	assert.Equal(t, 100*sec, d.TimeLeft)
	assert.Equal(t, 200*sec, d.Finish)

	l, err := newLATE(t).Speculate(job, req)
	require.NoError(t, err)
	assert.Equal(t, speculate.ReasonSlowNode, l.Reason)
	slow, err := newLATE(t).SlowNode(tr, "slow")
	require.NoError(t, err)
	assert.True(t, slow)
	slow, err = newLATE(t).SlowNode(tr, "medium")
	require.NoError(t, err)
	assert.False(t, slow)
	slow, err = newLATE(t).SlowNode(tr, "never-seen")
	require.NoError(t, err)
	assert.False(t, slow)
	// a looser slow-node threshold lets LATE use the slow node
	l, err = newLATE(t, speculate.WithSlowNodeThreshold(2)).Speculate(job, req)
	require.NoError(t, err)
	assert.Equal(t, "X", l.Task)
}

// Alg. 3.1 line 2: a job with unstarted tasks runs one of them, whatever its stragglers.
func TestUnstartedFirst(t *testing.T) {
	tr := thesisCluster(t)
	for _, s := range []speculate.Speculator{newLATE(t), newPRRL(t)} {
		d, err := s.Speculate(speculate.Job{Tasks: tr, Unstarted: 3}, speculate.Request{Node: "fast", Now: 100 * sec})
		require.NoError(t, err)
		assert.Equal(t, speculate.Decision{Action: speculate.RunUnstarted, Reason: speculate.ReasonUnstarted}, d)
	}
}

// LATE's candidate conditions and cap, one at a time, for both speculators.
func TestCandidateConditions(t *testing.T) {
	fin := predict.RateStats{N: 10, Mean: 0.01, Std: 0.001}
	base := func() *staticEstimator {
		return &staticEstimator{
			finished: fin,
			nodes:    map[string]predict.RateStats{"a": fin, "b": fin},
			tasks: []predict.TaskProgress{
				{Task: "t1", Node: "a", Progress: 0.1, Elapsed: 100 * sec, Rate: 0.001, TimeLeft: 900 * sec},
				{Task: "t2", Node: "a", Progress: 0.2, Elapsed: 100 * sec, Rate: 0.002, TimeLeft: 400 * sec},
				{Task: "t3", Node: "b", Progress: 0.9, Elapsed: 90 * sec, Rate: 0.01, TimeLeft: 10 * sec},
			},
		}
	}
	many := base()
	for i := 0; i < 20; i++ { // enough running tasks for a cap of 0.1 to allow a backup
		many.tasks = append(many.tasks, predict.TaskProgress{Task: "u" + string(rune('a'+i)), Node: "b", Progress: 0.5, Elapsed: 50 * sec, Rate: 0.01, TimeLeft: 50 * sec})
	}
	cases := []struct {
		name   string
		est    *staticEstimator
		job    func(*speculate.Job)
		opts   []speculate.Option
		want   string
		reason speculate.Reason
	}{
		{name: "largest time left", est: many, want: "t1", reason: speculate.ReasonBackup},
		{name: "failed on this node", est: many, job: func(j *speculate.Job) { j.FailedOn = map[string][]string{"t1": {"x", "c"}} }, want: "t2", reason: speculate.ReasonBackup},
		{name: "failed elsewhere", est: many, job: func(j *speculate.Job) { j.FailedOn = map[string][]string{"t1": {"a"}} }, want: "t1", reason: speculate.ReasonBackup},
		{name: "backup running", est: many, job: func(j *speculate.Job) { j.Backups = map[string]bool{"t1": true} }, want: "t2", reason: speculate.ReasonBackup},
		{name: "backup not running", est: many, job: func(j *speculate.Job) { j.Backups = map[string]bool{"t1": false} }, want: "t1", reason: speculate.ReasonBackup},
		{name: "too young", est: many, opts: []speculate.Option{speculate.WithMinRuntime(100 * sec)}, reason: speculate.ReasonNoSlowTask},
		{name: "young enough", est: many, opts: []speculate.Option{speculate.WithMinRuntime(99 * sec)}, want: "t1", reason: speculate.ReasonBackup},
		{name: "only t1 slow with a looser threshold", est: many, opts: []speculate.Option{speculate.WithSlowTaskThreshold(8.5)},
			job: func(j *speculate.Job) { j.FailedOn = map[string][]string{"t1": {"c"}} }, reason: speculate.ReasonNoSlowTask},
		{name: "t1 still slow", est: many, opts: []speculate.Option{speculate.WithSlowTaskThreshold(8.5)}, want: "t1", reason: speculate.ReasonBackup},
		{name: "none slow with a looser one", est: many, opts: []speculate.Option{speculate.WithSlowTaskThreshold(9.5)}, reason: speculate.ReasonNoSlowTask},
		{name: "under the cap", est: base(), want: "t1", reason: speculate.ReasonBackup},
		{name: "at cap", est: base(), job: func(j *speculate.Job) { j.Backups = map[string]bool{"t3": true} }, reason: speculate.ReasonAtCap},
		{name: "under a larger cap", est: base(), opts: []speculate.Option{speculate.WithSpeculativeCap(0.5)},
			job: func(j *speculate.Job) { j.Backups = map[string]bool{"t3": true} }, want: "t1", reason: speculate.ReasonBackup},
		{name: "cap counts backups", est: base(), opts: []speculate.Option{speculate.WithSpeculativeCap(0.5)},
			job: func(j *speculate.Job) { j.Backups = map[string]bool{"t3": true, "t2": true} }, reason: speculate.ReasonAtCap},
		{name: "nothing running", est: &staticEstimator{finished: fin}, reason: speculate.ReasonNoSlowTask},
		{name: "nothing finished", est: &staticEstimator{tasks: many.tasks}, reason: speculate.ReasonNoSlowTask},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, s := range []speculate.Speculator{newLATE(t, c.opts...), newPRRL(t, c.opts...)} {
				job := speculate.Job{Tasks: c.est}
				if c.job != nil {
					c.job(&job)
				}
				d, err := s.Speculate(job, speculate.Request{Node: "c", Now: 100 * sec})
				require.NoError(t, err)
				assert.Equal(t, c.reason, d.Reason, "%T", s)
				assert.Equal(t, c.want, d.Task, "%T", s)
				if c.want != "" {
					assert.Equal(t, speculate.Backup, d.Action)
				} else {
					assert.Equal(t, speculate.None, d.Action)
				}
			}
		})
	}
}

// A slot that never frees and a node that never finishes give stage.Forever, not an
// overflow; a task that does not advance is the first to back up.
func TestForeverSaturates(t *testing.T) {
	fin := predict.RateStats{N: 3, Mean: 0.01, Std: 0.001}
	est := &staticEstimator{
		finished: fin,
		nodes:    map[string]predict.RateStats{"zero": {N: 1, Mean: 0}},
		tasks: []predict.TaskProgress{
			{Task: "stuck", Node: "zero", Progress: 0, Elapsed: 100 * sec, Rate: 0, TimeLeft: stage.Forever},
			{Task: "t", Node: "a", Progress: 0.5, Elapsed: 100 * sec, Rate: 0.005, TimeLeft: 100 * sec},
		},
	}
	d, err := newPRRL(t, speculate.WithSpeculativeCap(1)).Speculate(speculate.Job{Tasks: est}, speculate.Request{Node: "a", Now: 100 * sec, Busy: []speculate.BusySlot{{Task: "o", Node: "zero", TimeLeft: stage.Forever}}})
	require.NoError(t, err)
	assert.Equal(t, "stuck", d.Task)
	assert.Equal(t, stage.Forever, d.TimeLeft)
	f, err := speculate.BackupFinish(0, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, stage.Forever, f)
	f, err = speculate.BackupFinish(1e-30, stage.Forever-1)
	require.NoError(t, err)
	assert.Equal(t, stage.Forever, f)
	f, err = speculate.BackupFinish(0.02, 10*sec)
	require.NoError(t, err)
	assert.Equal(t, 60*sec, f)
}

func TestSelectBackup(t *testing.T) {
	slow := []speculate.SlowTask{{Task: "a", TimeLeft: 500 * sec}, {Task: "b", TimeLeft: 300 * sec}, {Task: "c", TimeLeft: 90 * sec}}
	res := func(finish ...time.Duration) []speculate.Resource {
		out := make([]speculate.Resource, len(finish))
		for i, f := range finish {
			out[i] = speculate.Resource{Node: "n", Finish: f}
		}
		return out
	}
	cases := []struct {
		name   string
		slow   []speculate.SlowTask
		res    []speculate.Resource
		task   string
		reason speculate.Reason
	}{
		{"no slow task", nil, res(10 * sec), "", speculate.ReasonNoSlowTask},
		{"M > N", slow[:1], res(10*sec, 20*sec), "", speculate.ReasonFasterResources},
		{"M = 1", slow, res(100 * sec), "a", speculate.ReasonBackup},
		{"M = 2", slow, res(50*sec, 100*sec), "b", speculate.ReasonBackup},
		{"M = 3 not faster", slow, res(50*sec, 60*sec, 100*sec), "", speculate.ReasonNotFaster},
		{"equal is not faster", slow, res(10*sec, 300*sec), "", speculate.ReasonNotFaster},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := speculate.SelectBackup(c.slow, c.res)
			require.NoError(t, err)
			assert.Equal(t, c.reason, d.Reason)
			assert.Equal(t, c.task, d.Task)
			assert.Equal(t, len(c.slow), d.SlowTasks)
			assert.Equal(t, len(c.res), d.Resources)
		})
	}
}

func TestStrings(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{speculate.None.String(), "none"}, {speculate.RunUnstarted.String(), "run-unstarted"},
		{speculate.Backup.String(), "backup"}, {speculate.Action(9).String(), "Action(9)"},
		{speculate.ReasonUnstarted.String(), "unstarted task first"}, {speculate.ReasonBackup.String(), "backup"},
		{speculate.ReasonNoSlowTask.String(), "no slow task"}, {speculate.ReasonSlowNode.String(), "slow node"},
		{speculate.ReasonAtCap.String(), "at speculative cap"},
		{speculate.ReasonFasterResources.String(), "faster resources will free up"},
		{speculate.ReasonNotFaster.String(), "backup would not finish first"}, {speculate.Reason(42).String(), "Reason(42)"},
		{speculate.FairJobs.String(), "fair"}, {speculate.FIFOJobs.String(), "fifo"}, {speculate.JobOrder(5).String(), "JobOrder(5)"},
		{speculate.Reclaim.String(), "reclaim"}, {speculate.Preempt.String(), "preempt"}, {speculate.Expand.String(), "expand"},
		{speculate.Move.String(), "move"}, {speculate.Restore.String(), "restore"}, {speculate.StepKind(8).String(), "StepKind(8)"},
	} {
		assert.Equal(t, c.want, c.got)
	}
}
