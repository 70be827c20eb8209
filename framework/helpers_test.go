package framework_test

import (
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// This file holds the fixtures and the small test plugins the framework tests share.

var schema = resource.Standard()

const gib = int64(1) << 30

// capacity is cpu millicores and memory GiB, nothing else.
func capacity(cpu, memGiB int64) resource.Tuple { return schema.MustTuple(cpu, memGiB*gib) }

func nodeSpec(id string, cpu, memGiB int64) cluster.NodeSpec {
	return cluster.NodeSpec{ID: id, Capacity: capacity(cpu, memGiB)}
}

// fixture is a cluster state with an adjuster and compression manager that track the
// same nodes, for the adjuster-backed plugins.
type fixture struct {
	st   *cluster.State
	adj  *policy.Adjuster
	comp *policy.Compression
}

func newFixture(t *testing.T, nodes ...cluster.NodeSpec) *fixture {
	t.Helper()
	st, err := cluster.New(schema)
	require.NoError(t, err)
	conf, err := predict.NewConformityLog(5)
	require.NoError(t, err)
	adj, err := policy.NewAdjuster(schema, conf)
	require.NoError(t, err)
	comp, err := policy.NewCompression(schema, adj)
	require.NoError(t, err)
	f := &fixture{st: st, adj: adj, comp: comp}
	for _, n := range nodes {
		f.addNode(t, n)
	}
	return f
}

// threeNodes: n1 (16 GiB) is the roomiest, then n2 (8 GiB), then n3 (4 GiB); every
// node has 4 cores.
func threeNodes(t *testing.T) *fixture {
	return newFixture(t, nodeSpec("n1", 4000, 16), nodeSpec("n2", 4000, 8), nodeSpec("n3", 4000, 4))
}

func (f *fixture) addNode(t *testing.T, n cluster.NodeSpec) {
	t.Helper()
	require.NoError(t, f.st.AddNode(n))
	require.NoError(t, f.adj.AddServer(n.ID, n.Capacity))
}

func (f *fixture) node(t *testing.T, id string) *cluster.NodeInfo {
	t.Helper()
	n, ok := f.st.Node(id)
	require.True(t, ok, "node %s", id)
	return n
}

func (f *fixture) task(t *testing.T, id string) *cluster.TaskInfo {
	t.Helper()
	tk, ok := f.st.Task(id)
	require.True(t, ok, "task %s", id)
	return tk
}

// job adds job id unless the state has it.
func (f *fixture) job(t *testing.T, id string) {
	t.Helper()
	if _, ok := f.st.Job(id); !ok {
		require.NoError(t, f.st.AddJob(cluster.JobSpec{ID: id}))
	}
}

// submit adds task id of job (added when new) asking for cpu millicores and memGiB
// of memory until it finishes.
func (f *fixture) submit(t *testing.T, job, id string, cpu, memGiB int64) *cluster.TaskInfo {
	t.Helper()
	return f.submitSpec(t, cluster.TaskSpec{ID: id, Job: job, Request: capacity(cpu, memGiB)})
}

func (f *fixture) submitSpec(t *testing.T, spec cluster.TaskSpec) *cluster.TaskInfo {
	t.Helper()
	f.job(t, spec.Job)
	require.NoError(t, f.st.Submit(spec))
	return f.task(t, spec.ID)
}

// prediction is the demand step by request.
func (f *fixture) prediction(t *testing.T) *plugins.Prediction {
	t.Helper()
	p, err := plugins.NewPrediction(schema, nil, true)
	require.NoError(t, err)
	return p
}

func (f *fixture) stageMatch(t *testing.T) *plugins.StageMatch {
	t.Helper()
	m, err := plugins.NewStageMatch(f.adj, f.comp, nil)
	require.NoError(t, err)
	return m
}

// base is the demand step by request and stage matching, the start of most plugin
// lists.
func (f *fixture) base(t *testing.T) []framework.Plugin {
	return []framework.Plugin{f.prediction(t), f.stageMatch(t)}
}

func (f *fixture) framework(t *testing.T, ps []framework.Plugin, opts ...framework.Option) *framework.Framework {
	t.Helper()
	fw, err := framework.New(f.st, ps, opts...)
	require.NoError(t, err)
	return fw
}

func with(base []framework.Plugin, more ...framework.Plugin) []framework.Plugin {
	return append(append([]framework.Plugin(nil), base...), more...)
}

// placementError asserts that err is a *framework.PlacementError (wrapping
// ErrNotPlaced) and returns it.
func placementError(t *testing.T, err error) *framework.PlacementError {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, framework.ErrNotPlaced)
	var perr *framework.PlacementError
	require.ErrorAs(t, err, &perr)
	return perr
}

// snapshot is everything a rollback must restore and a probe must not change.
type snapshot struct {
	Clock   time.Duration
	Counts  map[cluster.TaskState]int
	Nodes   map[string]nodeSnap
	Order   []string // the free index, roomiest first
	Jobs    map[string]jobSnap
	Classes map[cluster.ClassID]int
	Tasks   map[string]taskSnap
}

type nodeSnap struct {
	Segments     []stage.Segment
	Reservations int
	Tasks        []string
}

type jobSnap struct {
	Entry   fairness.Entry
	Running int
	Classes map[cluster.ClassID]int
	First   map[string]string // by node: the job's first pending task at any locality
}

type taskSnap struct {
	State cluster.TaskState
	Node  string
	Start time.Duration
}

func takeSnapshot(t *testing.T, st *cluster.State, tasks ...string) snapshot {
	t.Helper()
	s := snapshot{
		Clock:   st.Clock(),
		Counts:  map[cluster.TaskState]int{},
		Nodes:   map[string]nodeSnap{},
		Jobs:    map[string]jobSnap{},
		Classes: map[cluster.ClassID]int{},
		Tasks:   map[string]taskSnap{},
	}
	for _, ts := range []cluster.TaskState{cluster.Pending, cluster.Reserved, cluster.Running, cluster.Finished, cluster.Cancelled} {
		s.Counts[ts] = st.Count(ts)
	}
	var nodes []*cluster.NodeInfo
	for n := range st.Nodes() {
		nodes = append(nodes, n)
		var ids []string
		for _, tk := range n.Tasks() {
			ids = append(ids, tk.ID())
		}
		s.Nodes[n.ID()] = nodeSnap{
			Segments:     n.Timeline().AppendSegments(nil, 0, stage.Forever),
			Reservations: n.Timeline().Reservations(),
			Tasks:        ids,
		}
	}
	st.ByFree(math.MinInt64, func(n *cluster.NodeInfo) bool {
		s.Order = append(s.Order, n.ID())
		return true
	})
	for i := 0; i < st.JobSlots(); i++ {
		j := st.JobAt(i)
		if j == nil {
			continue
		}
		e, err := st.JobEntry(j.ID())
		require.NoError(t, err)
		js := jobSnap{Entry: e, Running: j.NumRunning(), Classes: map[cluster.ClassID]int{}, First: map[string]string{}}
		for _, c := range j.Classes() {
			js.Classes[c.ID] = c.N
		}
		for _, n := range nodes {
			if tk, _, ok := st.FirstPending(j, n, fairness.OffSwitch); ok {
				js.First[n.ID()] = tk.ID()
			}
		}
		s.Jobs[j.ID()] = js
	}
	for c := range st.Classes() {
		s.Classes[c.ID] = c.N
	}
	for _, id := range tasks {
		tk, ok := st.Task(id)
		require.True(t, ok, "task %s", id)
		s.Tasks[id] = seeTask(tk)
	}
	return s
}

// ---- Test plugins ----

// named is a plugin with a name and no extension point.
type named struct{ name string }

func (p named) Name() string { return p.name }

// demandPlugin is a DemandPlugin that delegates to Prediction under another name.
type demandPlugin struct {
	named
	p *plugins.Prediction
}

func (d demandPlugin) Demand(c *framework.Cycle, t *cluster.TaskInfo) framework.TaskDemand {
	return d.p.Demand(c, t)
}

// filterFunc is a Filter plugin; fn must be safe for concurrent use when probes run
// concurrently.
type filterFunc struct {
	named
	fn func(c *framework.Cycle, a *framework.Attempt) framework.Status
}

func (p filterFunc) Filter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	return p.fn(c, a)
}

// refuseNodes is a Filter refusing the nodes in its set with status st, and logging
// every call to log (when set) as "name:node".
func refuseNodes(name string, st framework.Status, log *[]string, nodes ...string) filterFunc {
	set := map[string]bool{}
	for _, n := range nodes {
		set[n] = true
	}
	return filterFunc{named{name}, func(_ *framework.Cycle, a *framework.Attempt) framework.Status {
		if log != nil {
			*log = append(*log, name+":"+a.Node.ID())
		}
		if set[a.Node.ID()] {
			return st
		}
		return framework.Status{}
	}}
}

// scoreFunc is a Score plugin.
type scoreFunc struct {
	named
	fn func(a *framework.Attempt) float64
}

func (p scoreFunc) Score(_ *framework.Cycle, a *framework.Attempt) float64 { return p.fn(a) }

// byNode scores nodes from a table (0 for the rest).
func byNode(name string, scores map[string]float64) scoreFunc {
	return scoreFunc{named{name}, func(a *framework.Attempt) float64 { return scores[a.Node.ID()] }}
}

// normScore is a Score plugin with a ScoreNormalizer.
type normScore struct {
	scoreFunc
	norm func(cands []framework.Attempt, scores []float64)
}

func (p normScore) NormalizeScores(_ *framework.Cycle, cands []framework.Attempt, scores []float64) {
	p.norm(cands, scores)
}

// freeMemGiB scores a node by its free memory at the attempt's start, in GiB.
func freeMemGiB(a *framework.Attempt) float64 {
	return float64(a.Node.Timeline().FreeAt(a.Start)[1]) / float64(gib)
}

// postFilterFunc is a PostFilter plugin counting its calls.
type postFilterFunc struct {
	named
	calls *int
	fn    func(c *framework.Cycle, a *framework.Attempt) framework.Status
}

func (p postFilterFunc) PostFilter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	*p.calls++
	return p.fn(c, a)
}

// recorder is a Reserve plugin that logs its calls, what it saw of the task, and
// refuses when fail is set.
type recorder struct {
	named
	log  *[]string
	fail bool
	// seen records, per Reserve and Unreserve call, the task's state and node then.
	seen []taskSnap
}

func (r *recorder) Reserve(_ *framework.Cycle, a *framework.Attempt) framework.Status {
	*r.log = append(*r.log, r.name+".Reserve:"+a.Task.ID())
	r.seen = append(r.seen, seeTask(a.Task))
	if r.fail {
		return framework.Status{Code: framework.Unschedulable}
	}
	return framework.Status{}
}

func (r *recorder) Unreserve(_ *framework.Cycle, a *framework.Attempt) {
	*r.log = append(*r.log, r.name+".Unreserve:"+a.Task.ID())
	r.seen = append(r.seen, seeTask(a.Task))
}

func seeTask(t *cluster.TaskInfo) taskSnap {
	s := taskSnap{State: t.State()}
	if t.Node() != nil {
		s.Node, s.Start = t.Node().ID(), t.Start()
	}
	return s
}

// permitFunc is a Permit plugin; a nil fn permits.
type permitFunc struct {
	named
	fn func(c *framework.Cycle, a *framework.Attempt) (framework.Status, time.Duration)
}

func (p *permitFunc) Permit(c *framework.Cycle, a *framework.Attempt) (framework.Status, time.Duration) {
	if p.fn == nil {
		return framework.Status{}, 0
	}
	return p.fn(c, a)
}

// waitFor makes a Permit keep the tasks in ids waiting for timeout, and permit the rest.
func waitFor(timeout time.Duration, ids ...string) func(*framework.Cycle, *framework.Attempt) (framework.Status, time.Duration) {
	set := map[string]bool{}
	for _, id := range ids {
		set[id] = true
	}
	return func(_ *framework.Cycle, a *framework.Attempt) (framework.Status, time.Duration) {
		if set[a.Task.ID()] {
			return framework.Status{Code: framework.Wait}, timeout
		}
		return framework.Status{}, 0
	}
}

// preHook is a PreFilter plugin that runs fn (when set) at the start of a push cycle
// and returns its status: a way to act inside a later cycle.
type preHook struct {
	named
	fn func(c *framework.Cycle) framework.Status
}

func (h *preHook) PreFilter(c *framework.Cycle, _ *framework.Attempt) framework.Status {
	if h.fn == nil {
		return framework.Status{}
	}
	return h.fn(c)
}

// passFunc is a Pass plugin.
type passFunc struct {
	named
	fn func(c *framework.Cycle, n *cluster.NodeInfo) error
}

func (p *passFunc) Pass(c *framework.Cycle, n *cluster.NodeInfo) error { return p.fn(c, n) }

// gate is a NodeGate plugin closing with st.
type gate struct {
	named
	st    framework.Status
	calls *int
}

func (g gate) Gate(*framework.Cycle, *cluster.NodeInfo) framework.Status {
	*g.calls++
	return g.st
}

// jobFilter is a JobFilter plugin refusing the jobs in refuse, counting its calls
// and recording the refusals it is told of.
type jobFilter struct {
	named
	refuse  map[string]bool
	passes  int
	jobs    []string
	refused []refusal
}

type refusal struct {
	Task, Node string
	Backup     bool
	Status     framework.Status
}

func (f *jobFilter) FilterPass(*framework.Cycle, *cluster.NodeInfo) framework.Status {
	f.passes++
	return framework.Status{}
}

func (f *jobFilter) FilterJob(_ *framework.Cycle, j *cluster.JobInfo, _ *cluster.NodeInfo) framework.Status {
	f.jobs = append(f.jobs, j.ID())
	if f.refuse[j.ID()] {
		return framework.Status{Code: framework.Unschedulable}
	}
	return framework.Status{}
}

func (f *jobFilter) Refused(_ *framework.Cycle, a *framework.Attempt, st framework.Status) {
	f.refused = append(f.refused, refusal{Task: a.Task.ID(), Node: a.Node.ID(), Backup: a.Backup, Status: st})
}

// assignedTo maps the assignments' tasks to their nodes.
func assignedTo(as []framework.Assignment) map[string]string {
	out := map[string]string{}
	for _, a := range as {
		out[a.Task] = a.Node
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// probeResult is what one Filter and one Score probe returned.
type probeResult struct {
	FilterStatus framework.Status
	Result       match.Result
	Score        float64
	ScoreStatus  framework.Status
}

// concurrentProbes runs probe(task, node) for every pair, one goroutine per node, and
// returns the results by node then task.
func concurrentProbes(fw *framework.Framework, nodes []*cluster.NodeInfo, tasks []*cluster.TaskInfo, start time.Duration, rounds int) [][]probeResult {
	out := make([][]probeResult, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		out[i] = make([]probeResult, len(tasks))
		wg.Add(1)
		go func(i int, n *cluster.NodeInfo) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				for k, tk := range tasks {
					var p probeResult
					p.FilterStatus, p.Result = fw.Filter(tk, n, start)
					p.Score, p.ScoreStatus = fw.Score(tk, n, start)
					out[i][k] = p
				}
			}
		}(i, n)
	}
	wg.Wait()
	return out
}
