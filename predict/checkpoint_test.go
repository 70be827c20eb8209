package predict_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// The golden checkpoint's estimator: cpu and memory, histories of 2 observations of 4
// buckets, families learned.
var (
	cpuMem     = resource.MustSchema(resource.CPU, resource.Memory)
	goldenOpts = []predict.EstimatorOption{predict.WithHistory(2, 4)}
	goldenPath = "testdata/checkpoint-v1.json"
	// The golden state's keys: etl/map (family etl) observed twice, etl/reduce known
	// from a running task's report, and a key whose Logic is not UTF-8.
	etlMap    = predict.Key{Logic: "etl/map", InputSize: 100, Family: "etl"}
	etlReduce = predict.Key{Logic: "etl/reduce", InputSize: 100}
	rawLogic  = predict.Key{Logic: "\xff\xfe", InputSize: 7}
)

// cm builds a profile of cpuMem from (duration, cpu millicores, memory bytes) triples.
func cm(t testing.TB, st ...[3]int64) stage.Profile {
	t.Helper()
	stages := make([]stage.Stage, len(st))
	for i, s := range st {
		stages[i] = stage.Stage{Duration: time.Duration(s[0]), Demand: cpuMem.MustTuple(s[1], s[2])}
	}
	p, err := stage.NewProfile(cpuMem, stages...)
	require.NoError(t, err)
	return p
}

// goldenEstimator learns the golden checkpoint's state from observations.
func goldenEstimator(t testing.TB, opts ...predict.EstimatorOption) *predict.SimilarTask {
	t.Helper()
	e, err := predict.NewSimilarTask(cpuMem, append(slices.Clone(goldenOpts), opts...)...)
	require.NoError(t, err)
	s := int64(time.Second)
	require.NoError(t, e.Observe(etlMap, predict.Observation{Profile: cm(t, [3]int64{10 * s, 1000, 100})}))
	require.NoError(t, e.Observe(etlMap, predict.Observation{Profile: cm(t, [3]int64{20 * s, 2000, 50}), Compression: []resource.Vector{{0.5}}}))
	require.NoError(t, e.ObserveRunning(etlReduce, predict.Observation{Profile: cm(t, [3]int64{20 * s, 2000, 50})}))
	require.NoError(t, e.Observe(rawLogic, predict.Observation{Profile: cm(t, [3]int64{1 * s, 1000, 100}, [3]int64{3 * s, 10, 200})}))
	_, ok := e.Estimate(etlMap) // etl/map used last
	require.True(t, ok)
	return e
}

func checkpoint(t testing.TB, e *predict.SimilarTask) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, e.Checkpoint(&b))
	return b.Bytes()
}

func golden(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	return b
}

// A version 1 checkpoint committed in testdata reads back to the estimates worked out
// by hand, evicts in its recorded use order, and is what Checkpoint writes, byte for
// byte, both for the restored state and for the same state learned afresh.
func TestCheckpointGolden(t *testing.T) {
	want := golden(t)
	e, err := predict.NewSimilarTask(cpuMem, goldenOpts...)
	require.NoError(t, err)
	require.NoError(t, e.Restore(bytes.NewReader(want)))
	assert.Equal(t, string(want), string(checkpoint(t, e)), "Checkpoint of the restored state")
	assert.Equal(t, string(want), string(checkpoint(t, goldenEstimator(t))), "Checkpoint of the state learned afresh")

	s := int64(time.Second)
	forever := int64(stage.Forever)
	for _, c := range []struct {
		name string
		key  predict.Key
		want stage.Profile // zero: unpredictable
	}{
		// w' = 0.3 × (1 − 0.5) = 0.15 for the compressed second run: 0.85 × 10 s +
		// 0.15 × 20 s = 11.5 s, 0.85 × 1000 + 0.15 × 2000 = 1150 millicores; memory
		// 0.85 × 100 + 0.15 × 50 = 92.5, raised to the history's peak in the stage, 100.
		{"two runs, the second compressed", etlMap, cm(t, [3]int64{11500 * s / 1000, 1150, 100})},
		// The family etl's class [64, 128) learned the same runs.
		{"a new logic of the family, same class", predict.Key{Logic: "etl/other", InputSize: 120, Family: "etl"}, cm(t, [3]int64{11500 * s / 1000, 1150, 100})},
		// Class [128, 256) is unknown; the nearest class, 64, is within the default
		// factor 2, its durations scaled by 128/64.
		{"the next class up, scaled", predict.Key{Logic: "etl/other", InputSize: 200, Family: "etl"}, cm(t, [3]int64{23 * s, 1150, 100})},
		// The running task's 20 s so far, then its peak until it ends.
		{"a running task's report", etlReduce, cm(t, [3]int64{20 * s, 2000, 50}, [3]int64{forever, 2000, 50})},
		{"a Logic that is not UTF-8", rawLogic, cm(t, [3]int64{1 * s, 1000, 100}, [3]int64{3 * s, 10, 200})},
		{"another size", predict.Key{Logic: "etl/map", InputSize: 99}, stage.Profile{}},
	} {
		got, ok := e.Estimate(c.key)
		assert.Equal(t, c.want.Len() > 0, ok, c.name)
		assert.Equal(t, c.want.Stages(), got.Stages(), c.name)
	}
	assert.Equal(t, 2, e.Observations(etlMap))
	assert.Equal(t, 0, e.Observations(etlReduce))
	assert.Equal(t, 1, e.Observations(rawLogic))

	// The recorded use order (etl/reduce, then the raw key, then etl/map): a fourth
	// key under a cap of three evicts etl/reduce, then the raw key.
	e, err = predict.NewSimilarTask(cpuMem, append(slices.Clone(goldenOpts), predict.WithMaxKeys(3))...)
	require.NoError(t, err)
	require.NoError(t, e.Restore(bytes.NewReader(want)))
	one := predict.Observation{Profile: cm(t, [3]int64{s, 1, 1})}
	require.NoError(t, e.Observe(predict.Key{Logic: "new", InputSize: 1}, one))
	_, ok := e.Estimate(etlReduce)
	assert.False(t, ok, "etl/reduce, the least recently used, evicted")
	require.NoError(t, e.Observe(predict.Key{Logic: "new", InputSize: 2}, one))
	assert.Zero(t, e.Observations(rawLogic), "the raw key evicted next")
	assert.Equal(t, 2, e.Observations(etlMap))
}

// What a refused Restore must leave: the same checkpoint, the same estimates.
type estimatorState struct {
	bytes     string
	estimates []string
}

// stateOf is e's checkpoint and its estimates for keys (which counts as their use, as
// for the estimator compared with).
func stateOf(t testing.TB, e *predict.SimilarTask, keys []predict.Key) estimatorState {
	var st estimatorState
	for _, k := range keys {
		p, ok := e.Estimate(k)
		st.estimates = append(st.estimates, fmt.Sprintf("%v %v", p, ok))
	}
	// After the estimates, which used the keys in the same order each time.
	st.bytes = string(checkpoint(t, e))
	return st
}

// Restore refuses what it cannot hold, with ErrCheckpoint (and a sentinel saying more
// where there is one) and a message naming the member and the fault, and the
// estimator it refused keeps its state exactly.
func TestCheckpointRefusals(t *testing.T) {
	good := string(golden(t))
	s := int64(time.Second)
	// edit returns the golden checkpoint with old replaced by new, once; old must be
	// in it, so that no case passes by editing nothing.
	edit := func(pairs ...string) string {
		out := good
		for i := 0; i+1 < len(pairs); i += 2 {
			require.Contains(t, out, pairs[i], "the golden checkpoint holds %q", pairs[i])
			out = strings.Replace(out, pairs[i], pairs[i+1], 1)
		}
		return out
	}
	mapEntry := good[strings.Index(good, `{"logic":"etl/map"`):]
	mapEntry = strings.TrimSuffix(mapEntry[:strings.Index(mapEntry, "\n")], ",")
	tests := []struct {
		name   string
		input  string
		opts   []predict.EstimatorOption // beside goldenOpts
		schema *resource.Schema          // the estimator's; nil: cpuMem
		also   error                     // a sentinel wrapped beside ErrCheckpoint
		msg    string                    // in the message
	}{
		{name: "empty input", input: "", msg: "empty input"},
		{name: "truncated", input: good[:len(good)/2], msg: "truncated"},
		{name: "cut after the document's first line", input: good[:strings.Index(good, "\n")], msg: "truncated"},
		{name: "not JSON", input: "format: finegrain\n", msg: "malformed JSON at byte 2: invalid character"},
		{name: "a JSON array", input: "[]", msg: "the document, at byte 1, is a JSON array where the format has an object"},
		{name: "trailing data", input: good + "{}", msg: "trailing data after the document"},
		{name: "a member the format does not define", input: edit(`"version":1,`, `"version":1,"compressed":true,`), msg: `unknown member "compressed" of a version 1 document`},
		{name: "a member of an entry the format does not define", input: edit(`"recency":3,`, `"recency":3,"weight":1,`), msg: `keys[0]: unknown field "weight"`},
		{name: "a member twice", input: edit(`"version":1,`, `"version":1,"version":1,`), msg: `member "version" twice`},
		{name: "keys not a list", input: edit(`"keys":[`, `"keys":{"a":[`), msg: "keys, at byte 343, is a JSON object where the format has an array"},
		{name: "another format", input: edit(`finegrain/predict.SimilarTask`, `finegrain/predict.Other`), msg: "checkpoint format = finegrain/predict.Other: invalid checkpoint: not a checkpoint of finegrain/predict.SimilarTask"},
		{name: "a later version", input: edit(`"version":1,`, `"version":2,"parts":[],`), msg: "checkpoint version = 2: invalid checkpoint: this package reads version 1 only"},
		{name: "no version", input: edit(`"version":1,`, ``), msg: `checkpoint version = "": invalid checkpoint: missing`},
		{name: "a version that is not an integer", input: edit(`"version":1,`, `"version":"1",`), msg: "checkpoint version = \"1\""},
		{name: "another dimension", input: edit(`"name":"memory"`, `"name":"disk"`), also: resource.ErrSchemaMismatch, msg: `schema = cpu disk: invalid checkpoint: schema mismatch: dimension 1 is "disk"; this estimator's is "memory"`},
		{name: "another unit", input: edit(`"unit":"byte"`, `"unit":"KiB"`), also: resource.ErrSchemaMismatch, msg: `dimension "memory" counts "KiB"; this estimator's counts "byte"`},
		{name: "another compressibility", input: edit(`"compressible":true`, `"compressible":false`), also: resource.ErrSchemaMismatch, msg: `dimension "cpu" is not compressible; this estimator's is compressible`},
		{name: "another text scale", input: edit(`"baseUnitsPerQuantity":1000`, `"baseUnitsPerQuantity":1`), also: resource.ErrSchemaMismatch, msg: `dimension "cpu" has 1 base units per quantity; this estimator's 1000`},
		{name: "fewer dimensions", input: good, schema: std, also: resource.ErrSchemaMismatch, msg: "checkpoint schema = cpu memory: invalid checkpoint: schema mismatch: 2 dimension(s); this estimator's schema cpu[millicore,c] memory[byte] disk-io[byte/s,c] net-io[byte/s,c] disk[byte] gpu[device] has 6"},
		{name: "another history", input: good, opts: []predict.EstimatorOption{predict.WithHistory(8, 32)}, msg: "options.history = WithHistory(2, 4): invalid checkpoint: made with a history of 2 observations of 4 buckets; this estimator keeps WithHistory(8, 32)"},
		{name: "no history here", input: good, opts: []predict.EstimatorOption{predict.WithHistory(0, 4)}, msg: "this estimator keeps none (WithHistory(0, …))"},
		{name: "size buckets", input: good, opts: []predict.EstimatorOption{predict.WithSizeBuckets(mustBuckets(t, 2))}, msg: "options.sizeBuckets = false: invalid checkpoint: made without WithSizeBuckets; this estimator learns size buckets (WithSizeBuckets)"},
		{name: "family learning off here", input: good, opts: []predict.EstimatorOption{predict.WithFamily(0)}, msg: "options.family = true: invalid checkpoint: made with family learning on (WithFamily); this estimator has it off"},
		{name: "families without family learning", input: edit(`"family":true`, `"family":false`), opts: []predict.EstimatorOption{predict.WithFamily(0)}, msg: "checkpoint families = 1 classes: invalid checkpoint: families without family learning"},
		{name: "more keys than the cap", input: good, opts: []predict.EstimatorOption{predict.WithMaxKeys(2)}, msg: "checkpoint keys = 3 keys: invalid checkpoint: more than this estimator's WithMaxKeys(2)"},
		{name: "a class not a family bucket's", input: edit(`{"logic":"etl","size":64`, `{"logic":"etl","size":100`), msg: "families[0].size = 100: invalid checkpoint: not a canonical size under this estimator's WithFamilyBuckets (it maps to 64)"},
		{name: "a size not a size bucket's", input: edit(`"sizeBuckets":false`, `"sizeBuckets":true`), opts: []predict.EstimatorOption{predict.WithSizeBuckets(mustBuckets(t, 2))}, msg: "keys[0].size = 100: invalid checkpoint: not a canonical size under this estimator's WithSizeBuckets (it maps to 64)"},
		{name: "an empty logic", input: edit(`"logic":"etl/map"`, `"logic":""`), also: predict.ErrInvalidKey, msg: `keys[0].logic = "": invalid checkpoint: invalid similarity key: empty`},
		{name: "both logic and logicBytes", input: edit(`"logic":"etl/map"`, `"logic":"etl/map","logicBytes":"//4="`), msg: "keys[0] = etl/map: invalid checkpoint: both logic and logicBytes"},
		{name: "a negative size", input: edit(`"logic":"etl/map","size":100`, `"logic":"etl/map","size":-100`), also: predict.ErrInvalidKey, msg: "keys[0].size = -100"},
		{name: "duplicate keys", input: edit(`{"logic":"etl/reduce"`, strings.Replace(mapEntry, `"recency":3`, `"recency":4`, 1)+",\n"+`{"logic":"etl/reduce"`), msg: `keys[1] = "etl/map" size 100: invalid checkpoint: the same key as keys[0]`},
		{name: "a recency out of range", input: edit(`"recency":3`, `"recency":4`), msg: "keys[0].recency = 4: invalid checkpoint: ranks run from 1 to the number of entries, 3"},
		{name: "a recency repeated", input: edit(`"recency":3`, `"recency":1`), msg: "keys[1].recency = 1: invalid checkpoint: the same rank as another entry"},
		{name: "negative observations", input: edit(`"recency":3,"observations":2`, `"recency":3,"observations":-2`), msg: "keys[0].observations = -2"},
		{name: "absurd observations", input: edit(`"recency":3,"observations":2`, `"recency":3,"observations":1000000000000`), msg: "keys[0].observations = 1000000000000: invalid checkpoint: out of [0, 2147483647]"},
		{name: "no stages", input: edit(`"estimate":[{"duration":11500000000,"demand":[1150,100]}]`, `"estimate":[]`), also: predict.ErrStageCount, msg: "keys[0].estimate = 0 stages"},
		{name: "a negative amount", input: edit(`"demand":[1150,100]`, `"demand":[1150,-100]`), also: resource.ErrNegative, msg: "keys[0].estimate[0].demand[1] = -100: invalid checkpoint: negative amount: a negative memory"},
		{name: "a negative duration", input: edit(`"duration":11500000000`, `"duration":-11500000000`), also: predict.ErrBadDuration, msg: "keys[0].estimate[0].duration = -11500000000"},
		{name: "a zero duration", input: edit(`"duration":11500000000`, `"duration":0`), also: predict.ErrBadDuration, msg: "keys[0].estimate[0].duration = 0"},
		{name: "an amount beyond int64", input: edit(`"demand":[1150,100]`, `"demand":[1150,9223372036854775808]`), msg: "keys[0].estimate.demand, at byte 473, is a JSON number 9223372036854775808 where the format has an integer"},
		{name: "a fraction of a nanosecond", input: edit(`"duration":11500000000`, `"duration":11500000000.5`), msg: "is a JSON number 11500000000.5 where the format has an integer"},
		{name: "an amount per dimension", input: edit(`"demand":[1150,100]`, `"demand":[1150,100,7]`), msg: "keys[0].estimate[0].demand = 3 amounts: invalid checkpoint: one amount per dimension of the schema, 2"},
		{name: "a NaN", input: edit(`"durations":[11500000000]`, `"durations":[NaN]`), msg: "malformed JSON"},
		{name: "an infinite duration", input: edit(`"durations":[11500000000]`, `"durations":[1e999]`), msg: "keys[0].learned.durations, at byte 490, is a JSON number 1e999, beyond the range of a float64"},
		{name: "a negative learned duration", input: edit(`"durations":[11500000000]`, `"durations":[-1]`), also: predict.ErrInvalidValue, msg: "keys[0].learned.durations[0] = -1: invalid checkpoint: invalid value: a duration is finite, not negative and within the int64 range"},
		{name: "a learned amount beyond int64", input: edit(`"demands":[[1150,92.5]]`, `"demands":[[1150,1e19]]`), also: predict.ErrInvalidValue, msg: "keys[0].learned.demands[0][1] = 1e+19"},
		{name: "stage counts that disagree", input: edit(`"durations":[11500000000]`, `"durations":[11500000000,1]`), also: predict.ErrStageCount, msg: "keys[0].learned = 2 durations and 1 demands: invalid checkpoint: stage count mismatch: the estimate has 1 stages"},
		{name: "an observed key without its learned state", input: edit(`,"learned":{"durations":[11500000000],"demands":[[1150,92.5]]}`, ``), msg: "keys[0].learned = none"},
		{name: "an observed key with a running report", input: edit(`"recency":3,"observations":2,`, `"recency":3,"observations":2,"runningSpan":5,`), msg: "keys[0].runningSpan = 5: invalid checkpoint: a running task's report on a key observed 2 time(s)"},
		{name: "a history too short", input: edit(`"history":[{"stages":1,"compression":0,"buckets":[{"count":4,"peak":[1000,100]}]},`, `"history":[`), msg: "keys[0].history = 1 observations: invalid checkpoint: a key observed 2 time(s) holds the last 2 under WithHistory(2, 4)"},
		{name: "a history with buckets missing", input: edit(`{"count":4,"peak":[1000,100]}`, `{"count":3,"peak":[1000,100]}`), msg: "keys[0].history[0].buckets = 3 buckets: invalid checkpoint: an observation covers all 4 buckets"},
		{name: "a history with buckets too many", input: edit(`{"count":4,"peak":[1000,100]}`, `{"count":4,"peak":[1000,100]},{"count":1,"peak":[1,1]}`), msg: "keys[0].history[0].buckets[1].count = 1: invalid checkpoint: a run covers 1 to the 0 bucket(s) left of 4"},
		{name: "an absurd run", input: edit(`{"count":4,"peak":[1000,100]}`, `{"count":4000000000000000000,"peak":[1000,100]}`), msg: "keys[0].history[0].buckets[0].count = 4000000000000000000"},
		{name: "a history's negative peak", input: edit(`"peak":[2000,50]`, `"peak":[2000,-50]`), also: resource.ErrNegative, msg: "keys[0].history[1].buckets[0].peak[1] = -50"},
		{name: "a compression above 1", input: edit(`"compression":0.5}`, `"compression":1.5}`), also: resource.ErrInvalidRatio, msg: "keys[0].history[1].buckets[0].compression = 1.5"},
		{name: "an observation's compression above 1", input: edit(`"stages":1,"compression":0.5`, `"stages":1,"compression":2`), also: resource.ErrInvalidRatio, msg: "keys[0].history[1].compression = 2"},
		{name: "an observation of no stages", input: edit(`"stages":1,"compression":0.5`, `"stages":0,"compression":0.5`), also: predict.ErrStageCount, msg: "keys[0].history[1].stages = 0"},
		{name: "a re-division without history", input: edit(`"history":2,"historyBuckets":4`, `"history":0,"historyBuckets":0`), opts: []predict.EstimatorOption{predict.WithHistory(0, 4)}, msg: "keys[0].history = 2 observations: invalid checkpoint: a history without WithHistory"},
		{name: "a running report not open-ended", input: edit(`{"duration":9223372036854775807,"demand":[2000,50]}`, `{"duration":9223372036854775806,"demand":[2000,50]}`), msg: "keys[1].estimate = [20s {cpu=2,memory=50}, 2562047h47m16.854775806s {cpu=2,memory=50}]: invalid checkpoint: a running task's estimate ends with an open-ended stage"},
		{name: "a running report above its peak", input: edit(`"estimate":[{"duration":20000000000,"demand":[2000,50]}`, `"estimate":[{"duration":20000000000,"demand":[2000,51]}`), msg: "keys[1].estimate[0].demand = cpu=2,memory=51: invalid checkpoint: above the open-ended stage's cpu=2,memory=50, which holds the peak"},
		{name: "a running report's span too short", input: edit(`"runningSpan":20000000000`, `"runningSpan":19999999999`), msg: "keys[1].runningSpan = 19999999999: invalid checkpoint: shorter than the stages it ran, 20000000000 ns"},
		{name: "a running report without its span", input: edit(`"runningSpan":20000000000,`, ``), also: predict.ErrBadDuration, msg: "keys[1].runningSpan = 0"},
		{name: "a running report with a history", input: edit(`"runningSpan":20000000000,`, `"runningSpan":20000000000,"redivide":true,`), msg: "keys[1].learned = present"},
		{name: "a family's running report", input: edit(`{"logic":"etl","size":64,"recency":1,"observations":2,`, `{"logic":"etl","size":64,"recency":1,"observations":0,`), msg: "families[0].observations = 0: invalid checkpoint: a family's size class learns from finished tasks only"},
		{name: "logicBytes not base64", input: edit(`"logicBytes":"//4="`, `"logicBytes":"%%"`), msg: "illegal base64 data"},
	}
	keys := []predict.Key{etlMap, etlReduce, rawLogic, {Logic: "etl/other", InputSize: 120, Family: "etl"},
		{Logic: "victim", InputSize: 1}, {Logic: "victim", InputSize: 2, Family: "v"}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			schema := cpuMem
			if tc.schema != nil {
				schema = tc.schema
			}
			e, err := predict.NewSimilarTask(schema, append(slices.Clone(goldenOpts), tc.opts...)...)
			require.NoError(t, err)
			// A state of its own, in part under the checkpoint's keys: a refusal that
			// changed anything would show.
			obs := stage.MustProfile(schema, stage.Stage{Duration: 3 * time.Second, Demand: resource.Tuple{700, 70}})
			for _, k := range []predict.Key{etlMap, {Logic: "victim", InputSize: 1}, {Logic: "victim", InputSize: 2, Family: "v"}} {
				require.NoError(t, e.Observe(k, predict.Observation{Profile: obs}))
			}
			require.NoError(t, e.ObserveRunning(etlReduce, predict.Observation{Profile: stage.MustProfile(schema, stage.Stage{Duration: time.Duration(12 * s), Demand: resource.Tuple{5, 5}})}))
			before := stateOf(t, e, keys)

			err = e.Restore(strings.NewReader(tc.input))
			require.Error(t, err)
			assert.ErrorIs(t, err, predict.ErrCheckpoint)
			if tc.also != nil {
				assert.ErrorIs(t, err, tc.also)
			}
			assert.Contains(t, err.Error(), tc.msg)
			assert.Equal(t, before, stateOf(t, e, keys), "the refused Restore changed the estimator")
		})
	}
}

// Restore reads what a reader gives to its end, refusing a reader's error and a nil
// reader or writer.
func TestCheckpointReaderErrors(t *testing.T) {
	e := goldenEstimator(t)
	before := checkpoint(t, e)
	broken := errors.New("connection reset")
	err := e.Restore(&failingReader{data: before[:100], err: broken})
	assert.ErrorIs(t, err, predict.ErrCheckpoint)
	assert.ErrorIs(t, err, broken)
	assert.ErrorIs(t, e.Restore(nil), predict.ErrInvalidValue)
	assert.ErrorIs(t, e.Checkpoint(nil), predict.ErrInvalidValue)
	assert.ErrorIs(t, e.Checkpoint(failingWriter{broken}), broken)
	assert.Equal(t, before, checkpoint(t, e))
	// Restore reads to the end, whatever the reader's chunks.
	f, err := predict.NewSimilarTask(cpuMem, goldenOpts...)
	require.NoError(t, err)
	require.NoError(t, f.Restore(&failingReader{data: before, chunk: 7}))
	assert.Equal(t, before, checkpoint(t, f))
}

// failingReader reads data chunk bytes at a time (all at once when chunk is 0), then
// fails with err (io.EOF when nil).
type failingReader struct {
	data  []byte
	chunk int
	err   error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	n := len(p)
	if r.chunk > 0 {
		n = min(n, r.chunk)
	}
	n = copy(p[:n], r.data)
	r.data = r.data[n:]
	return n, nil
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// A restored estimator answers, learns, re-divides and evicts as the original would
// have: the property's random histories of Observe (profiles and series, compressed
// or not), ObserveRunning, Estimate (a use, for eviction), Redivide and Forget, over
// keys that share logics, families and nearby sizes, under options that turn on
// histories, families, a small key cap, nearest sizes, size buckets and a minimum of
// observations in every combination.
func TestCheckpointRoundTripProperty(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("Checkpoint then Restore: the same estimates, now and after more of the same", prop.ForAll(func(seed int64, bits uint8) string {
		opts := ckOptions(t, bits)
		// The original, and a twin fed the same calls (the estimator is deterministic):
		// comparing every key's estimate is a use of each, which would hide a use order
		// lost by the checkpoint, so it is done on the twin and a second restored copy.
		orig, twin := newEst(t, opts...), newEst(t, opts...)
		if msg := ckRun(rng(seed), 60, orig, twin); msg != "" {
			return "before the checkpoint: " + msg
		}
		data := checkpoint(t, orig)
		restored, copy2 := newEst(t, opts...), newEst(t, opts...)
		// restored held a state of its own: Restore replaces it.
		if msg := ckRun(rng(^seed), 20, restored); msg != "" {
			return msg
		}
		for _, e := range []*predict.SimilarTask{restored, copy2} {
			if err := e.Restore(bytes.NewReader(data)); err != nil {
				return fmt.Sprintf("Restore: %v", err)
			}
		}
		if again := checkpoint(t, restored); !bytes.Equal(again, data) {
			return fmt.Sprintf("Checkpoint of the restored state differs:\n%s\nfrom\n%s", again, data)
		}
		if msg := sameEstimates(twin, copy2); msg != "" {
			return "after Restore: " + msg
		}
		if msg := ckRun(rng(seed+1), 60, orig, restored); msg != "" {
			return "after Restore, more of the same: " + msg
		}
		if msg := sameEstimates(orig, restored); msg != "" {
			return "at the end: " + msg
		}
		if a, b := checkpoint(t, orig), checkpoint(t, restored); !bytes.Equal(a, b) {
			return fmt.Sprintf("the final checkpoints differ:\n%s\n%s", a, b)
		}
		return ""
	}, gen.Int64(), gen.UInt8Range(0, 63)))
	props.TestingRun(t)
}

// ckOptions are the property's options: a running report counts at once, and each bit
// turns one option on.
func ckOptions(t testing.TB, bits uint8) []predict.EstimatorOption {
	opts := []predict.EstimatorOption{predict.WithRunning(0), predict.WithHistory(0, 8), predict.WithFamily(0)}
	if bits&1 != 0 {
		opts = append(opts, predict.WithHistory(3, 8))
	}
	if bits&2 != 0 {
		opts = append(opts, predict.WithFamily(predict.DefaultFamilyFactor))
	}
	if bits&4 != 0 {
		opts = append(opts, predict.WithMaxKeys(4))
	}
	if bits&8 != 0 {
		opts = append(opts, predict.WithNearestSize(4))
	}
	if bits&16 != 0 {
		opts = append(opts, predict.WithSizeBuckets(mustBuckets(t, 2)))
	}
	if bits&32 != 0 {
		opts = append(opts, predict.WithMinObservations(2))
	}
	return opts
}

// The property's keys: logics a and b of family F, c of family G, d of none; sizes
// near each other (the same or neighbouring log-2 buckets, within nearest-size reach).
var (
	ckLogics   = []string{"a", "b", "c", "d"}
	ckFamilies = map[string]string{"a": "F", "b": "F", "c": "G", "e": "F", "h": "G"}
	ckSizes    = []int64{0, 1, 3, 4, 7, 100, 128, 130, 1000}
	// Compared only: sizes and logics no call names, answered by nearest sizes and
	// families.
	ckUnseenSizes  = []int64{2, 5, 64, 200, 260, 513}
	ckUnseenLogics = []string{"e", "h"}
)

func ckKey(r interface{ IntN(int) int }) predict.Key {
	l := ckLogics[r.IntN(len(ckLogics))]
	return predict.Key{Logic: l, InputSize: ckSizes[r.IntN(len(ckSizes))], Family: ckFamilies[l]}
}

// ckRun makes n random calls on every estimator of es, the same calls on each, and
// says how their answers first differed ("" when they never did).
func ckRun(r interface {
	IntN(int) int
	Int64N(int64) int64
	Float64() float64
}, n int, es ...*predict.SimilarTask) string {
	for i := 0; i < n; i++ {
		k := ckKey(r)
		var answers []string
		switch op := r.IntN(20); {
		case op < 7: // a finished task, as a profile
			m := 1 + r.IntN(4)
			obs := predict.Observation{Profile: smallProfile(r, m)}
			if r.IntN(3) == 0 {
				obs.Compression = make([]resource.Vector, m)
				for j := range obs.Compression {
					obs.Compression[j][0] = float64(r.IntN(5)) / 4
				}
			}
			for _, e := range es {
				answers = append(answers, fmt.Sprint(e.Observe(k, obs)))
			}
		case op < 9: // a finished task, as a series
			obs := predict.Observation{Series: smallSeries(r)}
			for _, e := range es {
				answers = append(answers, fmt.Sprint(e.Observe(k, obs)))
			}
		case op < 12: // a running task
			obs := predict.Observation{Profile: smallProfile(r, 1+r.IntN(3))}
			for _, e := range es {
				answers = append(answers, fmt.Sprint(e.ObserveRunning(k, obs)))
			}
		case op < 17:
			for _, e := range es {
				p, ok := e.Estimate(k)
				answers = append(answers, fmt.Sprint(p, ok))
			}
		case op < 19:
			for _, e := range es {
				answers = append(answers, fmt.Sprint(e.Redivide()))
			}
		default:
			for _, e := range es {
				answers = append(answers, fmt.Sprint(e.Forget(k)))
			}
		}
		for j := 1; j < len(answers); j++ {
			if answers[j] != answers[0] {
				return fmt.Sprintf("call %d on %+v: %s, then %s", i, k, answers[0], answers[j])
			}
		}
	}
	for j := 1; j < len(es); j++ {
		if es[j].Len() != es[0].Len() {
			return fmt.Sprintf("%d keys, then %d", es[0].Len(), es[j].Len())
		}
	}
	return ""
}

// smallProfile is a profile of m stages of up to 60 s, 4000 millicores and 4 GiB.
func smallProfile(r interface{ Int64N(int64) int64 }, m int) stage.Profile {
	stages := make([]stage.Stage, m)
	for i := range stages {
		stages[i] = stage.Stage{Duration: time.Duration(1+r.Int64N(60)) * time.Second, Demand: std.MustTuple(r.Int64N(4000), r.Int64N(4<<30))}
	}
	return stage.MustProfile(std, stages...)
}

// smallSeries is a series of 2 to 12 samples 5 s apart.
func smallSeries(r interface{ Int64N(int64) int64 }) predict.Series {
	n := 2 + r.Int64N(11)
	var sr predict.Series
	for i := int64(0); i < n; i++ {
		sr.Samples = append(sr.Samples, predict.Sample{At: time.Duration(i) * 5 * time.Second, Usage: std.MustTuple(100*(1+r.Int64N(40)), (1+r.Int64N(8))<<28)})
	}
	sr.End = time.Duration(n) * 5 * time.Second
	return sr
}

// sameEstimates compares a's and b's estimates and observation counts for every key
// the property names, and for sizes and logics it does not; "" when they agree.
func sameEstimates(a, b *predict.SimilarTask) string {
	var keys []predict.Key
	for _, l := range append(slices.Clone(ckLogics), ckUnseenLogics...) {
		for _, sz := range append(slices.Clone(ckSizes), ckUnseenSizes...) {
			keys = append(keys, predict.Key{Logic: l, InputSize: sz, Family: ckFamilies[l]})
		}
	}
	for _, k := range keys {
		p, ok := a.Estimate(k)
		q, ok2 := b.Estimate(k)
		if ok != ok2 || !slices.Equal(p.Stages(), q.Stages()) {
			return fmt.Sprintf("%+v: %v %v, then %v %v", k, p, ok, q, ok2)
		}
		if n, m := a.Observations(k), b.Observations(k); n != m {
			return fmt.Sprintf("%+v: %d observations, then %d", k, n, m)
		}
	}
	return ""
}

// Checkpoint and Restore run safely beside observations, estimates and re-divisions
// (go test -race), and a checkpoint taken meanwhile is one Restore accepts.
func TestCheckpointConcurrent(t *testing.T) {
	e := newEst(t, predict.WithMaxKeys(16))
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rng(int64(g))
			for i := 0; i < 300; i++ {
				k := predict.Key{Logic: fmt.Sprint(r.IntN(24)), InputSize: int64(r.IntN(3)), Family: "f"}
				switch r.IntN(4) {
				case 0:
					_, _ = e.Estimate(k)
				case 1:
					_ = e.ObserveRunning(k, predict.Observation{Profile: smallProfile(r, 2)})
				case 2:
					e.Redivide()
				default:
					assert.NoError(t, e.Observe(k, predict.Observation{Profile: smallProfile(r, 1+r.IntN(3))}))
				}
			}
		}(g)
	}
	for i := 0; i < 20; i++ {
		var b bytes.Buffer
		require.NoError(t, e.Checkpoint(&b))
		f := newEst(t, predict.WithMaxKeys(16))
		require.NoError(t, f.Restore(bytes.NewReader(b.Bytes())), "a checkpoint taken under load")
		require.NoError(t, e.Restore(bytes.NewReader(b.Bytes())), "restored under load")
	}
	wg.Wait()
}

// A Ref made before a Restore answers as Estimate does after it: for a key the
// checkpoint holds, one it does not, and one the estimator did not hold before.
func TestCheckpointRefsFollowRestore(t *testing.T) {
	e, err := predict.NewSimilarTask(cpuMem, goldenOpts...)
	require.NoError(t, err)
	other := predict.Key{Logic: "other", InputSize: 1}
	require.NoError(t, e.Observe(etlMap, predict.Observation{Profile: cm(t, [3]int64{int64(time.Second), 1, 1})}))
	require.NoError(t, e.Observe(other, predict.Observation{Profile: cm(t, [3]int64{int64(time.Second), 2, 2})}))
	refs := []predict.Ref{e.Ref(etlMap), e.Ref(other), e.Ref(rawLogic)}
	for i := range refs {
		_, _ = refs[i].Estimate() // each holds what it found
	}
	require.NoError(t, e.Restore(bytes.NewReader(golden(t))))
	for i, k := range []predict.Key{etlMap, other, rawLogic} {
		want, ok := e.Estimate(k)
		got, ok2 := refs[i].Estimate()
		assert.Equal(t, ok, ok2, "%v", k)
		assert.Equal(t, want.Stages(), got.Stages(), "%v", k)
	}
	assert.Equal(t, 3, e.Len())
}

// Options that say how the state is used, not what it holds, are not recorded: a
// checkpoint restores under others, which then apply.
func TestCheckpointUsageOptionsMayDiffer(t *testing.T) {
	e, err := predict.NewSimilarTask(cpuMem, append(slices.Clone(goldenOpts), predict.WithMinObservations(3), predict.WithBaseWeight(1), predict.WithFamily(1))...)
	require.NoError(t, err)
	require.NoError(t, e.Restore(bytes.NewReader(golden(t))))
	_, ok := e.Estimate(etlMap)
	assert.False(t, ok, "two observations are not enough under WithMinObservations(3)")
	assert.Equal(t, 2, e.Observations(etlMap))
	require.NoError(t, e.Observe(etlMap, predict.Observation{Profile: cm(t, [3]int64{int64(time.Second), 7, 7})}))
	p, ok := e.Estimate(etlMap)
	require.True(t, ok)
	// Base weight 1: the third observation replaces the estimate (memory raised to the
	// history's peak, 50 and 7 now held).
	assert.Equal(t, cm(t, [3]int64{int64(time.Second), 7, 50}).Stages(), p.Stages())
}
