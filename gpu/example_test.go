package gpu_test

import (
	"fmt"

	"github.com/finegrain/finegrain/gpu"
)

// 8 × 0.6 free is not 4.8 free: a node whose eight devices each have 600 thousandths
// free holds no task that needs one whole device, although 4.8 devices are free in
// sum. A share goes to the tightest device that holds it.
func ExampleDevices_BestFit() {
	d, _ := gpu.New(gpu.Spec{Model: "V100M32", Count: 8})
	for i := 0; i < d.Len(); i++ {
		_ = d.Take(gpu.Allocation{Devices: []int{i}, Milli: 400})
	}
	fmt.Printf("free in sum: %.1f GPU on %d devices\n", float64(d.FreeTotal())/gpu.Milli, d.Len())
	fmt.Println("fits", gpu.Whole(1), d.Fits(gpu.Whole(1)))
	fmt.Println("fits", gpu.Share(600), d.Fits(gpu.Share(600)))

	a, ok := d.BestFit(gpu.Share(500))
	fmt.Println("best fit for", gpu.Share(500), a.Devices, ok, "(all tie: the lowest index)")
	_ = d.Take(gpu.Allocation{Devices: []int{5}, Milli: 50}) // device 5 now has 550 free
	a, ok = d.BestFit(gpu.Share(500))
	fmt.Println("best fit for", gpu.Share(500), a.Devices, ok, "(the tightest)")
	// Output:
	// free in sum: 4.8 GPU on 8 devices
	// fits 1 GPU false
	// fits 0.6 GPU true
	// best fit for 0.5 GPU [0] true (all tie: the lowest index)
	// best fit for 0.5 GPU [5] true (the tightest)
}

// FGD places a task where it grows the expected fragmentation least. With a workload
// of shares of half a device three times as often as whole devices, half a device
// goes on the node that has a half free, filling it (fragmentation 125 → 0), rather
// than on an empty node, where it would leave a half that no whole-device task can
// use (0 → 125).
func ExampleFGD() {
	tasks := []gpu.Shape{{GPU: gpu.Share(500)}, {GPU: gpu.Share(500)}, {GPU: gpu.Whole(1)}, {GPU: gpu.Share(500)}}
	shapes, _ := gpu.TypicalShapes(tasks, 0, 1)
	for _, s := range shapes {
		fmt.Println("shape", s.GPU, "weight", s.Weight)
	}
	fgd, _ := gpu.NewFGD(shapes, 0)

	empty, _ := gpu.New(gpu.Spec{Model: "T4", Count: 2})
	half, _ := gpu.New(gpu.Spec{Model: "T4", Count: 2})
	_ = half.Take(gpu.Allocation{Devices: []int{0}, Milli: 500})
	nodes := []struct {
		name string
		node gpu.Node
	}{{"empty", gpu.Node{Devices: &empty}}, {"half", gpu.Node{Devices: &half}}}

	task := gpu.Shape{GPU: gpu.Share(500)}
	best, bestScore := "", -1.0
	for _, n := range nodes {
		score, a, _ := fgd.Score(n.node, task)
		fmt.Printf("%s: frag %.0f, score %.3f on device %v\n", n.name, fgd.Frag(n.node), score, a.Devices)
		if score > bestScore {
			best, bestScore = n.name, score
		}
	}
	fmt.Println("FGD places", task.GPU, "on", best)
	// Output:
	// shape 0.5 GPU weight 3
	// shape 1 GPU weight 1
	// empty: frag 0, score 0.469 on device [0]
	// half: frag 125, score 0.531 on device [0]
	// FGD places 0.5 GPU on half
}
