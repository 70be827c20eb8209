package workload_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim/workload"
)

// dataDir is the shared real-data folder, relative to this package's directory.
const dataDir = "../../../shared/data"

// dataFile returns the path of a file under dataDir, skipping the test when it is absent.
func dataFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(dataDir, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real data %s not available (%v); the tests that need it are skipped", p, err)
	}
	return p
}

const (
	fb2009File = "swim/FB-2009_samples_24_times_1hr_0.tsv"
	fb2010File = "swim/FB-2010_samples_24_times_1hr_0.tsv"
)

func inputs(jobs []workload.SWIMJob) []int64 {
	s := make([]int64, len(jobs))
	for i, j := range jobs {
		s[i] = j.InputBytes
	}
	return s
}

// TestRealSWIM loads both Facebook traces, checks the facts the data README states, and
// re-fits the embedded size tables: the fit must reproduce them and stay within the KS
// distance their doc comments report.
func TestRealSWIM(t *testing.T) {
	for _, tc := range []struct {
		file       string
		jobs, zero int
		table      *workload.QuantileTable
		maxKS      float64
	}{
		{fb2009File, 5894, 86, workload.FB2009(), 0.022},
		{fb2010File, 24442, 418, workload.FB2010(), 0.019},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			jobs, err := workload.LoadSWIM(dataFile(t, tc.file))
			require.NoError(t, err)
			require.Len(t, jobs, tc.jobs)
			zero := 0
			for i, j := range jobs {
				assert.Equal(t, i+1, j.Line)
				if j.InputBytes == 0 {
					zero++
				}
			}
			assert.Equal(t, tc.zero, zero)

			sizes := inputs(jobs)
			fit, err := workload.FitQuantileTable("refit", sizes, workload.FitProbabilities())
			require.NoError(t, err)
			want := tc.table.Knots()
			for i, k := range fit.Knots() {
				assert.InEpsilon(t, want[i].Bytes, k.Bytes, 0.006, "knot %d (P=%v)", i, k.P)
			}
			ks := tc.table.KS(sizes)
			t.Logf("%s: KS distance %.4f over %d positive sizes", tc.table.Name(), ks, tc.jobs-tc.zero)
			assert.LessOrEqual(t, ks, tc.maxKS+0.0005)

			// The whole trace, scaled down a thousandfold, becomes a valid workload.
			w, err := workload.FromSWIM(filepath.Base(tc.file), jobs, rng(1), workload.WithScale(0.001))
			require.NoError(t, err)
			require.NoError(t, w.Validate())
			assert.Len(t, w.Jobs, tc.jobs)
		})
	}
}

// TestRealPlanetLab loads the whole PlanetLab day: 1,052 series of 288 five-minute values.
func TestRealPlanetLab(t *testing.T) {
	dir := dataFile(t, "planetlab/20110303")
	series, err := workload.LoadPlanetLabDir(dir)
	require.NoError(t, err)
	assert.Len(t, series, 1052)
	sum := 0.0
	for _, s := range series {
		require.Len(t, s.Values, 288, s.Name)
		for _, v := range s.Values {
			require.True(t, v >= 0 && v <= 1, "%s: %v", s.Name, v)
		}
		assert.Equal(t, 24*60*60e9, float64(s.Period()))
		sum += s.Mean()
	}
	t.Logf("mean CPU load over %d VMs: %.1f%%", len(series), 100*sum/float64(len(series)))
}
