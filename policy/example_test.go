package policy_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// staticConformity stands in for predict's *ConformityLog.
type staticConformity map[string]resource.Vector

func (c staticConformity) Mean(server string) (resource.Vector, bool) {
	v, ok := c[server]
	return v, ok
}

func ExampleAdjuster() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	capacity := s.MustTuple(4000, 8<<30)
	// Eq. 16 values: n2's cpu is under-predicted by 300 millicores RMS (7.5% of 4000),
	// n3's memory by 1 GiB (12.5%), n4's cpu by 1000 (25%).
	conf := staticConformity{
		"n1": {10 * 10},
		"n2": {300 * 300},
		"n3": {0, float64(1<<30) * float64(1<<30)},
		"n4": {1000 * 1000},
	}
	adj, _ := policy.NewAdjuster(s, conf)
	for _, id := range []string{"n1", "n2", "n3", "n4"} {
		_ = adj.AddServer(id, capacity)
	}
	// n4's tasks take twice as long as expected.
	for range 3 {
		_ = adj.ObserveCompletion("n4", time.Minute, 2*time.Minute)
	}
	for _, c := range adj.Adjust() {
		fmt.Println(c)
	}
	ok, _ := adj.Schedulable("n1", s.MustTuple(1000, 2<<30))
	fmt.Printf("n1 schedulable: %v, matcher %T\n", ok, adj.Matcher("n1"))
	// Output:
	// n2: FineGrained → FineGrainedNoCompression (score 0.075)
	// n3: FineGrained → CoarseGrained (score 0.125)
	// n4: FineGrained → StopAllocation (score 0.25), recycle (tasks 2× as long as expected)
	// n1 schedulable: true, matcher match.FineGrained
}

func ExampleCompression() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	modes := staticModes{"busy": policy.ModeFineGrainedNoCompression}
	comp, _ := policy.NewCompression(s, modes, policy.WithPenalty(0.05))

	// Eq. 6/7 per dimension: 2000 millicores running, a stage of 2200 joins.
	fmt.Printf("%.2f\n", comp.Ratio(0, 2000, 2200))
	// 3900 running, 100 joins: compressing 39 parts for 1 does not pay.
	fmt.Printf("%.2f\n", comp.Ratio(0, 3900, 100))

	tl, _ := stage.NewTimeline(s, s.MustTuple(4000, 8<<30))
	_, _ = tl.Reserve(0, stage.MustProfile(s, stage.Stage{Duration: time.Second, Demand: s.MustTuple(2000, 1<<30)}), resource.Tuple{})
	p := stage.MustProfile(s, stage.Stage{Duration: time.Second, Demand: s.MustTuple(2200, 1<<30)})
	for _, id := range []string{"idle", "busy"} {
		fmt.Println(id, match.FineGrained{}.Match(comp.Server(id, tl), 0, p))
	}
	// Output:
	// 0.10
	// 0.00
	// idle fits by compressing cpu by 4.76%
	// busy stage 0 needs cpu=2200m over [0s, 1s) but 2 is free (compression allowance 0, short by 200m)
}

// staticModes is a fixed ModeSource; servers not listed are FineGrained.
type staticModes map[string]policy.NodeMode

func (m staticModes) Mode(id string) policy.NodeMode { return m[id] }
