// Package simrun runs an example's simulations in parallel, on a few goroutines, and
// counts their simulated tasks on one progress bar.
package simrun

import (
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/sim"
)

// MaxWorkers bounds the examples' -workers flag: simulations are CPU-bound, so more
// goroutines than CPUs gain nothing, and a huge value would only exhaust memory.
const MaxWorkers = 1024

// DefaultWorkers is the examples' default -workers: the number of CPUs, at most
// MaxWorkers.
func DefaultWorkers() int { return min(runtime.NumCPU(), MaxWorkers) }

// CheckWorkers refuses a -workers value outside [1, MaxWorkers] with a usage error.
func CheckWorkers(n int) error {
	if n < 1 || n > MaxWorkers {
		return cli.Usagef("-workers %d: must be in [1, %d]", n, MaxWorkers)
	}
	return nil
}

// Each calls run for every item, on workers goroutines (at least one, at most one per
// item), handing the items out in their order, and returns when every call has returned. run simulates
// its item and stores the outcome in it; Each reports nothing else.
//
// tasks(item) is the number of tasks item's simulation has; a progress bar, "N
// simulations", counts them towards their sum, drawn to w unless quiet or w is not a
// terminal (see cli.NewProgress). run passes progress to sim.Run so that the bar
// follows the simulation as it goes; whatever the simulation has not reported
// finished when run returns (a run stopped early) is counted then.
func Each[T any](w io.Writer, quiet bool, workers int, items []T, tasks func(T) int, run func(item T, progress sim.Option)) {
	total := 0
	for _, it := range items {
		total += tasks(it)
	}
	each(cli.NewProgress(w, total, fmt.Sprintf("%d simulations", len(items)), "tasks", quiet), workers, items, tasks, run)
}

// counter is what each counts finished tasks on: a *cli.Progress, or a test's.
type counter interface {
	Add(n int)
	Finish()
}

// each is Each counting on bar.
func each[T any](bar counter, workers int, items []T, tasks func(T) int, run func(item T, progress sim.Option)) {
	work := make(chan T)
	var wg sync.WaitGroup
	for i := 0; i < min(max(workers, 1), len(items)); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				done := 0
				run(it, sim.WithProgress(func(p sim.Progress) {
					bar.Add(p.Finished - done)
					done = p.Finished
				}))
				bar.Add(tasks(it) - done)
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
	bar.Finish()
}
