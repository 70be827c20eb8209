package field_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/speculate"
)

// foundFields returns, for each package's FieldError alias in turn (fairness, match,
// predict, sim, speculate, workload), the Field of the one errors.As finds in err, or ""
// when it finds none.
func foundFields(err error) [6]string {
	return [6]string{
		fieldOf(err, (*fairness.FieldError)(nil)),
		fieldOf(err, (*match.FieldError)(nil)),
		fieldOf(err, (*predict.FieldError)(nil)),
		fieldOf(err, (*sim.FieldError)(nil)),
		fieldOf(err, (*speculate.FieldError)(nil)),
		fieldOf(err, (*workload.FieldError)(nil)),
	}
}

// fieldOf returns the Field of the *field.Error[P] that errors.As finds in err, or ""
// when it finds none. Its second argument only names P, through a package's alias.
func fieldOf[P field.Package](err error, _ *field.Error[P]) string {
	var fe *field.Error[P]
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// TestAliases checks the packages' FieldErrors through their aliases, on errors their
// APIs return and on composite literals: each message starts with its own package's
// name, as it did before the packages shared package field; errors.Is finds the
// sentinels; and errors.As with one package's *FieldError finds that package's errors
// only.
func TestAliases(t *testing.T) {
	schema := resource.MustSchema(resource.Dimension{Name: "cpu"}, resource.Dimension{Name: "memory"})
	tree, err := fairness.NewTree(schema, schema.MustTuple(10, 10))
	require.NoError(t, err)
	result := func(_ any, err error) error { return err }

	for _, c := range []struct {
		name string
		err  error
		want string
		is   []error
		as   [6]string // fairness, match, predict, sim, speculate, workload
	}{
		{
			"fairness, within a job", tree.AddJob("", "x", fairness.Weight(-3)),
			`fairness: job "x" weight = -3: weight must be a positive finite number`,
			[]error{fairness.ErrInvalidWeight}, [6]string{0: `job "x" weight`},
		},
		{
			"fairness, empty ID", tree.AddJob("", "", fairness.Weight(1)),
			`fairness: job ID = "": empty ID`,
			[]error{fairness.ErrInvalidID}, [6]string{0: "job ID"},
		},
		{
			"match", result(match.NewWeights(0.5, 0.5)),
			"match: weights length = 2: invalid QoS weights",
			[]error{match.ErrBadWeights}, [6]string{1: "weights length"},
		},
		{
			"predict", result(predict.NewPhases(math.Inf(1))),
			"predict: phase weight[0] = +Inf: invalid option",
			[]error{predict.ErrInvalidOption}, [6]string{2: "phase weight[0]"},
		},
		{
			"sim", result(sim.PolicyByName("nope")),
			"sim: policy = nope: unknown policy",
			[]error{sim.ErrUnknownPolicy}, [6]string{3: "policy"},
		},
		{
			"sim, nil value", result(sim.New(nil, nil, sim.Policy{})),
			"sim: workload/cluster = <nil>: invalid input",
			[]error{sim.ErrInvalidInput}, [6]string{3: "workload/cluster"},
		},
		{
			"sim wrapping workload's", result(sim.New(&workload.Workload{}, &workload.Cluster{}, sim.Policy{})),
			"sim: workload: invalid input: workload: Jobs = 0: empty",
			[]error{sim.ErrInvalidInput, workload.ErrEmpty}, [6]string{5: "Jobs"},
		},
		{
			"speculate", result(speculate.NewLATE(speculate.WithSlowTaskThreshold(math.NaN()))),
			"speculate: slow task threshold = NaN: invalid option",
			[]error{speculate.ErrInvalidOption}, [6]string{4: "slow task threshold"},
		},
		{
			"speculate, another package's sentinel", result(speculate.NewPlanner(nil)),
			"speculate: schema = nil: schema mismatch",
			[]error{resource.ErrSchemaMismatch}, [6]string{4: "schema"},
		},
		{
			"workload", result(workload.FGMCluster(workload.WithRacks(0))),
			"workload: racks = 0: invalid option",
			[]error{workload.ErrInvalidOption}, [6]string{5: "racks"},
		},
		{
			"fairness literal", &fairness.FieldError{Field: "W1", Value: "", Err: fairness.ErrInvalidWait},
			`fairness: W1 = "": invalid locality wait`,
			[]error{fairness.ErrInvalidWait}, [6]string{0: "W1"},
		},
		{
			"match literal", &match.FieldError{Field: "rank", Value: 0, Err: match.ErrBadRank},
			"match: rank = 0: feature rank out of range",
			[]error{match.ErrBadRank}, [6]string{1: "rank"},
		},
		{
			"predict literal", &predict.FieldError{Field: "samples[3].At", Value: -1, Err: predict.ErrUnsorted},
			"predict: samples[3].At = -1: samples not in strictly increasing time order",
			[]error{predict.ErrUnsorted}, [6]string{2: "samples[3].At"},
		},
		{
			"sim literal", &sim.FieldError{Field: "heartbeat", Value: 0, Err: sim.ErrInvalidOption},
			"sim: heartbeat = 0: invalid option",
			[]error{sim.ErrInvalidOption}, [6]string{3: "heartbeat"},
		},
		{
			"speculate literal", &speculate.FieldError{Field: "Nodes[3].ID", Value: "", Err: speculate.ErrEmptyID},
			`speculate: Nodes[3].ID = "": empty ID`,
			[]error{speculate.ErrEmptyID}, [6]string{4: "Nodes[3].ID"},
		},
		{
			"workload literal", &workload.FieldError{Field: "scale", Value: -1.5, Err: workload.ErrInvalidOption},
			"workload: scale = -1.5: invalid option",
			[]error{workload.ErrInvalidOption}, [6]string{5: "scale"},
		},
		{
			"match inside fairness", &fairness.FieldError{Field: "outer", Value: 1, Err: &match.FieldError{Field: "inner", Value: 2, Err: match.ErrBadRank}},
			"fairness: outer = 1: match: inner = 2: feature rank out of range",
			[]error{match.ErrBadRank}, [6]string{0: "outer", 1: "inner"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Error(t, c.err)
			assert.Equal(t, c.want, c.err.Error())
			for _, s := range c.is {
				assert.ErrorIs(t, c.err, s)
			}
			assert.Equal(t, c.as, foundFields(c.err), "the Field errors.As finds with each package's *FieldError")
		})
	}
}

// TestAliasUnwrap checks that Unwrap, called through each alias, returns the error the
// FieldError wraps.
func TestAliasUnwrap(t *testing.T) {
	for _, c := range []struct {
		name string
		err  interface {
			error
			Unwrap() error
		}
		want error
	}{
		{"fairness", &fairness.FieldError{Err: fairness.ErrEmpty}, fairness.ErrEmpty},
		{"match", &match.FieldError{Err: match.ErrNoServers}, match.ErrNoServers},
		{"predict", &predict.FieldError{Err: predict.ErrNoSamples}, predict.ErrNoSamples},
		{"sim", &sim.FieldError{Err: sim.ErrTimeLimit}, sim.ErrTimeLimit},
		{"speculate", &speculate.FieldError{Err: speculate.ErrCannotMeet}, speculate.ErrCannotMeet},
		{"workload", &workload.FieldError{Err: workload.ErrNilRand}, workload.ErrNilRand},
		{"nil", &match.FieldError{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.err.Unwrap())
		})
	}
}
