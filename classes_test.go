package finegrain_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
)

// TestQuickCheckChangesNoDecision replays random event sequences on two schedulers,
// one passing jobs over by their demand classes (plugins.DemandClasses) and one
// without that plugin, matching every job's task, and checks that every heartbeat
// starts the same tasks on the same node at the same locality. The check includes the
// window of a predicted task's first stage (plugins.DemandClasses.FirstStageWindow).
// Locality waits are off, or by the clock rule (its default waits, and short waits that
// relax within a sequence), with the room rule (WithLocalityWaitForRoom) on or off:
// under the clock rule a job that may not launch on the node is passed over before the
// check, an offer passed up counts for nothing, and a job the check passes over sets
// the packing bound's floor only if it would have launched rather than waited. (Under
// Alg. 2.1, PullDelayScheduling, a job the check passes over on a node that can take
// none of its tasks is not counted as having declined the node, which the matching
// scheduler does count: the decisions may differ there.)
func TestQuickCheckChangesNoDecision(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 300
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with params.SetSeed(seed)).
	props := gopter.NewProperties(params)
	props.Property("same decisions with and without the quick check", prop.ForAll(func(seed int64) string {
		return replayBoth(seed, 150)
	}, gen.Int64()))
	props.TestingRun(t)
}

func replayBoth(seed int64, steps int) string {
	schema := resource.Standard()
	r := rand.New(rand.NewSource(seed))
	var opts []finegrain.Option
	switch r.Intn(3) {
	case 0:
		opts = append(opts, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	case 1:
		opts = append(opts, finegrain.WithPullStrategy(finegrain.PullLocalityClock(time.Second, 2*time.Second)))
	case 2:
		opts = append(opts, finegrain.WithLocalityWaitForRoom(r.Intn(2) == 0)) // the default clock rule's waits
	}
	if r.Intn(3) == 0 {
		opts = append(opts, finegrain.WithPrediction(false))
	}
	var ss [2]*finegrain.Scheduler
	for i := range ss {
		o := opts
		if i == 1 {
			o = append(o[:len(o):len(o)], finegrain.WithoutPlugin("DemandClasses"))
		}
		s, err := finegrain.New(schema, o...)
		if err != nil {
			return err.Error()
		}
		ss[i] = s
	}
	w, msg := newTwins(r, schema, ss)
	if msg != "" {
		return msg
	}
	return w.replay(steps, [2]string{"with the check", "without"})
}

// Seeds of replayBoth that once failed: a failed task raised above its class's plan
// made the check and the walk disagree (its refusal was remembered for its class; the
// packing bound's floor read the raised demand in one path and the class in the other;
// 909829459578116934: the Try path set no floor for a refused task the node could not
// hold empty, while the check still set it from the job's classes).
func TestQuickCheckRegressions(t *testing.T) {
	// -3121487666043864750: under the clock rule with the room rule, a job whose wait
	// the room rule might waive was refused by its classes and set the floor, where the
	// walk let it wait for locality.
	for _, seed := range []int64{5002701459891068572, -3071055009074958508, 909829459578116934, -3121487666043864750} {
		assert.Empty(t, replayBoth(seed, 150), "seed %d", seed)
	}
}
