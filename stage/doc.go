// Package stage models demand over time: a task's execution stages (Profile) and a
// server's free resources over time (Timeline). Section numbers (§N) refer to
// docs/methods.md, the project's method reference, which also keeps the source papers'
// equation and algorithm numbers cited here.
//
// Real tasks use resources in stages — a read phase heavy on disk, a compute phase heavy
// on CPU, a shuffle heavy on network — rather than at a constant request (docs/methods.md
// §2). A Profile lays such stages end to end from the task's start; its Peak is the
// constant request a coarse-grained scheduler would reserve (Mx in docs/methods.md §3).
//
// A Timeline holds a server's capacity minus everything reserved on it as a step
// function over time, in a B-tree (github.com/google/btree). It answers what the
// matchers of package match need: the free segments over a window (Walk, Segments — the
// input of Alg. 2), the minimum free over a window (MinFree — the coarse-grained Ax of
// docs/methods.md §3), the time-weighted average over a window (Average, eq. 14), whether
// a profile fits from a start time (Check) and the earliest start at which it does
// (EarliestFit, the basis of future-start placement). Reserve and Release cost
// O(log n + k) for n steps and k steps in the window; Walk allocates nothing.
//
// Compressible dimensions (docs/methods.md §1): Reserve, Check and EarliestFit take an
// allowance, the amount by which each compressible dimension may go below zero — tasks
// then get less than they demand and run slower (resource.CompressedDuration).
// Non-compressible dimensions never go below zero: a reservation that would do so is
// refused with a *FitError naming the stage, the dimension, the time and the shortfall,
// and the timeline is left unchanged.
//
// TimeAverage is eq. 14 as an accumulator, for samples as well as segments.
//
// Profiles are immutable values, safe to share. A Timeline has one owner and is not safe
// for concurrent use; the reference Scheduler guards its nodes' timelines.
package stage
