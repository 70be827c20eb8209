// Command quickstart is the smallest program that wires a scheduler from finegrain's
// blocks and drives it: two nodes, two jobs, tasks that are first placed by their
// request and, once similar tasks have finished, by their learned stage profile.
//
//	go run ./examples/quickstart
package main

import (
	"fmt"
	"log"
	"os"
	"sort"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

const synopsis = `
The smallest program that wires a scheduler from finegrain's blocks and drives it: two
nodes, two jobs, tasks placed first by their request and, once similar tasks have
finished, by their learned stage profile.`

func main() {
	if err := cli.Parse(cli.NewFlags("quickstart", synopsis), os.Args[1:]); err != nil {
		cli.Exit("quickstart", err)
	}
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, err := finegrain.New(s,
		finegrain.WithOrdering(fairness.DRF{}),                    // the default, spelled out
		finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), // no data locality in this example
	)
	if err != nil {
		log.Fatal(err)
	}
	for _, id := range []string{"node-a", "node-b"} {
		if err := sched.AddNode(finegrain.Node{ID: id, Capacity: s.MustTuple(8000, 16<<30)}); err != nil {
			log.Fatal(err)
		}
	}
	for _, j := range []string{"etl", "report"} {
		if err := sched.SubmitJob(finegrain.Job{ID: j}); err != nil {
			log.Fatal(err)
		}
	}
	// Each task asks for 2 cores and 4 GiB; in truth it uses 1.5 cores and 1 GiB for 10 s,
	// then 0.5 core and 3 GiB for 5 s.
	truth := stage.MustProfile(s,
		stage.Stage{Duration: 10 * time.Second, Demand: s.MustTuple(1500, 1<<30)},
		stage.Stage{Duration: 5 * time.Second, Demand: s.MustTuple(500, 3<<30)},
	)
	for i := 0; i < 24; i++ {
		job := []string{"etl", "report"}[i%2]
		err := sched.Submit(finegrain.Task{
			ID: fmt.Sprintf("%s-%d", job, i), Job: job,
			Key:     predict.Key{Logic: job + "/map", InputSize: 128 << 20},
			Request: s.MustTuple(2000, 4<<30),
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	// What a node agent samples of such a task, every second while it runs: the series
	// the estimator divides into stages (it is never told the stages).
	var sampled predict.Series
	for at := time.Duration(0); at < truth.Duration(); at += time.Second {
		sampled.Samples = append(sampled.Samples, predict.Sample{At: at, Usage: truth.At(at)})
	}
	sampled.End = truth.Duration()

	// Drive it like a cluster: every node heartbeats each second; tasks end after their
	// true duration and report what their node agent sampled.
	out := output.NewWriter(os.Stdout)
	running := map[string]time.Duration{} // task → finish time
	for now := time.Duration(0); ; now += time.Second {
		var done []string
		for id, end := range running {
			if end <= now {
				done = append(done, id)
			}
		}
		sort.Strings(done) // map order is random; keep runs identical
		for _, id := range done {
			if err := sched.Finished(id, now, &predict.Observation{Series: sampled}); err != nil {
				log.Fatal(err)
			}
			delete(running, id)
		}
		for _, node := range []string{"node-a", "node-b"} {
			d, err := sched.Heartbeat(node, now)
			if err != nil {
				log.Fatal(err)
			}
			for _, a := range d.Assignments {
				how := "by request"
				if a.Predicted {
					how = "by learned profile, " + a.Result.Code.String()
				}
				fmt.Fprintf(out, "t=%3v  %-9s → %s  (%s)\n", now, a.Task, a.Node, how)
				running[a.Task] = now + truth.Duration()
			}
		}
		if p, r, _, _ := sched.Counts(); p == 0 && r == 0 {
			fmt.Fprintln(out, "all done at", now)
			if err := out.Err(); err != nil {
				cli.Exit("quickstart", err)
			}
			return
		}
	}
}
