package finegrain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// doubled reports a prefix said twice in a row, as in "match: match: no room".
func doubled(msg string) (string, bool) {
	parts := strings.Split(msg, ": ")
	for i := 1; i < len(parts); i++ {
		if parts[i] == parts[i-1] {
			return parts[i], true
		}
	}
	return "", false
}

// Error messages read well: no package prefix twice in a row, no empty trailing value,
// numbers say what they are, and a schema mismatch names both schemas.
func TestErrorWording(t *testing.T) {
	_, twice := doubled("match: match: profile schema")
	require.True(t, twice, "the check finds a doubled prefix")
	three := resource.MustSchema(resource.CPU, resource.Memory, resource.Disk)
	other := stage.MustProfile(three, stage.Stage{Duration: time.Second, Demand: three.MustTuple(1, 1, 1)})
	tl, err := stage.NewTimeline(schema, schema.MustTuple(10, 10))
	require.NoError(t, err)
	est, err := predict.NewSimilarTask(schema)
	require.NoError(t, err)
	s := newScheduler(t)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n1", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	_, dupDim := resource.NewSchema(resource.CPU, resource.CPU)
	_, dupParse := schema.Parse("cpu=1, cpu=2")
	_, unknown := schema.Parse("gpu=1")

	for _, tc := range []struct {
		name     string
		err      error
		sentinel error
		contains []string
	}{
		{"duplicate dimension", dupDim, resource.ErrDuplicateDimension, []string{"positions 0 and 1"}},
		{"duplicate in text", dupParse, resource.ErrDuplicateDimension, []string{`given twice in "cpu=1, cpu=2"`}},
		{"unknown dimension", unknown, resource.ErrUnknownDimension, []string{"amount 1", "cpu, memory"}},
		{"empty key", est.Observe(predict.Key{}, predict.Observation{}), predict.ErrInvalidKey, []string{`key.Logic = ""`}},
		{"observation schema", est.Observe(predict.Key{Logic: "x"}, predict.Observation{Profile: other}), resource.ErrSchemaMismatch,
			[]string{three.String(), schema.String()}},
		{"match schema", match.FineGrained{}.Match(match.Server{ID: "n1", Timeline: tl}, 0, other).Err(), resource.ErrSchemaMismatch,
			[]string{three.String(), schema.String()}},
		{"capacity of another schema", s.AddNode(finegrain.Node{ID: "n2", Capacity: three.MustTuple(1, 1, 1)}), resource.ErrOutsideSchema,
			[]string{"slot 2", schema.String()}},
		{"profile of another schema", s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1, 1), Profile: other}),
			resource.ErrSchemaMismatch, []string{three.String(), schema.String()}},
		{"unknown job", s.Submit(finegrain.Task{ID: "t", Job: "nope", Request: schema.MustTuple(1, 1)}), finegrain.ErrUnknownJob,
			[]string{`job "nope"`}},
		{"unknown task", func() error { _, err := s.Place("nope", 0); return err }(), finegrain.ErrUnknownTask, []string{`task "nope"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			msg := tc.err.Error()
			assert.True(t, errors.Is(tc.err, tc.sentinel), "%v wraps %v", msg, tc.sentinel)
			p, twice := doubled(msg)
			assert.False(t, twice, "prefix %q twice in %q", p, msg)
			assert.False(t, strings.HasSuffix(strings.TrimSpace(msg), ":"), "empty trailing value: %q", msg)
			for _, c := range tc.contains {
				assert.Contains(t, msg, c)
			}
		})
	}
}
