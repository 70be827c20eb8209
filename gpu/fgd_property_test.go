package gpu_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/gpu"
)

// FGD.Score counts each shape's devices once and updates the counts per candidate;
// it must agree with the plain definition: σ((Frag before − Frag after)/1000) with
// Frag computed afresh on the node after the placement, and, for a share, the best
// such score over every device that holds it.
func TestFGDScoreMatchesFrag(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("FGD.Score = σ(ΔFrag/1000) of its allocation, the best over the devices for a share", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		f := randFGD(r)
		d := randDevices(r)
		n := randNode(r, &d)
		task := randShape(r, n.Free)
		if r.Intn(3) == 0 && d.Model() != "" {
			task.GPU.Models = []string{d.Model()}
		}
		x, a, ok := f.Score(n, task)
		if !ok {
			return ""
		}
		ref := func(a gpu.Allocation) float64 {
			after := d.Clone()
			if err := after.Take(a); err != nil {
				panic(err)
			}
			delta := f.Frag(n) - f.Frag(gpu.Node{Capacity: n.Capacity, Free: n.Free.Sub(task.Request), Devices: &after})
			return 1 / (1 + math.Exp(-delta/gpu.Milli))
		}
		if want := ref(a); math.Abs(x-want) > 1e-9 {
			return fmt.Sprintf("%v on %v: score %v, by Frag %v", task.GPU, frees(&d), x, want)
		}
		if task.GPU.Shared() {
			for i := 0; i < d.Len(); i++ {
				if d.Free(i) >= task.GPU.Milli {
					if y := ref(gpu.Allocation{Devices: []int{i}, Milli: task.GPU.Milli}); y > x+1e-9 {
						return fmt.Sprintf("%v on %v: device %d scores %v, above the chosen %v (%v)", task.GPU, frees(&d), i, y, a.Devices, x)
					}
				}
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t, gopter.ConsoleReporter(false))
}
