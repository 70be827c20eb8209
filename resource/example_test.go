package resource_test

import (
	"fmt"

	"github.com/finegrain/finegrain/resource"
)

func Example() {
	s := resource.Standard()
	capacity, _ := s.Parse("cpu=4000,memory=8Gi")
	running, _ := s.Parse("cpu=2000,memory=2Gi")
	demand, _ := s.Parse("cpu=2400,memory=3Gi")

	free := capacity.Sub(running)
	fmt.Println("fits now:", free.Covers(demand))
	fmt.Println("eq. 13 free < demand:", free.AnyLess(demand))

	// The compressible part may be squeezed by up to 10% of capacity (eq. 7).
	allowance := capacity.Only(s.Compressible()).Scale(resource.DefaultCompressionLimit)
	fmt.Println("fits with compression:", free.Add(allowance).Covers(demand))
	fmt.Println("cpu compression:", resource.CompressionRatio(2400, free[0]))
	// Output:
	// fits now: false
	// eq. 13 free < demand: true
	// fits with compression: true
	// cpu compression: 0.16666666666666666
}

func ExampleCompressedDuration() {
	bound, _ := resource.CompressionBound(1, 3, 0.05) // eq. 6
	rc, _ := resource.MaxCompression(bound, resource.DefaultCompressionLimit)
	d, _ := resource.CompressedDuration(90e9, rc, 0.05) // 90 s of work, eq. 5
	fmt.Printf("bound %.4f, allowed %.2f, 90s becomes %v\n", bound, rc, d)
	// Output: bound 0.2125, allowed 0.10, 90s becomes 1m45s
}

func ExampleSchema_Parse() {
	gpuMem := resource.Dimension{Name: "gpu-memory", Unit: "byte"}
	s, err := resource.NewSchema(resource.CPU, resource.Memory, gpuMem)
	if err != nil {
		panic(err)
	}
	t, err := s.Parse("cpu=1500, gpu-memory=16Gi")
	fmt.Println(s.Format(t), err)
	_, err = s.Parse("memory=-1")
	fmt.Println(err)
	// Output:
	// cpu=1500,gpu-memory=17179869184 <nil>
	// resource: dimension "memory": negative amount: -1
}
