package speculate_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// bytesReader hands out fuzz bytes as small numbers; once exhausted it returns zeros.
type bytesReader struct{ b []byte }

func (r *bytesReader) u8() uint8 {
	if len(r.b) == 0 {
		return 0
	}
	x := r.b[0]
	r.b = r.b[1:]
	return x
}

func (r *bytesReader) i64() int64 {
	if len(r.b) < 8 {
		return int64(r.u8()) - 16
	}
	x := int64(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return x
}

func (r *bytesReader) f64() float64 {
	switch r.u8() % 8 {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return -float64(r.u8()) / 100
	case 3:
		return math.Float64frombits(uint64(r.i64()))
	}
	return float64(r.u8()) / 100
}

func (r *bytesReader) dur() time.Duration {
	if r.u8()%5 == 0 {
		return time.Duration(r.i64())
	}
	return time.Duration(int64(r.u8())-8) * time.Second
}

func (r *bytesReader) id(prefix string, n uint8) string {
	x := r.u8() % (n + 1)
	if x == n {
		return ""
	}
	return fmt.Sprintf("%s%d", prefix, x)
}

// FuzzOptions checks that the speculators' constructors accept exactly the documented
// ranges and reject the rest with ErrInvalidOption.
func FuzzOptions(f *testing.F) {
	f.Add(0.1, 1.0, 1.0, int64(60e9))
	f.Add(0.0, -1.0, math.NaN(), int64(-1))
	f.Add(1.0, 0.0, 0.0, int64(0))
	f.Fuzz(func(t *testing.T, capX, slowTask, slowNode float64, minRuntime int64) {
		opts := []speculate.Option{speculate.WithSpeculativeCap(capX), speculate.WithSlowTaskThreshold(slowTask),
			speculate.WithSlowNodeThreshold(slowNode), speculate.WithMinRuntime(time.Duration(minRuntime))}
		valid := capX > 0 && capX <= 1 && slowTask >= 0 && !math.IsInf(slowTask, 0) &&
			slowNode >= 0 && !math.IsInf(slowNode, 0) && minRuntime >= 0
		_, errL := speculate.NewLATE(opts...)
		_, errP := speculate.NewPRRL(opts...)
		for _, err := range []error{errL, errP} {
			if valid != (err == nil) {
				t.Fatalf("cap %v thresholds %v %v runtime %v: valid %v, err %v", capX, slowTask, slowNode, minRuntime, valid, err)
			}
			if err != nil && !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
		}
	})
}

// FuzzPlacerOptions checks the placer's constructor the same way.
func FuzzPlacerOptions(f *testing.F) {
	f.Add(int64(128<<20), 20.0*(1<<20), 5.0*(1<<20))
	f.Add(int64(0), math.NaN(), math.Inf(1))
	f.Fuzz(func(t *testing.T, block int64, rack, cross float64) {
		valid := block > 0 && rack > 0 && cross > 0 && !math.IsInf(rack, 0) && !math.IsInf(cross, 0)
		p, err := speculate.NewFairPlacer(speculate.WithBlockSize(block), speculate.WithRackBandwidth(rack), speculate.WithCrossRackBandwidth(cross))
		if valid != (err == nil) || (err != nil && !knownError(err)) {
			t.Fatalf("block %v bandwidths %v %v: valid %v, err %v", block, rack, cross, valid, err)
		}
		if err == nil {
			for _, l := range []fairness.Level{fairness.NodeLocal, fairness.RackLocal, fairness.OffSwitch} {
				if p.Transfer(l) < 0 {
					t.Fatalf("negative transfer time at %v", l)
				}
			}
		}
	})
}

// FuzzScaleUp checks that ScaleUp never panics, fails only with documented errors, and
// adds only to compressible dimensions.
func FuzzScaleUp(f *testing.F) {
	f.Add(int64(400e9), int64(100e9), int64(0), int64(250e9), int64(1500), int64(4<<30))
	f.Add(int64(-1), int64(0), int64(0), int64(0), int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, finish, now, start, slo, cpu, mem int64) {
		v := predict.StragglerVerdict{Finish: time.Duration(finish)}
		extra, err := speculate.ScaleUp(std, v, time.Duration(now), time.Duration(start), time.Duration(slo), resource.Tuple{cpu, mem})
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if extra.HasNegative() || extra[1] != 0 {
			t.Fatalf("extra %v", extra)
		}
	})
}

// FuzzSpeculate feeds both speculators arbitrary progress reports, as a custom progress
// model might produce: they never panic, fail only with documented errors, and decide
// only what the reports allow.
func FuzzSpeculate(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{9, 0, 0, 0, 200, 7, 7, 7, 100, 4, 200, 3, 9, 9, 9, 9, 9, 9, 9, 9, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		est := &staticEstimator{
			finished: predict.RateStats{N: int(r.u8()) - 2, Mean: r.f64(), Std: r.f64()},
			nodes:    map[string]predict.RateStats{},
		}
		for i := 0; i < 3; i++ {
			if r.u8()%2 == 0 {
				est.nodes[fmt.Sprintf("n%d", i)] = predict.RateStats{N: int(r.u8() % 4), Mean: r.f64(), Std: r.f64()}
			}
		}
		for i := int(r.u8() % 12); i > 0; i-- {
			est.tasks = append(est.tasks, predict.TaskProgress{
				Task: r.id("t", 20), Node: r.id("n", 3), Progress: r.f64(), Elapsed: r.dur(), Rate: r.f64(), TimeLeft: r.dur(),
			})
		}
		job := speculate.Job{Tasks: est, Unstarted: int(r.u8()%4) - 1, Backups: map[string]bool{}}
		if r.u8()%2 == 0 {
			job.Backups[r.id("t", 20)] = true
		}
		req := speculate.Request{Node: r.id("n", 3), Now: r.dur()}
		for i := int(r.u8() % 3); i > 0; i-- {
			req.Busy = append(req.Busy, speculate.BusySlot{Task: r.id("b", 5), Node: r.id("n", 3), TimeLeft: r.dur()})
		}
		opt := speculate.WithSpeculativeCap(float64(r.u8()%10+1) / 10)
		late, _ := speculate.NewLATE(opt)
		prrl, _ := speculate.NewPRRL(opt)
		for _, s := range []speculate.Speculator{late, prrl} {
			d, err := s.Speculate(job, req)
			if err != nil {
				if !knownError(err) {
					t.Fatalf("undocumented error %v", err)
				}
				continue
			}
			switch d.Action {
			case speculate.Backup:
				found := false
				for _, tp := range est.tasks {
					found = found || tp.Task == d.Task && tp.Progress < 1 && !job.Backups[tp.Task]
				}
				if !found || job.Unstarted > 0 {
					t.Fatalf("%T backs up %q, not a candidate: %+v", s, d.Task, est.tasks)
				}
			case speculate.RunUnstarted:
				if job.Unstarted <= 0 {
					t.Fatal("run-unstarted with none")
				}
			}
		}
		if lists, err := prrl.Lists(job, req); err == nil {
			if len(lists.Resources) == 0 || lists.Resources[len(lists.Resources)-1].Task != "" {
				t.Fatalf("free resource not last: %+v", lists.Resources)
			}
		} else if !knownError(err) {
			t.Fatalf("undocumented error %v", err)
		}
	})
}

// FuzzPlace builds small, possibly malformed fair states: Place never panics, fails only
// with documented errors, and assigns only a waiting task of the job it names.
func FuzzPlace(f *testing.F) {
	f.Add([]byte{2, 1, 3, 1, 1, 2, 2, 0, 1, 5, 3, 1, 2, 9, 9})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		s := speculate.FairState{Racks: map[string]string{}}
		for i := 0; i < 4; i++ {
			if r.u8()%5 != 0 {
				s.Racks[fmt.Sprintf("n%d", i)] = fmt.Sprintf("r%d", i%2)
			}
		}
		for p := int(r.u8() % 3); p > 0; p-- {
			pool := speculate.Pool{ID: r.id("p", 3), MinShare: int(r.u8()%5) - 1, Weight: r.f64(), Order: speculate.JobOrder(r.u8() % 3)}
			for j := int(r.u8() % 3); j > 0; j-- {
				job := speculate.PoolJob{ID: r.id("j", 5), Weight: r.f64(), Priority: int(r.u8() % 3), Submitted: r.dur(), Running: int(r.u8()%4) - 1}
				for k := int(r.u8() % 3); k > 0; k-- {
					pt := speculate.PendingTask{ID: r.id("t", 8)}
					for l := int(r.u8() % 3); l > 0; l-- {
						pt.Locations = append(pt.Locations, speculate.Location{Node: r.id("n", 4), Rack: r.id("r", 2)})
					}
					job.Pending = append(job.Pending, pt)
				}
				if r.u8()%2 == 0 {
					job.TaskTime = speculate.NodeTimes{Default: r.dur(), ByNode: map[string]time.Duration{"n0": r.dur()}}
				}
				pool.Jobs = append(pool.Jobs, job)
			}
			s.Pools = append(s.Pools, pool)
		}
		for b := int(r.u8() % 4); b > 0; b-- {
			s.Busy = append(s.Busy, speculate.BusySlot{Task: r.id("b", 4), Node: r.id("n", 4), TimeLeft: r.dur()})
		}
		placer, _ := speculate.NewFairPlacer()
		p, err := placer.Place(s, r.id("n", 4))
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if p.Assigned {
			ok := false
			for _, pool := range s.Pools {
				for _, j := range pool.Jobs {
					for _, pt := range j.Pending {
						ok = ok || pool.ID == p.Pool && j.ID == p.Job && pt.ID == p.Task
					}
				}
			}
			if !ok {
				t.Fatalf("assigned %s/%s/%s, not waiting", p.Pool, p.Job, p.Task)
			}
		}
		if len(p.PreAssigned) > len(s.Busy) {
			t.Fatal("more promises than busy slots")
		}
	})
}

// FuzzPlan builds small, possibly malformed planner inputs with arbitrary amounts: Plan
// never panics, fails only with documented errors, and what it plans applies without
// taking a non-compressible dimension over capacity.
func FuzzPlan(f *testing.F) {
	f.Add([]byte{2, 1, 100, 50, 2, 1, 0, 1, 30, 10, 1, 20, 5, 0, 3, 2, 1})
	f.Add([]byte{1, 0, 255, 255, 255, 255, 255, 255, 255, 127, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		amount := func() int64 {
			if r.u8()%7 == 0 {
				return r.i64()
			}
			return int64(r.u8()) * 100
		}
		tuple := func() resource.Tuple {
			var t resource.Tuple
			t[0], t[1] = amount(), amount()
			if r.u8()%9 == 0 {
				t[7] = 1
			}
			return t
		}
		var in speculate.PlanInput
		for n := int(r.u8() % 4); n > 0; n-- {
			in.Nodes = append(in.Nodes, speculate.Node{ID: r.id("n", 4), Capacity: tuple(), Allocated: tuple()})
		}
		for k := int(r.u8() % 3); k > 0; k-- {
			in.Stragglers = append(in.Stragglers, speculate.Straggler{Task: r.id("t", 6), Node: r.id("n", 4), Allocated: tuple(), Extra: tuple()})
		}
		for k := int(r.u8() % 4); k > 0; k-- {
			in.Batch = append(in.Batch, speculate.BatchTask{Task: r.id("t", 6), Node: r.id("n", 4), Allocated: tuple(),
				Reclaimable: tuple(), Preemptible: tuple(), Priority: int(r.u8() % 3)})
		}
		for k := int(r.u8() % 2); k > 0; k-- {
			in.Shrunk = append(in.Shrunk, speculate.Shrunk{Task: r.id("t", 6), Node: r.id("n", 4), Taken: tuple(), Preempted: r.u8()%2 == 0})
		}
		in.NewDemand = tuple()
		planner, _ := speculate.NewPlanner(std)
		plan, err := planner.Plan(in)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		nodes, err := planner.Apply(in.Nodes, plan.Steps)
		if err != nil {
			t.Fatalf("plan does not apply: %v\n%+v\n%+v", err, in, plan)
		}
		for _, n := range nodes {
			if !n.Capacity.Only(std.NonCompressible()).Covers(n.Allocated.Only(std.NonCompressible())) {
				t.Fatalf("%s over capacity: %v > %v", n.ID, n.Allocated, n.Capacity)
			}
		}
	})
}
