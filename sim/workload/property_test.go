package workload_test

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 250 // each case generates whole workloads
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with p.SetSeed(seed)).
	return p
}

// small generates a small FGM workload: the properties run a thousand of them.
func small(seed uint64, total int64, opts ...workload.Option) (workload.Workload, error) {
	return workload.FGM(rng(seed), append([]workload.Option{workload.WithTotalInput(total)}, opts...)...)
}

func TestProperties(t *testing.T) {
	p := gopter.NewProperties(params())
	totals := gen.Int64Range(1, 512*workload.MiB)

	p.Property("offline FGM: total input exactly the target, held by the blocks, all at 0, valid", prop.ForAll(
		func(seed uint64, total int64) string {
			w, err := small(seed, total)
			if err != nil {
				return err.Error()
			}
			if err := w.Validate(); err != nil {
				return err.Error()
			}
			if w.TotalInput() != total {
				return fmt.Sprintf("total %d, want %d", w.TotalInput(), total)
			}
			var blocks int64
			for _, b := range w.Blocks {
				blocks += b
			}
			if blocks != total {
				return fmt.Sprintf("blocks hold %d, want %d", blocks, total)
			}
			for _, j := range w.Jobs {
				if j.Submit != 0 {
					return "offline job submitted at " + j.Submit.String()
				}
			}
			return ""
		}, gen.UInt64(), totals))

	p.Property("task inputs add up: maps = ceil(input/block) read the input, reduces = ceil(shuffle/1GiB) read the shuffle", prop.ForAll(
		func(seed uint64, total int64, block int64) string {
			w, err := small(seed, total, workload.WithBlockSize(block), workload.WithBytesPerReduce(block*4))
			if err != nil {
				return err.Error()
			}
			for _, j := range w.Jobs {
				var in, sh int64
				for _, tk := range j.Tasks {
					if tk.Kind == workload.Map {
						in += tk.InputBytes
					} else {
						sh += tk.InputBytes
					}
				}
				sj := workload.SWIMJob{InputBytes: j.InputBytes, ShuffleBytes: j.ShuffleBytes}
				if in != j.InputBytes || sh != j.ShuffleBytes ||
					j.NumTasks(workload.Map) != sj.MapTasks(block) || j.NumTasks(workload.Reduce) != sj.ReduceTasks(block*4) {
					return fmt.Sprintf("job %s: maps %d read %d of %d, reduces %d read %d of %d", j.ID,
						j.NumTasks(workload.Map), in, j.InputBytes, j.NumTasks(workload.Reduce), sh, j.ShuffleBytes)
				}
			}
			return ""
		}, gen.UInt64(), totals, gen.Int64Range(workload.MiB, workload.GiB)))

	p.Property("every task's request covers its true peak; tasks of one kind in a job declare the same", prop.ForAll(
		func(seed uint64, lo, extra, jitter float64) string {
			w, err := small(seed, workload.GiB, workload.WithOverestimate(lo, lo+extra), workload.WithJitter(jitter))
			if err != nil {
				return err.Error()
			}
			for _, j := range w.Jobs {
				var req [2]resource.Tuple
				for i, tk := range j.Tasks {
					if !tk.Request.Covers(tk.True.Peak()) {
						return fmt.Sprintf("%s: request %v below peak %v", tk.ID, tk.Request, tk.True.Peak())
					}
					if i > 0 && req[tk.Kind] != tk.Request && j.Tasks[i-1].Kind == tk.Kind {
						return fmt.Sprintf("%s: request %v differs from %v", tk.ID, tk.Request, req[tk.Kind])
					}
					req[tk.Kind] = tk.Request
				}
			}
			return ""
		}, gen.UInt64(), gen.Float64Range(1, 2), gen.Float64Range(0, 1), gen.Float64Range(0, 0.3)))

	p.Property("same seed, same workload (FGM offline and online, Thesis, FromSWIM)", prop.ForAll(
		func(seed uint64, total int64, online bool) bool {
			var opts []workload.Option
			if online {
				opts = append(opts, workload.WithOnline(time.Second))
			}
			a, errA := small(seed, total, opts...)
			b, errB := small(seed, total, opts...)
			mix := []workload.ThesisMix{{Class: workload.ThesisClass{Name: "x", Blocks: 3, TaskTime: time.Minute}, JobsPerQueue: 2}}
			ta, _ := workload.Thesis(rng(seed), mix, workload.WithJitter(0.1))
			tb, _ := workload.Thesis(rng(seed), mix, workload.WithJitter(0.1))
			jobs := []workload.SWIMJob{{ID: "a", InputBytes: total, ShuffleBytes: total / 3}, {ID: "b", InputBytes: total / 7}}
			sa, _ := workload.FromSWIM("s", jobs, rng(seed))
			sb, _ := workload.FromSWIM("s", jobs, rng(seed))
			return errA == nil && errB == nil && same(a, b) && same(ta, tb) && same(sa, sb)
		}, gen.UInt64(), gen.Int64Range(1, 64*workload.MiB), gen.Bool()))

	p.Property("online FGM: first job at 0, arrivals in order, IDs in submission order", prop.ForAll(
		func(seed uint64, total int64, gapMs int64) string {
			w, err := small(seed, total, workload.WithOnline(time.Duration(gapMs)*time.Millisecond))
			if err != nil {
				return err.Error()
			}
			if w.Jobs[0].Submit != 0 {
				return "first job at " + w.Jobs[0].Submit.String()
			}
			for i := 1; i < len(w.Jobs); i++ {
				if w.Jobs[i].Submit < w.Jobs[i-1].Submit || w.Jobs[i].ID <= w.Jobs[i-1].ID {
					return fmt.Sprintf("job %d out of order", i)
				}
			}
			return ""
		}, gen.UInt64(), totals, gen.Int64Range(1, 60000)))

	p.Property("similar tasks (same key, no jitter) have identical true profiles and requests", prop.ForAll(
		func(seed uint64) string {
			w, err := small(seed, 2*workload.GiB, workload.WithJitter(0), workload.WithOverestimate(1.3, 1.3))
			if err != nil {
				return err.Error()
			}
			seen := map[workload.SimilarityKey]workload.Task{}
			for _, j := range w.Jobs {
				for k := range j.Tasks {
					tk := j.Tasks[k]
					key := j.Key(&tk)
					if !strings.HasPrefix(key.Logic, j.App+"/") {
						return "key " + key.Logic
					}
					if prev, ok := seen[key]; ok && tk.Kind == workload.Map &&
						(!reflect.DeepEqual(prev.True.Stages(), tk.True.Stages()) || prev.Request != tk.Request) {
						return fmt.Sprintf("%s and %s share %v but differ", prev.ID, tk.ID, key)
					}
					seen[key] = tk
				}
			}
			return ""
		}, gen.UInt64()))

	p.Property("Thesis: tasks last exactly their class's time, every queue gets the same mix", prop.ForAll(
		func(seed uint64, blocks int, secs int64, jobs int) string {
			cl := workload.ThesisClass{Name: "c", Blocks: blocks, TaskTime: time.Duration(secs) * time.Second}
			w, err := workload.Thesis(rng(seed), []workload.ThesisMix{{Class: cl, JobsPerQueue: jobs}, {Class: workload.ThesisSmall, JobsPerQueue: 1}})
			if err != nil {
				return err.Error()
			}
			perQueue := map[string]int{}
			for _, j := range w.Jobs {
				perQueue[j.Queue] += len(j.Tasks)
				for _, tk := range j.Tasks {
					want := cl.TaskTime
					if j.App == "small" {
						want = workload.ThesisSmall.TaskTime
					}
					if tk.True.Duration() != want {
						return fmt.Sprintf("%s lasts %v, want %v", tk.ID, tk.True.Duration(), want)
					}
				}
			}
			for q, n := range perQueue {
				if n != jobs*blocks+workload.ThesisSmall.Blocks {
					return fmt.Sprintf("queue %s has %d tasks", q, n)
				}
			}
			return ""
		}, gen.UInt64(), gen.IntRange(1, 20), gen.Int64Range(1, 1000), gen.IntRange(1, 5)))

	p.Property("replicas: distinct nodes; 2nd in the 1st's rack, 3rd in another, when possible; 1st least loaded", prop.ForAll(
		func(racks, perRack, replicas int, sizes []int64) string {
			c, err := workload.FGMCluster(workload.WithRacks(racks), workload.WithNodesPerRack(perRack))
			if err != nil {
				return err.Error()
			}
			replicas = min(replicas, len(c.Nodes))
			got, err := workload.PlaceReplicas(&c, sizes, replicas)
			if err != nil {
				return err.Error()
			}
			again, _ := workload.PlaceReplicas(&c, sizes, replicas)
			if !reflect.DeepEqual(got, again) {
				return "not deterministic"
			}
			load := make([]int64, len(c.Nodes))
			rack := func(i int) string { return c.Nodes[i].Rack }
			for b, rs := range got {
				if len(rs) != replicas {
					return fmt.Sprintf("block %d has %d replicas", b, len(rs))
				}
				seen := map[int]bool{}
				for _, n := range rs {
					if seen[n] {
						return fmt.Sprintf("block %d: node %d twice", b, n)
					}
					seen[n] = true
				}
				for n := range load {
					if load[n] < load[rs[0]] {
						return fmt.Sprintf("block %d: first replica on node %d (load %d), node %d has %d", b, rs[0], load[rs[0]], n, load[n])
					}
				}
				if replicas >= 2 && perRack > 1 && rack(rs[1]) != rack(rs[0]) {
					return fmt.Sprintf("block %d: second replica in another rack", b)
				}
				if replicas >= 2 && perRack == 1 && racks > 1 && rack(rs[1]) == rack(rs[0]) {
					return fmt.Sprintf("block %d: second replica in the same single-node rack", b)
				}
				if replicas >= 3 && racks > 1 && rack(rs[2]) == rack(rs[0]) && (perRack > 1 || racks > 2) {
					return fmt.Sprintf("block %d: third replica in the first's rack", b)
				}
				for _, n := range rs {
					load[n] += sizes[b]
				}
			}
			return ""
		}, gen.IntRange(1, 5), gen.IntRange(1, 6), gen.IntRange(1, 4), gen.SliceOf(gen.Int64Range(0, 1000))))

	p.Property("locality follows the replicas; transfer time is bytes over the level's bandwidth", prop.ForAll(
		func(node int, replicas []int, bytes int64) string {
			c, _ := workload.ThesisCluster(workload.WithNodesPerRack(4))
			l, input := c.Locality(node, replicas)
			node1 := func(i int) bool { return i == node }
			sameRack := func(i int) bool { return i >= 0 && i < len(c.Nodes) && c.Nodes[i].Rack == c.Nodes[node].Rack }
			want := fairness.OffSwitch
			switch {
			case len(replicas) == 0:
				want = fairness.NodeLocal
			case anyOf(replicas, node1):
				want = fairness.NodeLocal
			case anyOf(replicas, sameRack):
				want = fairness.RackLocal
			}
			if l != want || input != (len(replicas) > 0) {
				return fmt.Sprintf("locality %v (input %v), want %v", l, input, want)
			}
			d := c.TransferTime(bytes, l)
			var bw int64
			switch l {
			case fairness.RackLocal:
				bw = c.IntraRackBandwidth
			case fairness.OffSwitch:
				bw = c.CrossRackBandwidth
			}
			if bw > 0 && math.Abs(d.Seconds()-float64(bytes)/float64(bw)) > 1e-9 || bw == 0 && d != 0 {
				return fmt.Sprintf("transfer %v for %d bytes at %v", d, bytes, l)
			}
			return ""
		}, gen.IntRange(0, 11), gen.SliceOfN(3, gen.IntRange(-1, 12)), gen.Int64Range(0, 1<<40)))

	p.Property("size tables: Quantile is monotone, inverts CDF, and Sample stays in [1, max]", prop.ForAll(
		func(p1, p2 float64, seed uint64, max int64, which bool) string {
			q := workload.FB2009()
			if which {
				q = workload.FB2010()
			}
			if p1 > p2 {
				p1, p2 = p2, p1
			}
			if q.Quantile(p1) > q.Quantile(p2) {
				return "not monotone"
			}
			if q.CDF(q.Quantile(p1)) < p1-1e-9 {
				return fmt.Sprintf("CDF(Quantile(%v)) = %v", p1, q.CDF(q.Quantile(p1)))
			}
			x := q.Quantile(p1)
			if back := q.Quantile(q.CDF(x)); math.Abs(back-x) > 1e-9*x {
				return fmt.Sprintf("Quantile(CDF(%v)) = %v", x, back)
			}
			s := q.Sample(rng(seed), max)
			if s < 1 || s > max {
				return fmt.Sprintf("sample %d outside [1, %d]", s, max)
			}
			return ""
		}, gen.Float64Range(0, 1), gen.Float64Range(0, 1), gen.UInt64(), gen.Int64Range(1, 1<<44), gen.Bool()))

	p.Property("Overestimate: covers the peak for factors ≥ 1, on the rounding grid, at most factor × peak + one step", prop.ForAll(
		func(cpu, mem, disk int64, factor float64, g1, g2 int64) string {
			s := workload.Schema()
			peak := s.MustTuple(cpu, mem, disk)
			round := s.MustTuple(g1, g2)
			r, err := workload.Overestimate(peak, factor, round)
			if err != nil {
				return err.Error()
			}
			if !r.Covers(peak) {
				return fmt.Sprintf("%v does not cover %v", r, peak)
			}
			for i, g := range round {
				if g > 1 && r[i]%g != 0 {
					return fmt.Sprintf("slot %d: %d not a multiple of %d", i, r[i], g)
				}
				if float64(r[i]) > float64(peak[i])*factor+float64(max(g, 1))+1 {
					return fmt.Sprintf("slot %d: %d too large", i, r[i])
				}
			}
			return ""
		}, gen.Int64Range(0, 1e6), gen.Int64Range(0, 1<<40), gen.Int64Range(0, 1<<30), gen.Float64Range(1, 5),
		gen.Int64Range(0, 1000), gen.Int64Range(0, 1<<30)))

	p.Property("SWIM: what is written in the format parses back", prop.ForAll(
		func(rows [][]int64, spaces bool, extra bool) string {
			var b strings.Builder
			sep := "\t"
			if spaces {
				sep = "  "
			}
			var want []workload.SWIMJob
			for i, r := range rows {
				r[0], r[1] = r[0]%(1<<32), r[1]%(1<<40) // within a Duration
				j := workload.SWIMJob{ID: fmt.Sprintf("job%d", i), Submit: time.Duration(r[0]) * time.Second,
					Gap: time.Duration(r[1]) * time.Millisecond, InputBytes: r[2], ShuffleBytes: r[3], OutputBytes: r[4], Line: i + 1}
				want = append(want, j)
				fmt.Fprintf(&b, "%s%s%d%s%s%s%d%s%d%s%d", j.ID, sep, r[0], sep,
					strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", float64(r[1])/1000), "0"), "."), sep, r[2], sep, r[3], sep, r[4])
				if extra {
					b.WriteString(sep + "/path/to/input")
				}
				b.WriteString("\n")
			}
			got, err := workload.ParseSWIM(strings.NewReader(b.String()), "gen")
			if len(rows) == 0 {
				if err == nil {
					return "empty input accepted"
				}
				return ""
			}
			if err != nil {
				return err.Error()
			}
			if !reflect.DeepEqual(got, want) {
				return fmt.Sprintf("got %v, want %v", got, want)
			}
			return ""
		}, gen.SliceOf(gen.SliceOfN(5, gen.Int64Range(0, 1<<50))), gen.Bool(), gen.Bool()))

	p.Property("Series.At: the value of step t/Step, repeating every Period", prop.ForAll(
		func(vals []float64, t int64, k int64) string {
			s := workload.Series{Step: workload.PlanetLabStep, Values: vals}
			at := time.Duration(t)
			if len(vals) == 0 {
				if s.At(at) != 0 {
					return "empty series not 0"
				}
				return ""
			}
			if s.At(at) != vals[int(at/s.Step)%len(vals)] || s.At(at+time.Duration(k)*s.Period()) != s.At(at) {
				return fmt.Sprintf("At(%v) = %v", at, s.At(at))
			}
			return ""
		}, gen.SliceOf(gen.Float64Range(0, 1)), gen.Int64Range(0, int64(1000*time.Hour)), gen.Int64Range(0, 100)))

	p.TestingRun(t)
}

// same reports whether two workloads are identical, field by field (what
// reflect.DeepEqual says, faster under the race detector).
func same(a, b workload.Workload) bool {
	if a.Name != b.Name || !slices.Equal(a.Blocks, b.Blocks) || len(a.Jobs) != len(b.Jobs) {
		return false
	}
	for i := range a.Jobs {
		x, y := a.Jobs[i], b.Jobs[i]
		if x.ID != y.ID || x.Queue != y.Queue || x.Submit != y.Submit || x.App != y.App || x.Logic != y.Logic ||
			x.InputBytes != y.InputBytes || x.ShuffleBytes != y.ShuffleBytes || x.OutputBytes != y.OutputBytes ||
			x.Priority != y.Priority || x.MinMember != y.MinMember || len(x.Tasks) != len(y.Tasks) {
			return false
		}
		for k := range x.Tasks {
			s, t := x.Tasks[k], y.Tasks[k]
			if s.ID != t.ID || s.Kind != t.Kind || s.InputBytes != t.InputBytes || s.Request != t.Request ||
				!slices.Equal(s.Blocks, t.Blocks) || s.True.Schema() != t.True.Schema() || !slices.Equal(s.True.Stages(), t.True.Stages()) {
				return false
			}
		}
	}
	return true
}

func anyOf(xs []int, f func(int) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}
