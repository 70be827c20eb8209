// Package resource is the resource model of finegrain: named dimensions that are
// compressible or not, fixed-size tuples of amounts and their algebra, and the
// compression formulas of docs/methods.md §1.
//
// A Schema names up to MaxDims dimensions (Standard gives cpu, memory, disk-io, net-io,
// disk and gpu) and marks the compressible ones: resources a task can be given less of
// and still complete, only slower (CPU time, bandwidth), as opposed to memory, disk space
// and GPUs (Def. 1). A Tuple is a [MaxDims]int64 value of amounts in base units
// (milli-cores, bytes, bytes per second); a Vector holds a real number per dimension
// (shares, averages, compression ratios). Tuple arithmetic never allocates.
//
// What the package implements, by section of docs/methods.md, the project's method
// reference (equation, definition and algorithm numbers are the sources', kept there):
//
//	§1 eq. 9–12   Tuple, Add, Sub, Mul, Scale
//	§1 eq. 13     Tuple.AnyLess (the paper's "less": any slot smaller) and Covers
//	§1 Def. 1     Dimension.Compressible, Schema.Split, Tuple.Only
//	§1 eq. 1      CompressionRatio, Schema.CompressionRatios
//	§1 eq. 4, 5   IdealDuration, CompressedDuration, Slowdown
//	§1 eq. 6, 7   CompressionBound, MaxCompression (the clamp Reading of eq. 7)
//	DRF           Tuple.Shares, Tuple.DominantShare
//
// Values cross from users into the library through Schema.Make, Schema.FromSlice and
// Schema.Parse, which reject unknown and duplicate dimensions and negative amounts with a
// *DimensionError naming the dimension and value; errors.Is matches the sentinels
// (ErrNegative, ErrUnknownDimension, ...).
//
// As text, amounts are Kubernetes resource quantities in each dimension's whole units
// (Dimension.BaseUnitsPerQuantity): Parse reads "cpu=500m, memory=16Gi" as 500
// millicores and 17179869184 bytes, "cpu=1.5" as 1500 millicores, and Format writes
// tuples back in the same form ("cpu=2,memory=1536Mi").
package resource
