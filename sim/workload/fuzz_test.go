package workload_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

// parseSentinel reports whether err is a *ParseError wrapping one of the parser's
// sentinels.
func parseSentinel(err error) bool {
	var pe *workload.ParseError
	return errors.As(err, &pe) && (errors.Is(err, workload.ErrSyntax) || errors.Is(err, workload.ErrInvalidValue) ||
		errors.Is(err, workload.ErrDuplicateID) || errors.Is(err, workload.ErrEmpty))
}

func secs(d time.Duration) string { return fmt.Sprintf("%d.%09d", d/time.Second, d%time.Second) }

// FuzzParseSWIM checks that the SWIM parser never panics, fails only with a
// *ParseError naming the input, returns only valid jobs that parse back the same when
// written out again, and that FromSWIM turns them into a valid workload or refuses them
// as too large.
func FuzzParseSWIM(f *testing.F) {
	f.Add("job0\t49\t49\t740773\t2339561\t627471\njob1\t101\t52\t736346\t1700537\t432269\n")
	f.Add("job0 1.5 0.25 0 0 0 extra\r\n\n# c\njob1\t2\t1\t134217729\t1073741825\t9\n")
	f.Add("job0\t1\t1\t1\t1\n")
	f.Add("a\t-1\t1\t1\t1\t1\n")
	f.Add("a\t1e3\tinf\t1\t1\t1\n")
	f.Add("a\t1\t1\t1\t1\t1\na\t1\t1\t1\t1\t1\n")
	f.Fuzz(func(t *testing.T, data string) {
		jobs, err := workload.ParseSWIM(strings.NewReader(data), "fuzz")
		if err != nil {
			if !parseSentinel(err) && !strings.Contains(err.Error(), "fuzz:") {
				t.Fatalf("unexpected error %T %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error does not name the input: %v", err)
			}
			return
		}
		var b strings.Builder
		ids := map[string]bool{}
		for i, j := range jobs {
			if j.ID == "" || ids[j.ID] || j.Submit < 0 || j.Gap < 0 || j.InputBytes < 0 || j.ShuffleBytes < 0 || j.OutputBytes < 0 ||
				(i > 0 && j.Line <= jobs[i-1].Line) {
				t.Fatalf("invalid job %+v", j)
			}
			ids[j.ID] = true
			fmt.Fprintf(&b, "%s\t%s\t%s\t%d\t%d\t%d\n", j.ID, secs(j.Submit), secs(j.Gap), j.InputBytes, j.ShuffleBytes, j.OutputBytes)
		}
		again, err := workload.ParseSWIM(strings.NewReader(b.String()), "again")
		if err != nil {
			t.Fatalf("written jobs do not parse back: %v", err)
		}
		for i := range again {
			again[i].Line = jobs[i].Line
		}
		if !reflect.DeepEqual(jobs, again) {
			t.Fatalf("round trip: %v != %v", again, jobs)
		}
		w, err := workload.FromSWIM("fuzz", jobs, rng(1), workload.WithMaxTasks(2000))
		if errors.Is(err, workload.ErrTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("FromSWIM: %v", err)
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("FromSWIM built an invalid workload: %v", err)
		}
	})
}

// FuzzParsePlanetLab checks that the PlanetLab parser never panics, fails only with a
// *ParseError naming the input, and returns fractions in [0, 1].
func FuzzParsePlanetLab(f *testing.F) {
	f.Add("24\n34\n29\n")
	f.Add("# 288 lines\n0\n100\r\n\n12.5\n")
	f.Add("-1\n")
	f.Add("101\n")
	f.Add("NaN\n")
	f.Add("1 2\n")
	f.Fuzz(func(t *testing.T, data string) {
		s, err := workload.ParsePlanetLab(strings.NewReader(data), "fuzz")
		if err != nil {
			if !parseSentinel(err) || !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("unexpected error %T %v", err, err)
			}
			return
		}
		if len(s.Values) == 0 || s.Step != workload.PlanetLabStep {
			t.Fatalf("bad series %+v", s)
		}
		for _, v := range s.Values {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("value %v outside [0, 1]", v)
			}
		}
	})
}

// FuzzNewQuantileTable checks that table validation accepts exactly the valid knots and
// that an accepted table is monotone and samples within its range.
func FuzzNewQuantileTable(f *testing.F) {
	f.Add(0.0, 1.0, 0.5, 10.0, 1.0, 100.0, uint64(1))
	f.Add(0.0, 5.0, 0.5, 5.0, 1.0, 5.0, uint64(2))
	f.Add(0.1, 1.0, 0.5, 10.0, 1.0, 100.0, uint64(3))
	f.Add(0.0, 1.0, 0.5, 0.5, 1.0, math.Inf(1), uint64(4))
	f.Add(0.0, 45.0, 0.25, 45.0, 1.0, 72.0, uint64(1)) // found by fuzzing: exp(log(45)) < 45
	f.Fuzz(func(t *testing.T, p0, b0, p1, b1, p2, b2 float64, seed uint64) {
		knots := []workload.Knot{{P: p0, Bytes: b0}, {P: p1, Bytes: b1}, {P: p2, Bytes: b2}}
		q, err := workload.NewQuantileTable("f", knots)
		ok := p0 == 0 && p2 == 1 && p0 < p1 && p1 < p2 && b0 >= 1 && b1 >= b0 && b2 >= b1 && !math.IsInf(b2, 0)
		if (err == nil) != ok {
			t.Fatalf("NewQuantileTable(%v) = %v, want ok=%v", knots, err, ok)
		}
		if err != nil {
			if !errors.Is(err, workload.ErrInvalidValue) {
				t.Fatalf("error %v does not wrap ErrInvalidValue", err)
			}
			return
		}
		prev := 0.0
		for i := 0; i <= 20; i++ {
			x := q.Quantile(float64(i) / 20)
			if x < prev || x < b0 || x > b2 {
				t.Fatalf("Quantile(%v) = %v", float64(i)/20, x)
			}
			prev = x
		}
		max := int64(math.Min(b2, 1<<62))
		if s := q.Sample(rng(seed), max); s < 1 || s > max {
			t.Fatalf("sample %d outside [1, %d]", s, max)
		}
	})
}

// FuzzFGM checks that the FGM generator, given any options, either refuses them with an
// option error, refuses a workload too large, or returns a valid workload whose total
// input is the target and whose requests cover their peaks when users over-declare.
func FuzzFGM(f *testing.F) {
	f.Add(uint64(1), int64(workload.GiB), 1.0, 1.2, 1.5, 0.05, int64(workload.DefaultBlockSize), int64(0), false)
	f.Add(uint64(2), int64(1), 0.001, 1.0, 1.0, 0.0, int64(1), int64(1), true)
	f.Add(uint64(3), int64(-5), math.NaN(), 0.5, 0.2, 2.0, int64(0), int64(-1), true)
	f.Fuzz(func(t *testing.T, seed uint64, total int64, scale, lo, hi, jitter float64, block, maxJob int64, online bool) {
		opts := []workload.Option{workload.WithTotalInput(total), workload.WithScale(scale), workload.WithOverestimate(lo, hi),
			workload.WithJitter(jitter), workload.WithBlockSize(block), workload.WithMaxTasks(3000)}
		if maxJob != 0 {
			opts = append(opts, workload.WithMaxJobInput(maxJob))
		}
		if online {
			opts = append(opts, workload.WithOnline(time.Second))
		}
		w, err := workload.FGM(rng(seed), opts...)
		if errors.Is(err, workload.ErrInvalidOption) || errors.Is(err, workload.ErrTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("invalid workload: %v", err)
		}
		target := max(1, int64(math.Round(float64(total)*scale)))
		if w.TotalInput() != target {
			t.Fatalf("total %d, want %d", w.TotalInput(), target)
		}
		for _, j := range w.Jobs {
			for _, tk := range j.Tasks {
				if lo >= 1 && !tk.Request.Covers(tk.True.Peak()) {
					t.Fatalf("%s: request below peak", tk.ID)
				}
			}
		}
	})
}

// FuzzPlaceReplicas checks cluster construction and replica placement on any shape:
// an error for bad options or counts, otherwise distinct replicas on valid nodes.
func FuzzPlaceReplicas(f *testing.F) {
	f.Add(3, 30, 3, 4, int64(1), int64(2), int64(3), int64(4), int64(5))
	f.Add(1, 1, 1, 0, int64(0), int64(0), int64(0), int64(0), int64(0))
	f.Add(0, -1, 9, 5, int64(-1), int64(0), int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, racks, perRack, replicas, n int, s0, s1, s2, s3, s4 int64) {
		if racks > 50 || perRack > 50 {
			return
		}
		c, err := workload.ThesisCluster(workload.WithRacks(racks), workload.WithNodesPerRack(perRack))
		if err != nil {
			if !errors.Is(err, workload.ErrInvalidOption) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		sizes := []int64{s0, s1, s2, s3, s4}[:max(0, min(n, 5))]
		got, err := workload.PlaceReplicas(&c, sizes, replicas)
		if err != nil {
			if !errors.Is(err, workload.ErrInvalidValue) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, rs := range got {
			seen := map[int]bool{}
			for _, i := range rs {
				if i < 0 || i >= len(c.Nodes) || seen[i] {
					t.Fatalf("bad replicas %v", rs)
				}
				seen[i] = true
			}
			if len(rs) != replicas {
				t.Fatalf("%d replicas, want %d", len(rs), replicas)
			}
		}
	})
}

// FuzzOverestimate checks that Overestimate never panics, rejects bad input with
// ErrInvalidValue, and covers the peak when the factor is at least 1.
func FuzzOverestimate(f *testing.F) {
	f.Add(int64(1000), int64(1<<30), 1.3, int64(100), int64(128<<20))
	f.Add(int64(-1), int64(0), 0.0, int64(0), int64(-1))
	f.Add(int64(math.MaxInt64), int64(1), 1e300, int64(7), int64(0))
	f.Fuzz(func(t *testing.T, cpu, mem int64, factor float64, g0, g1 int64) {
		peak := resource.Tuple{cpu, mem}
		r, err := workload.Overestimate(peak, factor, resource.Tuple{g0, g1})
		if err != nil {
			if !errors.Is(err, workload.ErrInvalidValue) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if r.HasNegative() {
			t.Fatalf("negative request %v", r)
		}
		if factor >= 1 && peak[0] < math.MaxInt64/4 && peak[1] < math.MaxInt64/4 && float64(peak[0])*factor < math.MaxInt64/4 &&
			float64(peak[1])*factor < math.MaxInt64/4 && !r.Covers(peak) {
			t.Fatalf("%v does not cover %v", r, peak)
		}
	})
}
