package framework_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/plugins"
)

// ---- New and Plugins ----

func TestNewRejects(t *testing.T) {
	f := threeNodes(t)
	pred := f.prediction(t)
	ok := refuseNodes("F", framework.Refuse(framework.NoRoom), nil)
	cases := []struct {
		name    string
		state   *cluster.State
		plugins []framework.Plugin
		opts    []framework.Option
	}{
		{"nil state", nil, []framework.Plugin{pred}, nil},
		{"nil plugin", f.st, []framework.Plugin{pred, nil}, nil},
		{"duplicate name", f.st, []framework.Plugin{pred, ok, refuseNodes("F", framework.Status{}, nil)}, nil},
		{"duplicate demand name", f.st, []framework.Plugin{pred, f.prediction(t)}, nil},
		{"empty name", f.st, []framework.Plugin{pred, refuseNodes("", framework.Status{}, nil)}, nil},
		{"no extension point", f.st, []framework.Plugin{pred, named{"Lazy"}}, nil},
		{"no demand plugin", f.st, []framework.Plugin{ok}, nil},
		{"no plugin at all", f.st, nil, nil},
		{"negative candidates", f.st, []framework.Plugin{pred}, []framework.Option{framework.WithCandidates(-1)}},
		{"too many skip details", f.st, []framework.Plugin{pred}, []framework.Option{framework.WithSkipDetails(framework.MaxSkips + 1)}},
		{"negative skip details", f.st, []framework.Plugin{pred}, []framework.Option{framework.WithSkipDetails(-1)}},
		{"nil option", f.st, []framework.Plugin{pred}, []framework.Option{framework.WithCandidates(2), nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fw, err := framework.New(tc.state, tc.plugins, tc.opts...)
			require.ErrorIs(t, err, cluster.ErrInvalid)
			assert.Nil(t, fw)
		})
	}
}

func TestNewAcceptsOptionBounds(t *testing.T) {
	f := threeNodes(t)
	for _, opts := range [][]framework.Option{
		{framework.WithCandidates(0)},
		{framework.WithSkipDetails(0)},
		{framework.WithSkipDetails(framework.MaxSkips)},
		{framework.WithLogger(nil), framework.WithCandidates(1)},
	} {
		fw, err := framework.New(f.st, []framework.Plugin{f.prediction(t)}, opts...)
		require.NoError(t, err)
		assert.Same(t, f.st, fw.State())
	}
}

// multi implements Filter, Score and Reserve at once.
type multi struct {
	recorder
}

func (multi) Filter(*framework.Cycle, *framework.Attempt) framework.Status { return framework.Status{} }
func (multi) Score(*framework.Cycle, *framework.Attempt) float64           { return 0 }

func TestPluginsListsNamesByPointInOrder(t *testing.T) {
	f := threeNodes(t)
	var log []string
	first := demandPlugin{named{"FirstDemand"}, f.prediction(t)}
	calls := 0
	fw := f.framework(t, []framework.Plugin{
		first,
		&passFunc{named{"PassB"}, func(*framework.Cycle, *cluster.NodeInfo) error { return nil }},
		refuseNodes("FilterB", framework.Status{}, nil),
		&multi{recorder{named: named{"Multi"}, log: &log}},
		f.prediction(t), // the last DemandPlugin is the one used
		refuseNodes("FilterA", framework.Status{}, nil),
		byNode("ScoreA", nil),
		&preHook{named: named{"Pre"}},
		postFilterFunc{named{"Post"}, &calls, nil},
		&recorder{named: named{"ReserveA"}, log: &log},
		&permitFunc{named: named{"PermitA"}},
		gate{named{"GateA"}, framework.Status{}, &calls},
		&jobFilter{named: named{"Jobs"}},
		&passFunc{named{"PassA"}, func(*framework.Cycle, *cluster.NodeInfo) error { return nil }},
	})
	assert.Equal(t, map[string][]string{
		"Demand":     {"Prediction"},
		"PreFilter":  {"Pre"},
		"Filter":     {"FilterB", "Multi", "FilterA"},
		"PostFilter": {"Post"},
		"Score":      {"Multi", "ScoreA"},
		"Reserve":    {"Multi", "ReserveA"},
		"Permit":     {"PermitA"},
		"NodeGate":   {"GateA"},
		"JobFilter":  {"Jobs"},
		"Pass":       {"PassB", "PassA"},
	}, fw.Plugins())

	minimal := f.framework(t, []framework.Plugin{f.prediction(t)})
	assert.Equal(t, map[string][]string{"Demand": {"Prediction"}}, minimal.Plugins())
}

// ---- Filter ----

func TestPlaceFiltersNodesRoomiestFirstAndSkipsARefusal(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	var log []string
	refuse := refuseNodes("NotN1", framework.Refuse(framework.NoRoom), &log, "n1")
	after := refuseNodes("After", framework.Status{}, &log)
	fw := f.framework(t, with(f.base(t), refuse, after))

	as, err := fw.Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, "n2", as.Node, "n1 refused; n2 is the next roomiest")
	assert.Equal(t, "t1", as.Task)
	assert.Equal(t, "j", as.Job)
	assert.Equal(t, cluster.Running, tk.State())
	assert.Equal(t, "n2", tk.Node().ID())
	// Nodes roomiest first; the plugin after a refusal is not asked about that node.
	assert.Equal(t, []string{"NotN1:n1", "NotN1:n2", "After:n2", "NotN1:n3", "After:n3"}, log)
}

func TestPlaceEveryNodeRefusedIsAPlacementError(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	before := takeSnapshot(t, f.st, "t1")
	fw := f.framework(t, with(f.base(t), refuseNodes("Refuser", framework.Status{Code: framework.Unschedulable}, nil, "n1", "n2", "n3")))

	_, err := fw.Place(tk, 0)
	perr := placementError(t, err)
	assert.Equal(t, "t1", perr.Task)
	assert.Equal(t, framework.PluginRefused, perr.Reason, "a refusal without a reason becomes PluginRefused")
	assert.Equal(t, "Refuser", perr.Plugin, "the framework names the refusing plugin")
	assert.Equal(t, 3, perr.Tried)
	assert.Contains(t, err.Error(), "Refuser")
	assert.Equal(t, before, takeSnapshot(t, f.st, "t1"), "a failed placement changes nothing")
	assert.Equal(t, cluster.Pending, tk.State())
}

func TestPlaceNoNodeWithEnoughOfTheIndexDimension(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "big", 1000, 32)
	calls := 0
	fw := f.framework(t, with(f.base(t), filterFunc{named{"Count"}, func(*framework.Cycle, *framework.Attempt) framework.Status {
		calls++
		return framework.Status{}
	}}))
	_, err := fw.Place(tk, 0)
	perr := placementError(t, err)
	assert.Equal(t, 0, perr.Tried)
	assert.Equal(t, framework.OverCapacity, perr.Reason, "every node is smaller than the task")
	assert.Equal(t, "memory", perr.Dim)
	assert.Equal(t, []framework.Count{{Reason: framework.OverCapacity, Dim: "memory", N: 3}}, perr.Refusals.Counts)
	assert.True(t, perr.Refusals.Unresolvable)
	assert.Empty(t, perr.Refusals.Closest, "no node is short of room only")
	assert.Zero(t, calls, "the free index stops before any node")
}

func TestFilterStatusIsNamedAndCompleted(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	n1 := f.node(t, "n1")
	cases := []struct {
		name   string
		status framework.Status
		want   framework.Status
	}{
		{"bare refusal", framework.Status{Code: framework.Unschedulable}, framework.Status{Code: framework.Unschedulable, Reason: framework.PluginRefused, Plugin: "P"}},
		{"refusal with a reason", framework.Refuse(framework.QoS), framework.Status{Code: framework.Unschedulable, Reason: framework.QoS, Plugin: "P"}},
		{"error is unschedulable", framework.Status{Code: framework.Error, Reason: framework.NoRoom}, framework.Status{Code: framework.Unschedulable, Reason: framework.NoRoom, Plugin: "P"}},
		{"the plugin's own name is kept", framework.Status{Code: framework.Unschedulable, Reason: framework.NoRoom, Plugin: "Inner"}, framework.Status{Code: framework.Unschedulable, Reason: framework.NoRoom, Plugin: "Inner"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fw := f.framework(t, with(f.base(t), refuseNodes("P", tc.status, nil, "n1")))
			st, _ := fw.Filter(tk, n1, 0)
			assert.Equal(t, tc.want, st)
			assert.False(t, st.OK())
			score, sst := fw.Score(tk, n1, 0)
			assert.Equal(t, tc.want, sst)
			assert.Zero(t, score)
		})
	}
}

func TestFilterErrorIsUnschedulableInPlace(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	fw := f.framework(t, with(f.base(t), refuseNodes("Broken", framework.Status{Code: framework.Error}, nil, "n1")))
	as, err := fw.Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, "n2", as.Node, "an Error on n1 moves on to the next node")
}

func TestStageMatchResultTravelsInTheAttempt(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 6) // 6 GiB: fits n1 and n2, not n3
	fw := f.framework(t, f.base(t))
	st, res := fw.Filter(tk, f.node(t, "n3"), 0)
	assert.Equal(t, framework.Status{Code: framework.Unschedulable, Reason: framework.OverCapacity, Plugin: "StageMatch"}, st,
		"n3 is smaller than the task: the probe says so")
	assert.Equal(t, match.NoRoom, res.Code)
	assert.Equal(t, "memory", res.DimName)

	st, res = fw.Filter(tk, f.node(t, "n2"), 0)
	assert.True(t, st.OK())
	assert.Equal(t, match.Fit, res.Code)
}

// ---- Score ----

func TestScorePluginsSum(t *testing.T) {
	f := threeNodes(t)
	a := byNode("A", map[string]float64{"n1": 2})
	b := byNode("B", map[string]float64{"n2": 3})

	tk := f.submit(t, "j", "t1", 1000, 1)
	onlyA := f.framework(t, with(f.base(t), a))
	s1, st := onlyA.Score(tk, f.node(t, "n1"), 0)
	require.True(t, st.OK())
	assert.Equal(t, 2.0, s1)

	fw := f.framework(t, with(f.base(t), a, b))
	for id, want := range map[string]float64{"n1": 2, "n2": 3, "n3": 0} {
		got, st := fw.Score(tk, f.node(t, id), 0)
		require.True(t, st.OK())
		assert.Equal(t, want, got, id)
	}
	as, err := fw.Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, "n2", as.Node, "2+0 < 0+3")

	tk2 := f.submit(t, "j", "t2", 1000, 1)
	heavierA := f.framework(t, with(f.base(t), a, b, byNode("A2", map[string]float64{"n1": 1.5})))
	as, err = heavierA.Place(tk2, 0)
	require.NoError(t, err)
	assert.Equal(t, "n1", as.Node, "2+1.5 > 3")
}

func TestScoreNormalizerIsApplied(t *testing.T) {
	plain := scoreFunc{named{"FreeMemory"}, freeMemGiB}

	t.Run("without normalisation the roomiest wins", func(t *testing.T) {
		f := threeNodes(t)
		tk := f.submit(t, "j", "t1", 1000, 1)
		as, err := f.framework(t, with(f.base(t), plain)).Place(tk, 0)
		require.NoError(t, err)
		assert.Equal(t, "n1", as.Node)
	})

	t.Run("a reversing normaliser makes the least roomy win", func(t *testing.T) {
		f := threeNodes(t)
		tk := f.submit(t, "j", "t1", 1000, 1)
		var gotNodes []string
		var gotScores []float64
		rev := normScore{plain, func(cands []framework.Attempt, s []float64) {
			for _, a := range cands {
				gotNodes = append(gotNodes, a.Node.ID())
			}
			gotScores = append([]float64(nil), s...)
			top := math.Inf(-1)
			for _, x := range s {
				top = math.Max(top, x)
			}
			for i := range s {
				s[i] = top - s[i]
			}
		}}
		fw := f.framework(t, with(f.base(t), rev), framework.WithCandidates(0))
		// The probe is not normalised: one node.
		raw, st := fw.Score(tk, f.node(t, "n3"), 0)
		require.True(t, st.OK())
		assert.Equal(t, 4.0, raw)

		as, err := fw.Place(tk, 0)
		require.NoError(t, err)
		assert.Equal(t, "n3", as.Node)
		assert.Equal(t, []string{"n1", "n2", "n3"}, gotNodes, "candidates in the order visited")
		assert.Equal(t, []float64{16, 8, 4}, gotScores, "scores aligned with the candidates")
	})

	t.Run("normalised scores add to the other plugins", func(t *testing.T) {
		f := threeNodes(t)
		tk := f.submit(t, "j", "t1", 1000, 1)
		zero := normScore{scoreFunc{named{"Zeroed"}, func(*framework.Attempt) float64 { return 100 }}, func(_ []framework.Attempt, s []float64) {
			s[0] = 0 // n1 loses its 100
		}}
		as, err := f.framework(t, with(f.base(t), zero, plain)).Place(tk, 0)
		require.NoError(t, err)
		assert.Equal(t, "n2", as.Node, "n1: 0+16, n2: 100+8, n3: 100+4")
	})
}

func TestNaNScoresRankLast(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	nan := byNode("NaN", map[string]float64{"n1": math.NaN(), "n2": -1e300, "n3": math.Inf(-1)})
	as, err := f.framework(t, with(f.base(t), nan)).Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, "n2", as.Node, "NaN counts as −∞, below any finite score")

	tk2 := f.submit(t, "j", "t2", 1000, 1)
	normNaN := normScore{scoreFunc{named{"NormNaN"}, func(*framework.Attempt) float64 { return 1 }}, func(_ []framework.Attempt, s []float64) {
		s[0], s[1] = math.NaN(), math.NaN()
	}}
	as, err = f.framework(t, with(f.base(t), normNaN)).Place(tk2, 0)
	require.NoError(t, err)
	assert.Equal(t, "n3", as.Node, "a normaliser's NaN ranks last too")

	// The probe reports the sum with NaN as −∞.
	got, st := f.framework(t, with(f.base(t), nan)).Score(f.submit(t, "j", "t3", 1000, 1), f.node(t, "n1"), 0)
	require.True(t, st.OK())
	assert.True(t, math.IsInf(got, -1))
}

func TestScoreTiesGoToTheNodeVisitedFirst(t *testing.T) {
	flat := byNode("Flat", nil)
	t.Run("roomiest first", func(t *testing.T) {
		f := newFixture(t, nodeSpec("a", 4000, 4), nodeSpec("b", 4000, 8), nodeSpec("c", 4000, 6))
		tk := f.submit(t, "j", "t1", 1000, 1)
		as, err := f.framework(t, with(f.base(t), flat)).Place(tk, 0)
		require.NoError(t, err)
		assert.Equal(t, "b", as.Node)
	})
	t.Run("then by ID", func(t *testing.T) {
		f := newFixture(t, nodeSpec("nb", 4000, 8), nodeSpec("na", 4000, 8), nodeSpec("nc", 4000, 4))
		tk := f.submit(t, "j", "t1", 1000, 1)
		as, err := f.framework(t, with(f.base(t), flat)).Place(tk, 0)
		require.NoError(t, err)
		assert.Equal(t, "na", as.Node)
	})
	t.Run("free memory after earlier placements", func(t *testing.T) {
		f := newFixture(t, nodeSpec("na", 4000, 8), nodeSpec("nb", 4000, 8))
		fw := f.framework(t, with(f.base(t), flat))
		first, err := fw.Place(f.submit(t, "j", "t1", 1000, 1), 0)
		require.NoError(t, err)
		assert.Equal(t, "na", first.Node)
		second, err := fw.Place(f.submit(t, "j", "t2", 1000, 1), 0)
		require.NoError(t, err)
		assert.Equal(t, "nb", second.Node, "na has less memory free now")
	})
}

func TestCandidatesLimitTheNodesScored(t *testing.T) {
	f := threeNodes(t)
	prefer3 := byNode("Prefer3", map[string]float64{"n3": 1})
	var log []string
	counter := refuseNodes("Log", framework.Status{}, &log)

	as, err := f.framework(t, with(f.base(t), counter, prefer3), framework.WithCandidates(1)).Place(f.submit(t, "j", "t1", 1000, 1), 0)
	require.NoError(t, err)
	assert.Equal(t, "n1", as.Node, "one candidate: the first node that passes")
	assert.Equal(t, []string{"Log:n1"}, log, "filtering stops once enough nodes passed")

	log = nil
	as, err = f.framework(t, with(f.base(t), counter, prefer3), framework.WithCandidates(0)).Place(f.submit(t, "j", "t2", 1000, 1), 0)
	require.NoError(t, err)
	assert.Equal(t, "n3", as.Node)
	assert.Len(t, log, 3)
}

func TestNodeScorePlugin(t *testing.T) {
	f := threeNodes(t)
	ns, err := plugins.NewNodeScore(match.LeastAllocated{}, 1)
	require.NoError(t, err)
	// Fill n1's memory mostly: n2 is then left with the most free.
	fw := f.framework(t, with(f.base(t), refuseNodes("OnlyN1", framework.Refuse(framework.NoRoom), nil, "n2", "n3")))
	_, err = fw.Place(f.submit(t, "j", "filler", 0, 14), 0)
	require.NoError(t, err)

	fw = f.framework(t, with(f.base(t), ns), framework.WithCandidates(0))
	tk := f.submit(t, "j", "t1", 1000, 1)
	s1, _ := fw.Score(tk, f.node(t, "n1"), 0)
	s2, _ := fw.Score(tk, f.node(t, "n2"), 0)
	assert.Greater(t, s2, s1)
	as, err := fw.Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, "n2", as.Node)
}

// ---- PostFilter ----

// notBefore refuses any attempt starting before at.
func notBefore(at time.Duration) filterFunc {
	return filterFunc{named{"NotBefore"}, func(_ *framework.Cycle, a *framework.Attempt) framework.Status {
		if a.Start < at {
			return framework.Refuse(framework.NoRoom)
		}
		return framework.Status{}
	}}
}

func TestPostFilterProposalIsReservedAtItsStart(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	const later = 100 * time.Second
	calls := 0
	var proposed framework.Status
	post := postFilterFunc{named{"Later"}, &calls, func(c *framework.Cycle, a *framework.Attempt) framework.Status {
		require.Nil(t, a.Node, "the attempt comes without a node")
		a.Node, _ = c.State().Node("n2")
		a.Start = later
		proposed = c.Filter(a)
		return proposed
	}}
	fw := f.framework(t, with(f.base(t), notBefore(later), post))
	free0 := f.node(t, "n2").Timeline().FreeAt(0)

	as, err := fw.Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	assert.True(t, proposed.OK())
	assert.Equal(t, "n2", as.Node)
	assert.Equal(t, later, as.Start)
	assert.Equal(t, cluster.Booked, tk.State(), "committed, its start to come")
	assert.Equal(t, later, tk.Start())
	n2 := f.node(t, "n2")
	assert.Equal(t, free0, n2.Timeline().FreeAt(0), "nothing is held before the start")
	assert.Equal(t, free0.Sub(capacity(1000, 1)), n2.Timeline().FreeAt(later))
}

func TestPostFilterNotCalledWhenANodePasses(t *testing.T) {
	f := threeNodes(t)
	calls := 0
	post := postFilterFunc{named{"Post"}, &calls, func(*framework.Cycle, *framework.Attempt) framework.Status { return framework.Status{} }}
	_, err := f.framework(t, with(f.base(t), post)).Place(f.submit(t, "j", "t1", 1000, 1), 0)
	require.NoError(t, err)
	assert.Zero(t, calls)
}

func TestPostFilterFailureLeavesThePlacementError(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	before := takeSnapshot(t, f.st, "t1")
	failCalls, emptyCalls := 0, 0
	fails := postFilterFunc{named{"Fails"}, &failCalls, func(*framework.Cycle, *framework.Attempt) framework.Status {
		return framework.Refuse(framework.QoS)
	}}
	// Success without a node is no proposal either.
	empty := postFilterFunc{named{"Empty"}, &emptyCalls, func(*framework.Cycle, *framework.Attempt) framework.Status {
		return framework.Status{}
	}}
	fw := f.framework(t, with(f.base(t), refuseNodes("Never", framework.Refuse(framework.NoRoom), nil, "n1", "n2", "n3"), fails, empty))
	_, err := fw.Place(tk, 0)
	perr := placementError(t, err)
	assert.Equal(t, framework.NoRoom, perr.Reason, "the filters' refusal, not the PostFilter's")
	assert.Equal(t, "Never", perr.Plugin)
	assert.Equal(t, 3, perr.Tried)
	assert.Equal(t, 1, failCalls)
	assert.Equal(t, 1, emptyCalls, "a failing PostFilter lets the next one try")
	assert.Equal(t, before, takeSnapshot(t, f.st, "t1"))
}

func TestFutureStartPostFilter(t *testing.T) {
	f := newFixture(t, nodeSpec("n1", 4000, 16))
	fs, err := plugins.NewFutureStart(f.adj, f.comp, 0)
	require.NoError(t, err)
	fw := f.framework(t, with(f.base(t), fs))
	first := f.submitSpec(t, cluster.TaskSpec{ID: "t1", Job: "j", Request: capacity(1000, 16), Duration: 10 * time.Second})
	as, err := fw.Place(first, 0)
	require.NoError(t, err)
	assert.Zero(t, as.Start)

	second := f.submitSpec(t, cluster.TaskSpec{ID: "t2", Job: "j", Request: capacity(1000, 16), Duration: 10 * time.Second})
	as, err = fw.Place(second, time.Second)
	require.NoError(t, err)
	assert.Equal(t, "n1", as.Node)
	assert.Equal(t, 10*time.Second, as.Start, "the earliest start the node offers")
}

// ---- Reserve ----

func TestReserveSeesTheStateReservation(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	var log []string
	r := &recorder{named: named{"R"}, log: &log}
	fw := f.framework(t, with(f.base(t), r))
	as, err := fw.Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"R.Reserve:t1"}, log)
	require.Len(t, r.seen, 1)
	assert.Equal(t, taskSnap{State: cluster.Reserved, Node: as.Node}, r.seen[0], "Reserve comes after the state reservation")
	assert.Equal(t, cluster.Running, tk.State())
}

func TestFailingReserveRollsBackExactly(t *testing.T) {
	for _, failing := range []int{1, 2} {
		t.Run([]string{"", "second of two", "third of three"}[failing], func(t *testing.T) {
			f := threeNodes(t)
			fw0 := f.framework(t, f.base(t))
			// Something on the nodes and among the jobs already.
			_, err := fw0.Place(f.submit(t, "other", "o1", 500, 2), 0)
			require.NoError(t, err)
			f.submit(t, "other", "o2", 500, 2)
			tk := f.submit(t, "j", "t1", 1000, 3)
			f.submit(t, "j", "t2", 1000, 3)
			before := takeSnapshot(t, f.st, "t1", "t2", "o1", "o2")

			var log []string
			rs := []*recorder{{named: named{"R1"}, log: &log}, {named: named{"R2"}, log: &log}, {named: named{"R3"}, log: &log}}
			rs[failing].fail = true
			ps := f.base(t)
			for _, r := range rs[:failing+1] {
				ps = append(ps, r)
			}
			fw := f.framework(t, ps)

			_, err = fw.Place(tk, 0)
			perr := placementError(t, err)
			assert.Equal(t, framework.PluginRefused, perr.Reason)
			assert.Equal(t, rs[failing].name, perr.Plugin)

			var want []string
			for _, r := range rs[:failing+1] {
				want = append(want, r.name+".Reserve:t1")
			}
			for i := failing - 1; i >= 0; i-- {
				want = append(want, rs[i].name+".Unreserve:t1")
			}
			assert.Equal(t, want, log, "Unreserve on the plugins before the failing one, in reverse order")
			for i := 0; i < failing; i++ {
				require.Len(t, rs[i].seen, 2)
				assert.Equal(t, cluster.Reserved, rs[i].seen[1].State, "plugins unreserve before the state does")
			}
			assert.Len(t, rs[failing].seen, 1, "no Unreserve on the failing plugin")

			assert.Equal(t, cluster.Pending, tk.State())
			assert.Nil(t, tk.Node())
			assert.Equal(t, before, takeSnapshot(t, f.st, "t1", "t2", "o1", "o2"))

			// The task can still be placed.
			as, err := fw0.Place(tk, 0)
			require.NoError(t, err)
			assert.Equal(t, "n1", as.Node)
		})
	}
}

func TestFailingReserveInAHeartbeatRollsBack(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 3)
	f.submit(t, "k", "k1", 1000, 3)
	before := takeSnapshot(t, f.st, "t1", "k1")
	var log []string
	failing := &recorder{named: named{"Fail"}, log: &log, fail: true}
	jf := &jobFilter{named: named{"Jobs"}}
	fw := f.framework(t, with(f.base(t), failing, jf, plugins.NewDelayScheduling(nil)), framework.WithSkipDetails(5))
	d, err := fw.Heartbeat(f.node(t, "n1"), 0)
	require.NoError(t, err)
	assert.Empty(t, d.Assignments)
	assert.Equal(t, 2, d.Skipped)
	require.Len(t, d.Skips, 2)
	for _, sk := range d.Skips {
		assert.Equal(t, framework.PluginRefused, sk.Reason)
		assert.NotEmpty(t, sk.Task)
	}
	require.Len(t, jf.refused, 2)
	assert.Equal(t, "Fail", jf.refused[0].Status.Plugin)
	assert.Equal(t, cluster.Pending, tk.State())
	assert.Equal(t, before, takeSnapshot(t, f.st, "t1", "k1"), "rolled back inside the walk, too")
}

// ---- Pull mode ----

func TestHeartbeatStartsPendingTasks(t *testing.T) {
	f := threeNodes(t)
	f.submit(t, "j", "t1", 1000, 1)
	f.submit(t, "j", "t2", 1000, 1)
	f.submit(t, "k", "k1", 1000, 1)
	fw := f.framework(t, with(f.base(t), plugins.NewDelayScheduling(nil)))
	d, err := fw.Heartbeat(f.node(t, "n2"), 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "n2", d.Node)
	assert.Equal(t, 5*time.Second, d.At)
	assert.Equal(t, framework.NoPending, d.Stop)
	assert.Equal(t, map[string]string{"t1": "n2", "t2": "n2", "k1": "n2"}, assignedTo(d.Assignments))
	for _, as := range d.Assignments {
		assert.Equal(t, 5*time.Second, as.Start)
		assert.Equal(t, fairness.NodeLocal, as.Locality)
	}
	assert.Equal(t, 3, f.st.Count(cluster.Running))
}

func TestNodeGateClosesBeforeAnyJob(t *testing.T) {
	f := threeNodes(t)
	f.submit(t, "j", "t1", 1000, 1)
	before := takeSnapshot(t, f.st, "t1")
	calls := 0
	jf := &jobFilter{named: named{"Jobs"}}
	fw := f.framework(t, with(f.base(t),
		gate{named{"Open"}, framework.Status{}, &calls},
		gate{named{"Closed"}, framework.Close(framework.CapReached), &calls},
		jf, plugins.NewDelayScheduling(nil)), framework.WithSkipDetails(5))
	d, err := fw.Heartbeat(f.node(t, "n1"), 0)
	require.NoError(t, err)
	assert.Equal(t, framework.CapReached, d.Stop)
	assert.Empty(t, d.Assignments)
	assert.Zero(t, d.Skipped)
	assert.Empty(t, d.Skips)
	assert.Equal(t, 2, calls, "both gates asked once")
	assert.Zero(t, jf.passes, "the job filters' pass check comes after the gates")
	assert.Empty(t, jf.jobs, "no job walked")
	assert.Equal(t, before, takeSnapshot(t, f.st, "t1"))
}

func TestIdleGateAndHeartbeatCap(t *testing.T) {
	f := threeNodes(t)
	// A node the adjuster does not track is StopAllocation.
	f.addNode(t, nodeSpec("untracked", 4000, 4))
	require.NoError(t, f.adj.RemoveServer("untracked"))
	idle, err := plugins.NewIdleGate(f.adj)
	require.NoError(t, err)
	fw := f.framework(t, with(f.base(t), idle, plugins.HeartbeatCap{Max: 1}, plugins.NewDelayScheduling(nil)))

	full := f.submit(t, "k", "full", 4000, 4)
	d, err := fw.Heartbeat(f.node(t, "untracked"), 0)
	require.NoError(t, err)
	assert.Equal(t, framework.PolicyStop, d.Stop)
	assert.Empty(t, d.Assignments)
	assert.Equal(t, cluster.Pending, full.State())

	// The task takes all of n3's cpu: the gate, asked after the start, finds it busy.
	d, err = fw.Heartbeat(f.node(t, "n3"), 0)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"full": "n3"}, assignedTo(d.Assignments))
	assert.Equal(t, framework.NodeBusy, d.Stop)

	t1 := f.submit(t, "j", "t1", 1000, 1)
	d, err = fw.Heartbeat(f.node(t, "n3"), time.Second)
	require.NoError(t, err)
	assert.Equal(t, framework.NodeBusy, d.Stop)
	assert.Empty(t, d.Assignments)
	assert.Equal(t, cluster.Pending, t1.State())

	// The cap: one start per heartbeat.
	f.submit(t, "j", "t2", 1000, 1)
	d, err = fw.Heartbeat(f.node(t, "n1"), time.Second)
	require.NoError(t, err)
	assert.Equal(t, framework.CapReached, d.Stop)
	assert.Len(t, d.Assignments, 1)
	assert.Equal(t, 1, f.st.Count(cluster.Pending))
}

func TestJobFilterPassesOverAJob(t *testing.T) {
	for _, details := range []int{0, 5} {
		f := threeNodes(t)
		f.submit(t, "a", "a1", 1000, 1)
		f.submit(t, "b", "b1", 1000, 1)
		jf := &jobFilter{named: named{"NotA"}, refuse: map[string]bool{"a": true}}
		fw := f.framework(t, with(f.base(t), jf, plugins.NewDelayScheduling(nil)), framework.WithSkipDetails(details))
		d, err := fw.Heartbeat(f.node(t, "n1"), 0)
		require.NoError(t, err)
		assert.Equal(t, details, d.Details())
		assert.Equal(t, map[string]string{"b1": "n1"}, assignedTo(d.Assignments))
		assert.Equal(t, 1, d.Skipped)
		if details == 0 {
			assert.Empty(t, d.Skips)
		} else {
			assert.Equal(t, []framework.Skip{{Job: "a", Reason: framework.PluginRefused, Plugin: "NotA"}}, d.Skips)
		}
		assert.Equal(t, 1, CountOf(jf.jobs, "a"), "a passed over job is not asked again in the heartbeat")
		assert.Empty(t, jf.refused)
		tk := f.task(t, "a1")
		assert.Equal(t, cluster.Pending, tk.State())
	}
}

func CountOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

func TestRefusedIsToldOfAFailedTask(t *testing.T) {
	f := threeNodes(t)
	f.submit(t, "a", "a1", 1000, 1)
	f.submit(t, "b", "b1", 1000, 1)
	jf := &jobFilter{named: named{"Jobs"}}
	onlyB := filterFunc{named{"OnlyB"}, func(_ *framework.Cycle, a *framework.Attempt) framework.Status {
		if a.Task.Job() != "b" {
			return framework.Status{Code: framework.Unschedulable}
		}
		return framework.Status{}
	}}
	fw := f.framework(t, with(f.base(t), onlyB, jf, plugins.NewDelayScheduling(nil)), framework.WithSkipDetails(5))
	d, err := fw.Heartbeat(f.node(t, "n2"), 0)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"b1": "n2"}, assignedTo(d.Assignments))
	assert.Equal(t, []refusal{{Task: "a1", Node: "n2", Status: framework.Status{Code: framework.Unschedulable, Reason: framework.PluginRefused, Plugin: "OnlyB"}}}, jf.refused)
	require.Len(t, d.Skips, 1)
	assert.Equal(t, "a", d.Skips[0].Job)
	assert.Equal(t, "a1", d.Skips[0].Task)
	assert.Equal(t, framework.PluginRefused, d.Skips[0].Reason)
	assert.Equal(t, 1, d.Skipped)
}

func TestPassErrorEndsTheHeartbeat(t *testing.T) {
	f := threeNodes(t)
	f.submit(t, "j", "t1", 1000, 1)
	before := takeSnapshot(t, f.st, "t1")
	boom := errors.New("boom")
	later := 0
	fw := f.framework(t, with(f.base(t),
		&passFunc{named{"Fails"}, func(*framework.Cycle, *cluster.NodeInfo) error { return boom }},
		&passFunc{named{"Later"}, func(*framework.Cycle, *cluster.NodeInfo) error { later++; return nil }},
	))
	d, err := fw.Heartbeat(f.node(t, "n1"), 0)
	require.ErrorIs(t, err, boom)
	assert.Empty(t, d.Assignments, "nothing started before the failing pass")
	assert.Zero(t, later, "no pass after the failing one")
	assert.Equal(t, before, takeSnapshot(t, f.st, "t1"))
}

func TestPassesRunInOrderWithTheirCycle(t *testing.T) {
	f := threeNodes(t)
	var log []string
	var gens []uint64
	mk := func(name string) *passFunc {
		return &passFunc{named{name}, func(c *framework.Cycle, n *cluster.NodeInfo) error {
			log = append(log, name)
			assert.Equal(t, framework.Pull, c.Mode())
			assert.Equal(t, 3*time.Second, c.Now())
			assert.Equal(t, "n3", n.ID())
			require.NotNil(t, c.Decision())
			assert.Equal(t, "n3", c.Decision().Node)
			assert.Equal(t, capacity(4000, 4), c.Free())
			gens = append(gens, c.Gen())
			return nil
		}}
	}
	fw := f.framework(t, with(f.base(t), mk("P1"), mk("P2")))
	_, err := fw.Heartbeat(f.node(t, "n3"), 3*time.Second)
	require.NoError(t, err)
	_, err = fw.Heartbeat(f.node(t, "n3"), 3*time.Second)
	require.NoError(t, err)
	assert.Equal(t, []string{"P1", "P2", "P1", "P2"}, log)
	require.Len(t, gens, 4)
	assert.Equal(t, gens[0], gens[1], "one cycle, one generation")
	assert.Greater(t, gens[2], gens[1], "generations grow from cycle to cycle")
}

// ---- Probes ----

func TestProbesChangeNothingAndRunConcurrently(t *testing.T) {
	f := newFixture(t)
	var nodes []*cluster.NodeInfo
	for i, mem := range []int64{16, 8, 8, 4, 4, 2, 32, 1} {
		id := string(rune('a' + i))
		f.addNode(t, nodeSpec(id, 4000, mem))
		nodes = append(nodes, f.node(t, id))
	}
	ns, err := plugins.NewNodeScore(match.LeastAllocated{}, 2)
	require.NoError(t, err)
	odd := filterFunc{named{"NotF"}, func(_ *framework.Cycle, a *framework.Attempt) framework.Status {
		if a.Node.ID() == "f" {
			return framework.Refuse(framework.QoS)
		}
		return framework.Status{}
	}}
	fw := f.framework(t, with(f.base(t), odd, ns, byNode("Bonus", map[string]float64{"c": 0.5})), framework.WithCandidates(0))
	// Some load first.
	for i := 0; i < 6; i++ {
		_, err := fw.Place(f.submit(t, "load", "l"+string(rune('0'+i)), 1500, 3), 0)
		require.NoError(t, err)
	}
	var tasks []*cluster.TaskInfo
	for i, mem := range []int64{1, 3, 6, 12} {
		tasks = append(tasks, f.submit(t, "j", "t"+string(rune('0'+i)), 1000, mem))
	}
	ids := []string{"t0", "t1", "t2", "t3", "l0", "l5"}
	before := takeSnapshot(t, f.st, ids...)

	// Sequential answers first.
	want := make([][]probeResult, len(nodes))
	passed := 0
	for i, n := range nodes {
		for _, tk := range tasks {
			var p probeResult
			p.FilterStatus, p.Result = fw.Filter(tk, n, time.Second)
			p.Score, p.ScoreStatus = fw.Score(tk, n, time.Second)
			assert.Equal(t, p.FilterStatus, p.ScoreStatus)
			if p.FilterStatus.OK() {
				passed++
			} else {
				assert.Zero(t, p.Score)
			}
			want[i] = append(want[i], p)
		}
	}
	require.NotZero(t, passed)
	require.Less(t, passed, len(nodes)*len(tasks), "some probes refuse")
	assert.Equal(t, before, takeSnapshot(t, f.st, ids...), "sequential probes change nothing")

	got := concurrentProbes(fw, nodes, tasks, time.Second, 20)
	assert.Equal(t, want, got)
	assert.Equal(t, before, takeSnapshot(t, f.st, ids...), "concurrent probes change nothing")
	for _, tk := range tasks {
		assert.Equal(t, cluster.Pending, tk.State())
	}
}

func TestProbesShareTheGenerationOfTheCycleBefore(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	type seen struct {
		Mode framework.Mode
		Gen  uint64
	}
	var log []seen
	rec := filterFunc{named{"Gen"}, func(c *framework.Cycle, a *framework.Attempt) framework.Status {
		log = append(log, seen{c.Mode(), c.Gen()})
		assert.Nil(t, c.Decision(), "no Decision outside pull mode")
		return framework.Refuse(framework.NoRoom)
	}}
	fw := f.framework(t, with(f.base(t), rec), framework.WithCandidates(1))
	n1 := f.node(t, "n1")
	_, err := fw.Place(tk, 0)
	require.Error(t, err)
	require.Len(t, log, 3)
	g := log[0].Gen
	assert.Equal(t, []seen{{framework.Push, g}, {framework.Push, g}, {framework.Push, g}}, log)
	log = nil
	fw.Filter(tk, n1, 0)
	fw.Score(tk, n1, 0)
	_, err = fw.Place(tk, 0)
	require.Error(t, err)
	assert.Equal(t, []seen{{framework.Probe, g}, {framework.Probe, g}, {framework.Push, g + 1}, {framework.Push, g + 1}, {framework.Push, g + 1}}, log)
}

func TestProbeSeesTheLocality(t *testing.T) {
	f := newFixture(t,
		cluster.NodeSpec{ID: "n1", Rack: "r1", Capacity: capacity(4000, 8)},
		cluster.NodeSpec{ID: "n2", Rack: "r1", Capacity: capacity(4000, 8)},
		cluster.NodeSpec{ID: "n3", Rack: "r2", Capacity: capacity(4000, 8)})
	tk := f.submitSpec(t, cluster.TaskSpec{ID: "t1", Job: "j", Request: capacity(1000, 1), Inputs: []string{"n1"}})
	level := scoreFunc{named{"Level"}, func(a *framework.Attempt) float64 { return float64(a.Level) }}
	fw := f.framework(t, with(f.base(t), level))
	for id, want := range map[string]fairness.Level{"n1": fairness.NodeLocal, "n2": fairness.RackLocal, "n3": fairness.OffSwitch} {
		got, st := fw.Score(tk, f.node(t, id), 0)
		require.True(t, st.OK())
		assert.Equal(t, float64(want), got, id)
	}
}

func TestAssignmentLocality(t *testing.T) {
	f := newFixture(t,
		cluster.NodeSpec{ID: "n1", Rack: "r1", Capacity: capacity(4000, 8)},
		cluster.NodeSpec{ID: "n2", Rack: "r1", Capacity: capacity(4000, 8)},
		cluster.NodeSpec{ID: "n3", Rack: "r2", Capacity: capacity(4000, 8)})
	fw := f.framework(t, with(f.base(t), plugins.NewDelayScheduling(nil)))
	// Push: n1 is visited first (a tie broken by ID); the input is on n2, same rack.
	as, err := fw.Place(f.submitSpec(t, cluster.TaskSpec{ID: "t1", Job: "j", Request: capacity(1000, 1), Inputs: []string{"n2"}}), 0)
	require.NoError(t, err)
	assert.Equal(t, "n1", as.Node)
	assert.Equal(t, fairness.RackLocal, as.Locality)
	// Pull: n3 is in another rack.
	f.submitSpec(t, cluster.TaskSpec{ID: "t2", Job: "j", Request: capacity(1000, 1), Inputs: []string{"n1"}})
	d, err := fw.Heartbeat(f.node(t, "n3"), 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, "t2", d.Assignments[0].Task)
	assert.Equal(t, fairness.OffSwitch, d.Assignments[0].Locality)
}

func TestModeAndReasonStrings(t *testing.T) {
	assert.Equal(t, "pull", framework.Pull.String())
	assert.Equal(t, "push", framework.Push.String())
	assert.Equal(t, "probe", framework.Probe.String())
	assert.Equal(t, "Success", framework.Status{}.String())
	assert.Equal(t, "Unschedulable: no room (P)", framework.Status{Code: framework.Unschedulable, Reason: framework.NoRoom, Plugin: "P"}.String())
	assert.Equal(t, "Closed: cap reached", framework.Close(framework.CapReached).String())
	assert.Equal(t, "permit denied", framework.PermitDenied.String())
	assert.Equal(t, "Wait", framework.Wait.String())
	assert.Equal(t, "no class of its tasks fits", framework.NoClassFits.String())
}

// A skip shows the match result only for a task that was matched.
func TestSkipString(t *testing.T) {
	noRoom := match.Result{Code: match.NoRoom, Stage: 1, DimName: "memory", Demand: 5, Free: 3, Until: time.Minute}
	for _, tc := range []struct {
		skip framework.Skip
		want string
	}{
		{framework.Skip{Job: "j", Task: "t", Reason: framework.NoRoom, Result: noRoom},
			`job "j", task "t": no room: stage 1 needs memory=5 over [0s, 1m0s) but 3 is free (compression allowance 0, short by 2)`},
		{framework.Skip{Job: "j", Reason: framework.NoClassFits, Plugin: "DemandClasses"},
			`job "j": no class of its tasks fits (DemandClasses)`},
		{framework.Skip{Job: "j", Reason: framework.LocalityWait}, `job "j": locality wait`},
		{framework.Skip{Job: "j", Task: "t", Reason: framework.MaxShare}, `job "j", task "t": max share`},
	} {
		assert.Equal(t, tc.want, tc.skip.String())
	}
}

// ---- Regressions: bugs found by these tests and fixed ----

// Attempt.Level is "how close Node is to the task's input" for the Filter and Score
// plugins of a push placement too, so Place and the probes agree.
func TestPlaceLevelDuringFilterAndScore(t *testing.T) {
	f := threeNodes(t)
	tk := f.submitSpec(t, cluster.TaskSpec{ID: "t1", Job: "j", Request: capacity(1000, 1), Inputs: []string{"n3"}})
	local := scoreFunc{named{"PreferLocal"}, func(a *framework.Attempt) float64 {
		if a.Level == fairness.NodeLocal {
			return 1
		}
		return 0
	}}
	var seen []string
	levels := filterFunc{named{"Levels"}, func(_ *framework.Cycle, a *framework.Attempt) framework.Status {
		seen = append(seen, a.Node.ID()+":"+a.Level.String())
		return framework.Status{}
	}}
	fw := f.framework(t, with(f.base(t), levels, local), framework.WithCandidates(0))
	s1, _ := fw.Score(tk, f.node(t, "n1"), 0)
	s3, _ := fw.Score(tk, f.node(t, "n3"), 0)
	require.Equal(t, []float64{0, 1}, []float64{s1, s3}, "the probes see the locality")
	seen = nil

	as, err := fw.Place(tk, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"n1:" + fairness.OffSwitch.String(), "n2:" + fairness.OffSwitch.String(), "n3:" + fairness.NodeLocal.String()}, seen)
	assert.Equal(t, "n3", as.Node, "the node-local node scores highest")
}

// A Closed status from a Filter (or Reserve, or Permit) plugin ends a pull heartbeat,
// and its reason becomes Decision.Stop.
func TestClosedFilterInPullLeavesStopNoPending(t *testing.T) {
	f := threeNodes(t)
	f.submit(t, "a", "a1", 1000, 1)
	f.submit(t, "b", "b1", 1000, 1)
	closeOnA := filterFunc{named{"Closer"}, func(_ *framework.Cycle, a *framework.Attempt) framework.Status {
		if a.Task.Job() == "a" {
			return framework.Close(framework.CapReached)
		}
		return framework.Status{}
	}}
	fw := f.framework(t, with(f.base(t), closeOnA, plugins.NewDelayScheduling(nil)))
	d, err := fw.Heartbeat(f.node(t, "n1"), 0)
	require.NoError(t, err)
	require.Empty(t, d.Assignments, "the heartbeat ended at a1")
	assert.Equal(t, framework.CapReached, d.Stop)
}

// A Pass that fails ends the heartbeat; the tasks earlier passes started are in the
// Decision returned with the error.
func TestPassErrorLosesEarlierPassesStarts(t *testing.T) {
	f := threeNodes(t)
	tk := f.submit(t, "j", "t1", 1000, 1)
	boom := errors.New("boom")
	fw := f.framework(t, with(f.base(t), plugins.NewDelayScheduling(nil),
		&passFunc{named{"FailsLater"}, func(*framework.Cycle, *cluster.NodeInfo) error { return boom }}))
	d, err := fw.Heartbeat(f.node(t, "n1"), 0)
	require.ErrorIs(t, err, boom)
	require.Equal(t, cluster.Running, tk.State())
	assert.Equal(t, map[string]string{"t1": "n1"}, assignedTo(d.Assignments), "t1 started in this heartbeat")
}

// plugins.HeartbeatCap counts only the heartbeat's node's starts, not waiting tasks
// allowed during the heartbeat that run on other nodes.
func TestHeartbeatCapCountsAllowedTasksOfOtherNodes(t *testing.T) {
	f := threeNodes(t)
	t1 := f.submit(t, "j", "t1", 1000, 1)
	allow := &passFunc{named{"Allow"}, func(c *framework.Cycle, _ *cluster.NodeInfo) error {
		for _, w := range c.Waiting() {
			require.NoError(t, c.Allow(w.ID()))
		}
		return nil
	}}
	fw := f.framework(t, with(f.base(t), &permitFunc{named{"Waits"}, waitFor(time.Hour, "t1")},
		plugins.HeartbeatCap{Max: 1}, allow, plugins.NewDelayScheduling(nil)))
	_, err := fw.Place(t1, 0)
	require.Equal(t, framework.PermitWaiting, placementError(t, err).Reason)
	require.Equal(t, "n1", t1.Node().ID())
	t2 := f.submit(t, "k", "t2", 1000, 1)

	d, err := fw.Heartbeat(f.node(t, "n2"), 0)
	require.NoError(t, err)
	assert.Equal(t, cluster.Running, t1.State())
	assert.Equal(t, map[string]string{"t1": "n1", "t2": "n2"}, assignedTo(d.Assignments), "n2 started nothing yet")
	assert.Equal(t, cluster.Running, t2.State())
}

// forgetter records the jobs the framework tells it the state forgot.
type forgetter struct {
	named
	got []string
}

func (p *forgetter) Forget(j *cluster.JobInfo) { p.got = append(p.got, j.ID()) }

// When the state forgets a completed job (cluster.Retention), every ForgetPlugin is
// told, in order, and delay scheduling drops the job's locality wait.
func TestForgetPluginsToldOfForgottenJobs(t *testing.T) {
	f := newFixture(t)
	st, err := cluster.New(schema, cluster.WithRetention(cluster.Retention{}))
	require.NoError(t, err)
	f.st = st
	f.addNode(t, nodeSpec("n1", 4000, 16))
	f.addNode(t, nodeSpec("n2", 4000, 16))
	far := f.submitSpec(t, cluster.TaskSpec{ID: "far", Job: "waits", Request: capacity(1000, 1), Inputs: []string{"n2"}})
	delay, err := fairness.NewDelay()
	require.NoError(t, err)
	a, b := &forgetter{named: named{"A"}}, &forgetter{named: named{"B"}}
	fw := f.framework(t, with(f.base(t), a, plugins.NewDelayScheduling(delay), b))
	assert.Equal(t, []string{"A", "DelayScheduling", "B"}, fw.Plugins()["Forget"])

	d, err := fw.Heartbeat(f.node(t, "n1"), 0)
	require.NoError(t, err)
	assert.Empty(t, d.Assignments, "the job waits for its input's node")
	require.Equal(t, 1, delay.Len())

	require.NoError(t, st.Cancel(far, 0))
	assert.Equal(t, []string{"waits"}, a.got)
	assert.Equal(t, []string{"waits"}, b.got)
	assert.Equal(t, 0, delay.Len(), "the forgotten job's wait is dropped")
	_, ok := st.Job("waits")
	assert.False(t, ok)

	// A new job in the forgotten job's index is not taken for it.
	f.submit(t, "next", "t1", 1000, 1)
	d, err = fw.Heartbeat(f.node(t, "n1"), time.Second)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"t1": "n1"}, assignedTo(d.Assignments))
}

// A Score after the probe's own Filter of the node (FilterKept, then ScoreKept with
// the same Verdict) scores on that Filter's findings when it passed: the Filter
// plugins run once. A refusal, a verdict another probe's Filter left, or none, makes
// Score filter again. The answers are Filter's and Score's either way.
func TestScoreKeptReusesItsOwnFilter(t *testing.T) {
	f := threeNodes(t)
	calls := 0
	count := filterFunc{named{"Count"}, func(_ *framework.Cycle, a *framework.Attempt) framework.Status {
		if a.Task.ID() == "small" {
			calls++ // the small task's Filters
		}
		if a.Node.ID() == "n3" {
			return framework.Refuse(framework.QoS)
		}
		return framework.Status{}
	}}
	ns, err := plugins.NewNodeScore(match.LeastAllocated{}, 1)
	require.NoError(t, err)
	scored := 0
	countScores := scoreFunc{named{"CountScores"}, func(a *framework.Attempt) float64 {
		if a.Task.ID() == "small" {
			scored++ // the small task's runs of the Score plugins
		}
		return 0
	}}
	fw := f.framework(t, with(f.base(t), count, ns, countScores))
	small, large := f.submit(t, "j", "small", 1000, 2), f.submit(t, "j", "large", 2000, 6)
	ps, pl := fw.NewTaskProbe(small, 0), fw.NewTaskProbe(large, 0)
	for _, id := range []string{"n1", "n2", "n3"} {
		n := f.node(t, id)
		wantS, wantSt := ps.Score(n)
		wantL, wantLt := pl.Score(n)
		fs, fr := ps.Filter(n)

		var v framework.Verdict
		calls, scored = 0, 0
		st, r := ps.FilterKept(n, &v)
		assert.Equal(t, fs, st, id)
		assert.Equal(t, fr, r, id)
		x, sst := ps.ScoreKept(n, &v)
		assert.Equal(t, wantS, x, id)
		assert.Equal(t, wantSt, sst, id)
		if fs.OK() {
			assert.Equal(t, 1, calls, "%s: Score on its own Filter's pass filters no more", id)
			assert.Equal(t, 1, scored, "%s: the Score plugins run once, in the Filter that passed", id)
		} else {
			assert.Equal(t, 2, calls, "%s: a refusal is not kept (a host scores the nodes that passed)", id)
			assert.Equal(t, 0, scored, "%s: a refusal is not scored", id)
		}

		calls = 0
		_, _ = pl.FilterKept(n, &v) // the verdict is now the large task's
		x, sst = ps.ScoreKept(n, &v)
		assert.Equal(t, wantS, x, id)
		assert.Equal(t, wantSt, sst, id)
		x, sst = pl.ScoreKept(n, &v)
		assert.Equal(t, wantL, x, id)
		assert.Equal(t, wantLt, sst, id)
		assert.Equal(t, 1, calls, "%s: on another probe's verdict, the small task is filtered again", id)

		calls = 0
		x, sst = ps.ScoreKept(n, nil)
		assert.Equal(t, wantS, x, id)
		assert.Equal(t, wantSt, sst, id)
		assert.Equal(t, 1, calls, id)
	}
}
