package predict_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// planetLabDir holds the PlanetLab CPU traces (README.md, "Data sets"): one file
// per VM, 288 integers, CPU % at five-minute intervals.
const planetLabDir = "../../shared/data/planetlab/20110303"

var (
	planetLabOnce   sync.Once
	planetLabSeries [][]predict.Sample
	planetLabErr    error
)

// planetLab loads every trace as a cpu series (1% = 10 millicores, one sample every five
// minutes from 0), skipping the test when the data is absent.
func planetLab(t testing.TB) [][]predict.Sample {
	t.Helper()
	planetLabOnce.Do(func() {
		files, err := filepath.Glob(filepath.Join(planetLabDir, "*"))
		if err != nil || len(files) == 0 {
			planetLabErr = os.ErrNotExist
			return
		}
		slices.Sort(files)
		for _, f := range files {
			s, err := readPlanetLab(f)
			if err != nil {
				planetLabErr = err
				return
			}
			planetLabSeries = append(planetLabSeries, s)
		}
	})
	if planetLabErr != nil {
		t.Skipf("PlanetLab traces not available under %s (%v); see README.md, \"Data sets\"", planetLabDir, planetLabErr)
	}
	return planetLabSeries
}

func readPlanetLab(path string) ([]predict.Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var s []predict.Sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pct, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			return nil, err
		}
		s = append(s, predict.Sample{At: time.Duration(len(s)) * 5 * time.Minute, Usage: resource.Tuple{pct * 10}})
	}
	return s, sc.Err()
}

func TestSegmentPlanetLab(t *testing.T) {
	all := planetLab(t)
	require.Greater(t, len(all), 1000)
	configs := []struct {
		name      string
		opts      []predict.SegmentOption
		maxStages int
		minStage  time.Duration
		peak      bool
	}{
		{"defaults", nil, predict.DefaultMaxStages, 0, true},
		{"hourly minimum, 12 stages", []predict.SegmentOption{predict.WithMinStage(time.Hour), predict.WithMaxStages(12)}, 12, time.Hour, true},
		{"95th percentile", []predict.SegmentOption{predict.WithPercentile(0.95), predict.WithChangeThreshold(0.1)}, predict.DefaultMaxStages, 0, false},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			sg, err := predict.NewSegmenter(c.opts...)
			require.NoError(t, err)
			stages := 0
			for i, s := range all {
				p, err := sg.Segment(std, s)
				require.NoError(t, err, "series %d", i)
				msg := checkSegmentation(s, p, 0, c.maxStages, c.minStage, c.peak)
				require.Empty(t, msg, "series %d: %v", i, p)
				require.Equal(t, 24*time.Hour, p.Duration())
				stages += p.Len()
			}
			t.Logf("%d series, %.2f stages on average", len(all), float64(stages)/float64(len(all)))
		})
	}
}

func TestSegmentPlanetLabProperties(t *testing.T) {
	all := planetLab(t)
	props := gopter.NewProperties(params())
	props.Property("real series: covered, within their samples, never understated at the peak", prop.ForAll(
		func(i, maxStages int, threshold float64, minStage time.Duration, q float64, from, to int) bool {
			s := all[i%len(all)]
			from, to = min(from, to), max(from, to)
			s = s[from%len(s) : max(to%len(s), from%len(s)+2)]
			if len(s) < 2 {
				return true
			}
			p, err := predict.Segment(std, s, predict.WithMaxStages(maxStages), predict.WithChangeThreshold(threshold),
				predict.WithMinStage(minStage), predict.WithPercentile(q))
			if err != nil {
				return false
			}
			return checkSegmentation(s, p, 0, maxStages, minStage, q == 1) == ""
		},
		gen.IntRange(0, 1<<20), gen.IntRange(1, 16), gen.Float64Range(0, 1),
		gen.Int64Range(0, int64(3*time.Hour)).Map(func(x int64) time.Duration { return time.Duration(x) }),
		gen.OneGenOf(gen.Const(1.0), gen.Float64Range(0.05, 1)),
		gen.IntRange(0, 287), gen.IntRange(0, 287),
	))
	props.TestingRun(t)
}

// TestSimilarTaskPlanetLab feeds real segmented profiles of differing stage counts to one
// key: the estimate keeps its stages and stays within what was observed.
func TestSimilarTaskPlanetLab(t *testing.T) {
	all := planetLab(t)
	e := newEst(t)
	var lo, hi resource.Tuple
	lo[0] = 1 << 62
	var first stage.Profile
	for i, s := range all[:200] {
		p, err := predict.Segment(std, s)
		require.NoError(t, err)
		if i == 0 {
			first = p
		}
		plo, phi := envelope(p)
		lo, hi = lo.Min(plo), hi.Max(phi)
		require.NoError(t, e.Observe(key, predict.Observation{Profile: p}))
	}
	est, ok := e.Estimate(key)
	require.True(t, ok)
	require.Equal(t, first.Len(), est.Len(), "the first observation fixes the stages")
	require.Equal(t, 24*time.Hour, est.Duration().Round(time.Second), "every series spans a day")
	for i := 0; i < est.Len(); i++ {
		d := est.Stage(i).Demand
		require.False(t, d.AnyLess(lo) || hi.AnyLess(d), "stage %d demand %v outside [%v, %v]", i, d, lo, hi)
	}
}
