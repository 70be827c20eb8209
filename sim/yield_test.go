package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

func TestParseYield(t *testing.T) {
	for _, y := range []Yield{ColocatedFirst, Proportional} {
		got, err := ParseYield(y.String())
		require.NoError(t, err)
		assert.Equal(t, y, got)
	}
	for _, s := range []string{"", "Proportional", "colocated", "first"} {
		_, err := ParseYield(s)
		assert.ErrorIs(t, err, ErrInvalidOption, "%q", s)
	}
	assert.Equal(t, "Yield(7)", Yield(7).String())
	assert.Equal(t, ColocatedFirst, DefaultYield)
}

func TestWithYieldRejectsUnknown(t *testing.T) {
	w, cl := smallFGM(t, 1, 0.05)
	_, err := New(&w, &cl, DRF(), WithYield(Yield(2)))
	require.ErrorIs(t, err, ErrInvalidOption)
}

// squeeze shares a node as its model says: under ColocatedFirst the co-located
// applications get their demand up to the capacity less the tasks' MinTaskShare (when
// the tasks want it) and the tasks never more than what is left; under Proportional
// both get capacity ÷ demand of theirs; nobody is squeezed on a node that is not
// over-committed, and the shares never add up to more than the capacity.
func TestPropertySqueeze(t *testing.T) {
	schema := workload.Schema()
	dims, comp := schema.Len(), schema.Compressible()
	props := gopter.NewProperties(params())
	props.Property("co-located first: their demand up to capacity; tasks what is left", prop.ForAll(func(seed uint64) string {
		r := rand.New(rand.NewPCG(seed, 1))
		var capa, bg, tasks resource.Tuple
		for k := 0; k < dims; k++ {
			capa[k] = r.Int64N(10_000)
			bg[k] = r.Int64N(capa[k] + 2_000 + 1)
			tasks[k] = r.Int64N(capa[k] + 2_000 + 1)
		}
		d := bg.Add(tasks)
		for _, y := range []Yield{ColocatedFirst, Proportional} {
			rc, bgRC := y.squeeze(capa, d, bg, comp, dims)
			gotBG, gotTasks := share(bg, bgRC, dims), share(tasks, rc, dims)
			for k := 0; k < dims; k++ {
				if !comp.Has(k) || capa[k] <= 0 {
					if rc[k] != 0 || bgRC[k] != 0 {
						return fmt.Sprintf("%v: dim %d not modelled but squeezed (rc %v, bg %v)", y, k, rc[k], bgRC[k])
					}
					continue
				}
				if !(rc[k] >= 0 && rc[k] <= 1 && bgRC[k] >= 0 && bgRC[k] < 1) {
					return fmt.Sprintf("%v: dim %d: rc %v, bg rc %v out of range", y, k, rc[k], bgRC[k])
				}
				if d[k] <= capa[k] && (rc[k] != 0 || bgRC[k] != 0) {
					return fmt.Sprintf("%v: dim %d: demand %d within capacity %d, yet squeezed", y, k, d[k], capa[k])
				}
				if gotBG[k]+gotTasks[k] > capa[k] {
					return fmt.Sprintf("%v: dim %d: shares %d + %d > capacity %d", y, k, gotBG[k], gotTasks[k], capa[k])
				}
				if y != ColocatedFirst {
					if rc[k] != bgRC[k] {
						return fmt.Sprintf("proportional: dim %d: tasks' rc %v ≠ theirs %v", k, rc[k], bgRC[k])
					}
					continue
				}
				floor := min(tasks[k], int64(float64(capa[k])*MinTaskShare))
				want := min(bg[k], capa[k]-floor)
				if math.Abs(float64(gotBG[k]-want)) > 1 { // share rounds down
					return fmt.Sprintf("co-located first: dim %d: they got %d of %d, want %d (capacity %d, tasks %d)", k, gotBG[k], bg[k], want, capa[k], tasks[k])
				}
				if gotTasks[k] > capa[k]-gotBG[k] {
					return fmt.Sprintf("co-located first: dim %d: tasks got %d, more than the %d left", k, gotTasks[k], capa[k]-gotBG[k])
				}
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// The loss figure follows the execution model: a node whose co-located applications
// and task fit beside each other shows no loss; one over-committed on the CPU shows a
// loss under Proportional (theirs in proportion, as the model says) and none under
// ColocatedFirst unless they alone want more than the node less the tasks' share.
func TestPropertyColocatedLoss(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("loss is 0 exactly when nothing overcommits", prop.ForAll(func(seed uint64) string {
		r := rand.New(rand.NewPCG(seed, 2))
		const capa = 1000
		level := float64(r.IntN(101)) / 100 // their CPU share of the node
		demand := int64(1 + r.IntN(capa))
		cl := oneNode(tuple(capa, 8*gib, 100<<20, 100<<20))
		w := workload.Workload{Name: "one", Jobs: []workload.Job{handJob("j", "q", 0, tuple(demand, gib, 0, 0),
			oneStage(time.Duration(1+r.IntN(60))*time.Second, tuple(demand, gib, 0, 0)))}}
		bg := &SeriesLoad{CPU: []workload.Series{{Name: "flat", Step: time.Hour, Values: []float64{level}}}, Memory: []float64{0.1}}
		theirs := part(level, capa)
		for _, y := range []Yield{ColocatedFirst, Proportional} {
			res, err := Run(&w, &cl, FIFO(), WithBackground(bg), WithYield(y), WithVariation(NoVariation))
			if err != nil {
				return err.Error()
			}
			loss := res.Summary.Colocated
			over := theirs+demand > capa
			if y == ColocatedFirst {
				over = theirs > capa-min(demand, int64(capa*MinTaskShare))
			}
			switch {
			case loss.Shortfall[workload.SlotMemory] != 0:
				return fmt.Sprintf("%v: memory shortfall %v", y, loss.Shortfall[workload.SlotMemory])
			case over && !(loss.Shortfall[workload.SlotCPU] > 0 && loss.Squeezed > 0 && loss.Slowdown > 0):
				return fmt.Sprintf("%v: theirs %d + task %d > %d, yet loss %+v", y, theirs, demand, capa, loss)
			case !over && (loss.Shortfall[workload.SlotCPU] != 0 || loss.Squeezed != 0 || loss.Slowdown != 0):
				return fmt.Sprintf("%v: theirs %d + task %d fit %d, yet loss %+v", y, theirs, demand, capa, loss)
			case loss.Shortfall[workload.SlotCPU] > 1 || loss.Squeezed > 1:
				return fmt.Sprintf("%v: shares above 1: %+v", y, loss)
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}
