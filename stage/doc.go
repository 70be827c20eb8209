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
// function over time. It answers what the matchers of package match need: the free
// segments over a window (Walk, Segments — the input of Alg. 2), the minimum free over a
// window (MinFree — the coarse-grained Ax of docs/methods.md §3) or over each stage of a
// profile at once (MinFreeStages — what fine-grained matching with a constant
// compression allowance needs), the segments below a
// floor (WalkBelow) or short of the stages of a profile (WalkShort — the segments Alg. 2
// must look at), the time-weighted average over a window (Average, eq. 14), whether a
// profile fits from a start time (Check) and the earliest start at which it does
// (EarliestFit, the basis of future-start placement).
//
// The steps live in a B+-tree of the package's own whose inner nodes keep, for each
// child, the per-dimension minimum of the free amounts below it, and whose range
// updates are lazy: a reservation adds its stages' demands to whole subtrees at once.
// For n steps (Len), k of them in a window and s stages in a profile:
//
//   - MinFree is O(log n), whatever the window's length: the subtrees inside the window
//     count by their minima, only the two at its ends are descended into.
//     MinFreeStages is O(s log n) in one descent: it descends only into the subtrees
//     across a stage boundary or an end of the window.
//   - Walk is O(log n + k). WalkBelow and WalkShort descend only into subtrees whose
//     minimum is below the floor or short of a stage they overlap: O((1 + r) log n) and
//     O((s + r) log n) for r segments found, whatever the window's length.
//   - Reserve, Release, Suspend and Resume split the steps at the s + 1 stage boundaries,
//     add the demands in one descent and merge the steps left equal: O(s log n), not
//     O(k) — a task reserved for hours over thousands of steps costs what a short one
//     does. Check and EarliestFit's fit test are WalkShort with the allowance as slack.
//
// Walk, WalkBelow, WalkShort, MinFreeStages and the queries allocate nothing. The
// tree's nodes are reused once emptied, so reserving and releasing allocate nothing in
// a steady state.
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
