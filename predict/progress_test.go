package predict_test

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

const sec = time.Second

func TestProgressKnownAnswers(t *testing.T) {
	p, err := predict.MapProgress(50, 200)
	require.NoError(t, err)
	assert.Equal(t, 0.25, p, "eq. 3.1 map: M/N")

	for _, c := range []struct {
		k    int
		m, n int64
		want float64
	}{
		{0, 0, 10, 0}, {0, 5, 10, 0.5 / 3}, {1, 50, 100, 0.5}, {2, 0, 1, 2.0 / 3}, {2, 100, 100, 1},
	} {
		p, err := predict.ReduceProgress(c.k, c.m, c.n)
		require.NoError(t, err)
		assert.Equal(t, (float64(c.k)+float64(c.m)/float64(c.n))/3, p, "eq. 3.1 reduce: (K + M/N)/3")
		assert.InDelta(t, c.want, p, 1e-15)
	}

	// Hadoop's map with reducers: map 2/3, sort 1/3.
	ph, err := predict.NewPhases(2, 1)
	require.NoError(t, err)
	assert.Equal(t, 2, ph.Len())
	p, err = ph.Progress(1, 1, 2)
	require.NoError(t, err)
	assert.InDelta(t, 2.5/3, p, 1e-15)

	rate, err := predict.ProgressRate(0.5, 100*sec)
	require.NoError(t, err)
	assert.InDelta(t, 0.005, rate, 1e-18, "eq. 3.2")
	left, err := predict.TimeLeft(0.5, rate)
	require.NoError(t, err)
	assert.Equal(t, 100*sec, left, "eq. 3.4")
	left, err = predict.TimeLeft(1, 0)
	require.NoError(t, err)
	assert.Zero(t, left, "a finished task needs no time")
	left, err = predict.TimeLeft(0.3, 0)
	require.NoError(t, err)
	assert.Equal(t, stage.Forever, left, "a task that does not advance never finishes")
	left, err = predict.TimeLeft(0, 1e-300)
	require.NoError(t, err)
	assert.Equal(t, stage.Forever, left, "saturates")

	// eq. 3.3: finished rates 0.01, 0.02, 0.03: mean 0.02, std √(0.0002/3) ≈ 0.00816.
	fin := predict.RateStats{N: 3, Mean: 0.02, Std: math.Sqrt(0.0002 / 3)}
	assert.True(t, predict.IsSlowTask(0.011, fin, 1), "0.02 − 0.011 = 0.009 > 0.00816")
	assert.False(t, predict.IsSlowTask(0.012, fin, 1), "0.008 < 0.00816")
	assert.True(t, predict.IsSlowTask(0.012, fin, 0.5))
	assert.False(t, predict.IsSlowTask(0, predict.RateStats{}, 1), "nothing finished: nothing is slow")
}

func TestProgressErrors(t *testing.T) {
	_, err := predict.NewPhases()
	require.ErrorIs(t, err, predict.ErrInvalidOption)
	for _, w := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := predict.NewPhases(1, w)
		require.ErrorIs(t, err, predict.ErrInvalidOption, "weight %v", w)
	}
	_, err = predict.NewPhases(math.MaxFloat64, math.MaxFloat64)
	require.ErrorIs(t, err, predict.ErrInvalidOption, "the sum overflows")

	for _, c := range []struct {
		name    string
		k       int
		m, n    int64
		wantErr error
	}{
		{"phase below 0", -1, 0, 1, predict.ErrBadProgress},
		{"phase past the last", 3, 0, 1, predict.ErrBadProgress},
		{"zero total", 0, 0, 0, predict.ErrBadProgress},
		{"negative done", 0, -1, 1, predict.ErrBadProgress},
		{"done above total", 0, 2, 1, predict.ErrBadProgress},
	} {
		_, err := predict.ReduceProgress(c.k, c.m, c.n)
		require.ErrorIs(t, err, c.wantErr, c.name)
	}
	_, err = predict.MapProgress(1, 0)
	require.ErrorIs(t, err, predict.ErrBadProgress)

	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		_, err := predict.ProgressRate(p, sec)
		require.ErrorIs(t, err, predict.ErrBadProgress, "progress %v", p)
		_, err = predict.TimeLeft(p, 1)
		require.ErrorIs(t, err, predict.ErrBadProgress, "progress %v", p)
	}
	for _, d := range []time.Duration{0, -sec} {
		_, err := predict.ProgressRate(0.5, d)
		require.ErrorIs(t, err, predict.ErrBadDuration)
	}
	for _, r := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err := predict.TimeLeft(0.5, r)
		require.ErrorIs(t, err, predict.ErrInvalidValue, "rate %v", r)
	}
}

func TestProgressProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("progress lies in [0, 1] and grows with phase and work", prop.ForAll(func(weights []float64, nw, phase int, a, b, n int64) bool {
		ph, err := predict.NewPhases(weights[:nw]...)
		if err != nil {
			return false
		}
		phase %= ph.Len()
		a, b = min(a%(n+1), b%(n+1)), max(a%(n+1), b%(n+1))
		pa, err1 := ph.Progress(phase, a, n)
		pb, err2 := ph.Progress(phase, b, n)
		if err1 != nil || err2 != nil || pa < 0 || pb > 1 || pa > pb {
			return false
		}
		if phase+1 < ph.Len() { // the end of a phase is the start of the next
			end, _ := ph.Progress(phase, n, n)
			next, _ := ph.Progress(phase+1, 0, n)
			if math.Abs(end-next) > 1e-12 || end < pb {
				return false
			}
		}
		last, _ := ph.Progress(ph.Len()-1, n, n)
		return last == 1
	}, gen.SliceOfN(4, gen.Float64Range(0.01, 100)), gen.IntRange(1, 4),
		gen.IntRange(0, 3), gen.Int64Range(0, 1<<40), gen.Int64Range(0, 1<<40), gen.Int64Range(1, 1<<40)))
	props.Property("time left × rate is the remaining progress", prop.ForAll(func(p float64, running int64) bool {
		rate, err := predict.ProgressRate(p, time.Duration(running))
		if err != nil {
			return false
		}
		left, err := predict.TimeLeft(p, rate)
		if err != nil {
			return false
		}
		if p == 0 {
			return left == stage.Forever
		}
		return math.Abs(left.Seconds()*rate-(1-p)) <= 1e-6
	}, gen.Float64Range(0, 1), gen.Int64Range(int64(time.Second), int64(24*time.Hour))))
	props.Property("the tracker's finished statistics are the population mean and std", prop.ForAll(func(durs []int64) bool {
		tr, _ := predict.NewProgressTracker()
		var sum float64
		for i, d := range durs {
			id := fmt.Sprint(i)
			if tr.Start(id, "n", 0) != nil || tr.Finish(id, time.Duration(d)) != nil {
				return false
			}
			sum += 1 / time.Duration(d).Seconds()
		}
		st := tr.Finished()
		if st.N != len(durs) {
			return false
		}
		if len(durs) == 0 {
			return st == predict.RateStats{}
		}
		mean := sum / float64(len(durs))
		var ss float64
		for _, d := range durs {
			x := 1/time.Duration(d).Seconds() - mean
			ss += x * x
		}
		std := math.Sqrt(ss / float64(len(durs)))
		node, ok := tr.NodeRate("n")
		return ok && node == st && math.Abs(st.Mean-mean) <= 1e-9*mean && math.Abs(st.Std-std) <= 1e-9*mean
	}, gen.SliceOf(gen.Int64Range(int64(time.Second), int64(time.Hour)))))
	props.TestingRun(t)
}

// The tracker indexes the tasks started lazily (a task that starts and ends between two
// reads never joins its ordered index), so Running is checked against a plain set, read
// every few steps or seldom enough that the batch in which it indexes fills up.
func TestProgressTrackerRunningProperty(t *testing.T) {
	p := params()
	p.MinSuccessfulTests = 200
	props := gopter.NewProperties(p)
	props.Property("Running lists exactly the running tasks, in ID order", prop.ForAll(func(ops []int, every int) bool {
		tr, _ := predict.NewProgressTracker()
		running := map[string]bool{}
		read := func(at time.Duration) bool {
			want := slices.Sorted(maps.Keys(running))
			var got []string
			for _, p := range tr.Running(at, nil) {
				got = append(got, p.Task)
			}
			return slices.Equal(got, want) && tr.Len() == len(want)
		}
		for step, op := range ops {
			id := fmt.Sprintf("t%03d", op%700)
			at := time.Duration(step+1) * sec
			var err error
			switch {
			case running[id] && op%2 == 0:
				err = tr.Abandon(id)
				delete(running, id)
			case running[id]:
				err = tr.Finish(id, at+sec)
				delete(running, id)
			default:
				err = tr.Start(id, "n", at)
				running[id] = true
			}
			if err != nil || (step%every == 0 && !read(at)) {
				return false
			}
		}
		return read(time.Duration(len(ops)+1) * sec)
	}, gen.SliceOfN(1000, gen.IntRange(0, 1<<20)), gen.IntRange(1, 800)))
	props.TestingRun(t)
}

func TestProgressTracker(t *testing.T) {
	tr, err := predict.NewProgressTracker()
	require.NoError(t, err)
	var _ predict.RuntimeEstimator = tr
	var _ predict.ProgressObserver = tr

	require.NoError(t, tr.Start("t1", "A", 0))
	require.NoError(t, tr.Start("t2", "B", 0))
	require.NoError(t, tr.Start("t3", "A", 0))
	require.NoError(t, tr.Start("t4", "B", 10*sec))
	assert.Equal(t, 4, tr.Len())
	_, ok := tr.NodeRate("A")
	assert.False(t, ok, "nothing finished on A yet")

	require.NoError(t, tr.Update("t1", 0.5, 50*sec))
	require.NoError(t, tr.Finish("t1", 100*sec)) // rate 0.01
	require.NoError(t, tr.Finish("t3", 50*sec))  // rate 0.02
	a, ok := tr.NodeRate("A")
	require.True(t, ok)
	assert.Equal(t, 2, a.N)
	assert.InDelta(t, 0.015, a.Mean, 1e-15)
	assert.InDelta(t, 0.005, a.Std, 1e-15)
	assert.Equal(t, a, tr.Finished())

	require.NoError(t, tr.Update("t2", 0.3, 60*sec))
	v, ok := tr.Task("t2", 100*sec)
	require.True(t, ok)
	assert.Equal(t, "B", v.Node)
	assert.Equal(t, 60*sec, v.Updated)
	assert.Equal(t, 100*sec, v.Elapsed)
	assert.InDelta(t, 0.003, v.Rate, 1e-15, "eq. 3.2: 0.3 over 100 s")
	assert.InDelta(t, (700 * sec / 3).Seconds(), v.TimeLeft.Seconds(), 1e-6, "eq. 3.4: 0.7/0.003")
	assert.True(t, v.Slow, "eq. 3.3: 0.015 − 0.003 > 0.005")

	// A report later than now counts from the report.
	v, _ = tr.Task("t2", 30*sec)
	assert.Equal(t, 60*sec, v.Elapsed)

	run := tr.Running(100*sec, nil)
	require.Len(t, run, 2)
	assert.Equal(t, "t2", run[0].Task)
	assert.Equal(t, "t4", run[1].Task)
	assert.Zero(t, run[1].Rate, "no progress yet")
	assert.Equal(t, stage.Forever, run[1].TimeLeft)
	assert.True(t, run[1].Slow)

	nodes := tr.Nodes(nil)
	require.Len(t, nodes, 1)
	assert.Equal(t, "A", nodes[0].Node)

	require.NoError(t, tr.Abandon("t4"))
	_, ok = tr.Task("t4", 0)
	assert.False(t, ok)
	assert.Equal(t, 2, tr.Finished().N, "an abandoned task is not finished")

	// A task ID can be reused once the first attempt is gone.
	require.NoError(t, tr.Start("t4", "A", 200*sec))

	// A generous threshold: nothing is slow.
	lax, err := predict.NewProgressTracker(predict.WithSlowTaskThreshold(10))
	require.NoError(t, err)
	require.NoError(t, lax.Start("x", "A", 0))
	require.NoError(t, lax.Finish("x", 10*sec))
	require.NoError(t, lax.Start("y", "A", 0))
	v, _ = lax.Task("y", 5*sec)
	assert.True(t, v.Slow, "std 0: any task slower than the mean is slow")
	require.NoError(t, lax.Start("z", "B", 0))
	require.NoError(t, lax.Finish("z", 30*sec))
	v, _ = lax.Task("y", 5*sec)
	assert.False(t, v.Slow)
}

func TestProgressTrackerErrors(t *testing.T) {
	fresh := func(t *testing.T) *predict.ProgressTracker {
		tr, err := predict.NewProgressTracker()
		require.NoError(t, err)
		require.NoError(t, tr.Start("t", "n", 10*sec))
		require.NoError(t, tr.Update("t", 0.5, 20*sec))
		return tr
	}
	tests := []struct {
		name string
		call func(*predict.ProgressTracker) error
		want error
	}{
		{"start empty ID", func(tr *predict.ProgressTracker) error { return tr.Start("", "n", 0) }, predict.ErrEmptyID},
		{"start empty node", func(tr *predict.ProgressTracker) error { return tr.Start("u", "", 0) }, predict.ErrEmptyID},
		{"start twice", func(tr *predict.ProgressTracker) error { return tr.Start("t", "n", 0) }, predict.ErrDuplicateTask},
		{"update unknown", func(tr *predict.ProgressTracker) error { return tr.Update("u", 0.5, 30*sec) }, predict.ErrUnknownTask},
		{"update above 1", func(tr *predict.ProgressTracker) error { return tr.Update("t", 1.5, 30*sec) }, predict.ErrBadProgress},
		{"update NaN", func(tr *predict.ProgressTracker) error { return tr.Update("t", math.NaN(), 30*sec) }, predict.ErrBadProgress},
		{"update negative", func(tr *predict.ProgressTracker) error { return tr.Update("t", -0.1, 30*sec) }, predict.ErrBadProgress},
		{"progress falls", func(tr *predict.ProgressTracker) error { return tr.Update("t", 0.4, 30*sec) }, predict.ErrBadProgress},
		{"update in the past", func(tr *predict.ProgressTracker) error { return tr.Update("t", 0.6, 15*sec) }, predict.ErrBadTime},
		{"finish unknown", func(tr *predict.ProgressTracker) error { return tr.Finish("u", 30*sec) }, predict.ErrUnknownTask},
		{"finish at start", func(tr *predict.ProgressTracker) error { return tr.Finish("t", 10*sec) }, predict.ErrBadDuration},
		{"finish before the last report", func(tr *predict.ProgressTracker) error { return tr.Finish("t", 15*sec) }, predict.ErrBadTime},
		{"abandon unknown", func(tr *predict.ProgressTracker) error { return tr.Abandon("u") }, predict.ErrUnknownTask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := fresh(t)
			err := tt.call(tr)
			require.ErrorIs(t, err, tt.want)
			assert.NotEmpty(t, err.Error())
			v, ok := tr.Task("t", 30*sec)
			require.True(t, ok, "a rejected call changes nothing")
			assert.Equal(t, 0.5, v.Progress)
			assert.Equal(t, 20*sec, v.Updated)
			assert.Equal(t, 1, tr.Len())
			assert.Zero(t, tr.Finished().N)
		})
	}
	for _, x := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err := predict.NewProgressTracker(predict.WithSlowTaskThreshold(x))
		require.ErrorIs(t, err, predict.ErrInvalidOption)
	}
}

// TestProgressTrackerConcurrent feeds and reads a tracker from several goroutines; run
// with -race.
func TestProgressTrackerConcurrent(t *testing.T) {
	tr, err := predict.NewProgressTracker()
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var buf []predict.TaskProgress
			for i := 0; i < 200; i++ {
				id := fmt.Sprintf("g%d-%d", g, i)
				at := time.Duration(i) * sec
				assert.NoError(t, tr.Start(id, fmt.Sprint("node", i%3), at))
				assert.NoError(t, tr.Update(id, 0.5, at+sec))
				if i%2 == 0 {
					assert.NoError(t, tr.Finish(id, at+2*sec))
				}
				buf = tr.Running(at, buf[:0])
				_ = tr.Finished()
			}
		}(g)
	}
	wg.Wait()
	assert.Equal(t, 400, tr.Finished().N)
	assert.Equal(t, 400, tr.Len())
}
