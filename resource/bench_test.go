package resource_test

import (
	"testing"

	"github.com/finegrain/finegrain/resource"
)

var (
	sinkT resource.Tuple
	sinkB bool
	sinkF float64
)

func BenchmarkTupleAdd(b *testing.B) {
	b.ReportAllocs()
	x, y := resource.Tuple{1, 2, 3, 4, 5, 6, 7, 8}, resource.Tuple{8, 7, 6, 5, 4, 3, 2, 1}
	for i := 0; i < b.N; i++ {
		x = x.Add(y)
	}
	sinkT = x
}

func BenchmarkTupleSub(b *testing.B) {
	b.ReportAllocs()
	x, y := resource.Tuple{1, 2, 3, 4, 5, 6, 7, 8}, resource.Tuple{8, 7, 6, 5, 4, 3, 2, 1}
	for i := 0; i < b.N; i++ {
		x = x.Sub(y)
	}
	sinkT = x
}

func BenchmarkTupleCovers(b *testing.B) {
	b.ReportAllocs()
	x, y := resource.Tuple{9, 9, 9, 9, 9, 9, 9, 9}, resource.Tuple{1, 2, 3, 4, 5, 6, 7, 8}
	r := false
	for i := 0; i < b.N; i++ {
		y[i&7]++
		r = r != x.Covers(y)
	}
	sinkB = r
}

func BenchmarkTupleScale(b *testing.B) {
	b.ReportAllocs()
	x := resource.Tuple{1000, 2000, 3000, 4000}
	for i := 0; i < b.N; i++ {
		sinkT = x.Scale(0.1)
	}
}

func BenchmarkDominantShare(b *testing.B) {
	b.ReportAllocs()
	x, c := resource.Tuple{1000, 4 << 30}, resource.Tuple{9000, 18 << 30, 0, 0, 0, 0, 0, 0}
	for i := 0; i < b.N; i++ {
		sinkF = x.DominantShare(c)
	}
}
