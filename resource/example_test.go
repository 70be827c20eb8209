package resource_test

import (
	"fmt"

	"github.com/finegrain/finegrain/resource"
)

func Example() {
	s := resource.Standard()
	capacity, _ := s.Parse("cpu=4,memory=8Gi") // 4 cores: 4000 millicores
	running, _ := s.Parse("cpu=2,memory=2Gi")
	demand, _ := s.Parse("cpu=2400m,memory=3Gi")

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
	gpuMem := resource.Dimension{Name: "gpu-memory", Unit: "byte", BinarySI: true}
	s, err := resource.NewSchema(resource.CPU, resource.Memory, gpuMem)
	if err != nil {
		panic(err)
	}
	// Amounts are Kubernetes quantities: CPU in cores, memory in bytes.
	t, err := s.Parse("cpu=1.5, memory=1e9, gpu-memory=16Gi")
	fmt.Println(t[:3], err)
	_, err = s.Parse("memory=-1")
	fmt.Println(err)
	_, err = s.Parse("cpu=2 cores")
	fmt.Println(err)
	// Output:
	// [1500 1000000000 17179869184] <nil>
	// resource: dimension "memory": negative amount: -1
	// resource: dimension "cpu": syntax error ("2 cores": want a quantity such as 500m, 2, 1.5, 16Gi or 1e3)
}

func ExampleSchema_Format() {
	s := resource.Standard()
	fmt.Println(s.Format(resource.Tuple{2000, 16 << 30}))
	fmt.Println(s.Format(resource.Tuple{2500, 1536 << 20, 0, 125e6}))
	fmt.Println(s.Format(resource.Tuple{250, 1181116007, 0, 0, 1e12, 2}))
	// Output:
	// cpu=2,memory=16Gi
	// cpu=2500m,memory=1536Mi,net-io=125M
	// cpu=250m,memory=1181116007,disk=1T,gpu=2
}

func ExampleDimension_ParseAmount() {
	for _, text := range []string{"500m", "2", "1.5", "1e3", "0.1m"} {
		v, _ := resource.CPU.ParseAmount(text)
		fmt.Printf("cpu %s = %d millicores\n", text, v)
	}
	v, _ := resource.Memory.ParseAmount("0.5Gi")
	fmt.Printf("memory 0.5Gi = %d bytes, written %s\n", v, resource.Memory.FormatAmount(v))
	// Output:
	// cpu 500m = 500 millicores
	// cpu 2 = 2000 millicores
	// cpu 1.5 = 1500 millicores
	// cpu 1e3 = 1000000 millicores
	// cpu 0.1m = 1 millicores
	// memory 0.5Gi = 536870912 bytes, written 512Mi
}
