// Command fig1 replays the FGM paper's motivating example (docs/methods.md §7, Fig. 1–3)
// through the reference Scheduler: one server of 4 cores and 8 GB, tasks A1, A2 and B1,
// placed by request (as YARN does) and by their stage profiles with at most 10% CPU
// compression (FGM), and prints both timelines.
//
// The paper's figures are not in its text; the instance (the same as match's
// motivating test) is consistent with it, one time unit being one second:
//
//	A1, A2   1 core, 2 GB for 1 unit, then 0.5 core, 1 GB for 2 units (request 1 core, 2 GB)
//	B1       2.2 cores, 2 GB for 1 unit, then 3 cores, 3 GB for 3 units (request 3 cores, 3 GB)
//
// By request A1 and A2 leave 2 cores; B1 needs 3 and waits until they end, and the
// work ends at 7. By stages, B1's first stage needs 2.2 cores where 2 are free, within
// the 10% allowance: all three start at once, the first stages share 4 cores among
// 4.2 demanded and stretch to 1.05 units (eq. 4), and the work ends at 4.05.
//
// Execution is a small fluid model: running tasks share CPU in proportion to demand
// when they demand more than the server has, and progress at the share they get.
//
//	go run ./examples/fig1
package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

const gb = 1 << 30

var schema = resource.MustSchema(resource.CPU, resource.Memory)

type task struct {
	id       string
	profile  stage.Profile
	start    float64 // seconds; -1 while waiting
	end      float64
	stage    int
	left     float64 // seconds of uncompressed work left in the current stage
	squeezed float64 // the largest compression it ran under
}

const synopsis = `
Replays the FGM paper's motivating example (Fig. 1-3) through the reference Scheduler:
tasks A1, A2 and B1 on one server of 4 cores and 8 GB, placed by request (as YARN does)
and by their stage profiles with at most 10% CPU compression (FGM); prints both
timelines and when the work ends.`

func main() {
	if err := cli.Parse(cli.NewFlags("fig1", synopsis), os.Args[1:]); err != nil {
		cli.Exit("fig1", err)
	}
	a := stage.MustProfile(schema,
		stage.Stage{Duration: time.Second, Demand: schema.MustTuple(1000, 2*gb)},
		stage.Stage{Duration: 2 * time.Second, Demand: schema.MustTuple(500, 1*gb)})
	b := stage.MustProfile(schema,
		stage.Stage{Duration: time.Second, Demand: schema.MustTuple(2200, 2*gb)},
		stage.Stage{Duration: 3 * time.Second, Demand: schema.MustTuple(3000, 3*gb)})
	profiles := map[string]stage.Profile{"A1": a, "A2": a, "B1": b}

	out := output.NewWriter(os.Stdout)
	for _, mode := range []struct {
		name string
		opts []finegrain.Option
		// declare: the scheduler sees the stage profile (FGM); otherwise only the request.
		declare bool
	}{
		{"request-based (YARN-like)", []finegrain.Option{finegrain.WithPrediction(false)}, false},
		{"fine-grained stages, ≤10% compression (FGM)", nil, true},
	} {
		tasks, end := run(profiles, mode.opts, mode.declare)
		fmt.Fprintf(out, "%s: the work ends at %.2f units\n", mode.name, end)
		printTimeline(out, tasks, end)
		fmt.Fprintln(out)
	}
	if err := out.Err(); err != nil {
		cli.Exit("fig1", err)
	}
}

// run places and executes the tasks on one server, heartbeating at every event.
func run(profiles map[string]stage.Profile, opts []finegrain.Option, declare bool) ([]*task, float64) {
	// Tasks are served in arrival order (FIFO), as the paper's example has them.
	sched, err := finegrain.New(schema, append(opts, finegrain.WithOrdering(fairness.FIFO{}), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))...)
	check(err)
	capacity := schema.MustTuple(4000, 8*gb)
	check(sched.AddNode(finegrain.Node{ID: "server", Capacity: capacity}))
	check(sched.SubmitJob(finegrain.Job{ID: "A"}))
	check(sched.SubmitJob(finegrain.Job{ID: "B", Submitted: 1}))
	var tasks []*task
	for i, id := range []string{"A1", "A2", "B1"} {
		p := profiles[id]
		t := finegrain.Task{ID: id, Job: id[:1], Request: p.Peak(), Submitted: time.Duration(i)}
		if declare {
			t.Profile = p
		}
		check(sched.Submit(t))
		tasks = append(tasks, &task{id: id, profile: p, start: -1})
	}
	byID := map[string]*task{}
	for _, t := range tasks {
		byID[t.id] = t
	}
	now := 0.0
	for {
		d, err := sched.Heartbeat("server", seconds(now))
		check(err)
		for _, as := range d.Assignments {
			t := byID[as.Task]
			t.start, t.left = now, t.profile.Stage(0).Duration.Seconds()
		}
		// CPU is shared in proportion to demand when over-committed (work is conserved,
		// eq. 3–4); memory never is (the scheduler does not over-commit it).
		var demand resource.Tuple
		var live []*task
		for _, t := range tasks {
			if t.start >= 0 && t.end == 0 {
				live = append(live, t)
				demand = demand.Add(t.profile.Stage(t.stage).Demand)
			}
		}
		if len(live) == 0 {
			break
		}
		share := math.Min(1, float64(capacity[0])/float64(demand[0]))
		dt := math.Inf(1)
		for _, t := range live {
			dt = math.Min(dt, t.left/share)
			t.squeezed = math.Max(t.squeezed, 1-share)
		}
		now += dt
		for _, t := range live {
			t.left -= share * dt
			if t.left > 1e-9 {
				continue
			}
			if t.stage++; t.stage < t.profile.Len() {
				t.left = t.profile.Stage(t.stage).Duration.Seconds()
				continue
			}
			t.end = now
			check(sched.Finished(t.id, seconds(now), nil))
		}
	}
	return tasks, now
}

// printTimeline draws each task as a bar, ten columns a unit, to w.
func printTimeline(w io.Writer, tasks []*task, end float64) {
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].id < tasks[j].id })
	width := int(math.Ceil(end * 10))
	fmt.Fprintf(w, "      0%s%d\n", strings.Repeat(" ", width-1), int(math.Ceil(end)))
	for _, t := range tasks {
		from, to := int(math.Round(t.start*10)), int(math.Round(t.end*10))
		bar := strings.Repeat(" ", from) + strings.Repeat("█", to-from) + strings.Repeat(" ", width-to)
		fmt.Fprintf(w, "  %s  %s  %.2f–%.2f", t.id, bar, t.start, t.end)
		if t.squeezed > 0 {
			fmt.Fprintf(w, "  (compressed %.1f%% at worst)", 100*t.squeezed)
		}
		fmt.Fprintln(w)
	}
}

func seconds(x float64) time.Duration { return time.Duration(math.Round(x * float64(time.Second))) }

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
