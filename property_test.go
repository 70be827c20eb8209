package finegrain_test

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// TestNoTaskLost drives the scheduler with random event sequences — submissions,
// heartbeats, push placements, finishes with observations, failures, cancellations,
// node removals — and checks after every event that each submitted task is in exactly
// the state the events imply, that the counts add up, and that no node's memory (not
// compressible) is reserved beyond its capacity at any time.
func TestNoTaskLost(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 200
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with params.SetSeed(seed)).
	props := gopter.NewProperties(params)
	props.Property("every task in exactly one state; memory never over-reserved", prop.ForAll(func(seed int64) string {
		return runEvents(seed, 120)
	}, gen.Int64()))
	props.TestingRun(t)
}

func runEvents(seed int64, steps int) string {
	r := rand.New(rand.NewSource(seed))
	opts := []finegrain.Option{}
	if r.Intn(2) == 0 {
		opts = append(opts, finegrain.WithoutDelayScheduling())
	}
	if r.Intn(3) == 0 {
		opts = append(opts, finegrain.WithoutPrediction())
	}
	if r.Intn(3) == 0 {
		opts = append(opts, finegrain.WithFutureStart(true))
	}
	if r.Intn(4) == 0 {
		placer, err := speculate.NewFairPlacer()
		if err != nil {
			return err.Error()
		}
		opts = append(opts, finegrain.WithPreReleaseList(placer))
	}
	if r.Intn(3) == 0 {
		late, err := speculate.NewLATE(speculate.WithMinRuntime(0))
		if err != nil {
			return err.Error()
		}
		opts = append(opts, finegrain.WithSpeculation(late))
	}
	s, err := finegrain.New(schema, opts...)
	if err != nil {
		return err.Error()
	}
	var nodes []string
	addNode := func(i int) {
		id := fmt.Sprintf("n%d", i)
		if s.AddNode(finegrain.Node{ID: id, Rack: fmt.Sprintf("r%d", i%2), Capacity: schema.MustTuple(int64(2000+r.Intn(4)*1000), int64(2+r.Intn(6))*gib)}) == nil {
			nodes = append(nodes, id)
		}
	}
	for i := 0; i < 3; i++ {
		addNode(i)
	}
	for j := 0; j < 3; j++ {
		if err := s.SubmitJob(finegrain.Job{ID: fmt.Sprintf("j%d", j), Submitted: time.Duration(j)}); err != nil {
			return err.Error()
		}
	}
	want := map[string]finegrain.TaskState{}
	backups := map[string]string{}    // running backup → its task
	backupNode := map[string]string{} // running backup → its node
	dropBackupOf := func(id string) {
		for b, of := range backups {
			if of == id {
				delete(backups, b)
				delete(backupNode, b)
			}
		}
	}
	var ids []string
	starts := map[string]time.Duration{} // placed task or backup → its reservation's start
	now := time.Duration(0)
	byState := func(st finegrain.TaskState) []string {
		var out []string
		for _, id := range ids {
			if want[id] == st {
				out = append(out, id)
			}
		}
		return out
	}
	pick := func(list []string) string { return list[r.Intn(len(list))] }
	for step := 0; step < steps; step++ {
		now += time.Duration(r.Intn(3000)) * time.Millisecond
		switch op := r.Intn(10); {
		case op < 3:
			id := fmt.Sprintf("t%d", len(ids))
			task := finegrain.Task{ID: id, Job: fmt.Sprintf("j%d", r.Intn(3)), Submitted: now,
				Request: schema.MustTuple(int64(500+r.Intn(3)*500), int64(1+r.Intn(3))*gib/2)}
			if r.Intn(2) == 0 {
				task.Key = predict.Key{Logic: fmt.Sprintf("app%d", r.Intn(2)), InputSize: 1}
			}
			if r.Intn(3) == 0 {
				task.Duration = time.Duration(1+r.Intn(20)) * time.Second
			}
			if r.Intn(2) == 0 && len(nodes) > 0 {
				task.Inputs = []string{pick(nodes)}
			}
			if err := s.Submit(task); err != nil {
				return "submit: " + err.Error()
			}
			ids = append(ids, id)
			want[id] = finegrain.Pending
		case op < 5 && len(nodes) > 0:
			d, err := s.Heartbeat(pick(nodes), now)
			if err != nil {
				return "heartbeat: " + err.Error()
			}
			for _, a := range d.Assignments {
				if a.BackupOf != "" {
					if want[a.BackupOf] != finegrain.Running || a.Task != finegrain.BackupID(a.BackupOf) {
						return "backup of a task that is not running: " + a.Task
					}
					if _, dup := backups[a.Task]; dup {
						return "second backup of " + a.BackupOf
					}
					backups[a.Task], backupNode[a.Task] = a.BackupOf, a.Node
					starts[a.Task] = a.Start
					continue
				}
				if want[a.Task] != finegrain.Pending {
					return "heartbeat started a task that was not pending: " + a.Task
				}
				want[a.Task] = finegrain.Running
				starts[a.Task] = a.Start
			}
		case op < 6 && r.Intn(3) == 0:
			if run := byState(finegrain.Running); len(run) > 0 {
				// Progress of a task placed with a future start may come before it;
				// only reports the scheduler rejects as out of order are allowed to fail.
				err := s.Progress(pick(run), r.Float64(), now)
				if err != nil && !errors.Is(err, predict.ErrBadProgress) && !errors.Is(err, predict.ErrBadTime) {
					return "progress: " + err.Error()
				}
			}
		case op < 6:
			if p := byState(finegrain.Pending); len(p) > 0 {
				id := pick(p)
				if a, err := s.Place(id, now); err == nil {
					want[id] = finegrain.Running
					starts[id] = a.Start
					if a.Task != id {
						return "placed the wrong task"
					}
				}
			}
		case op < 8:
			if run := byState(finegrain.Running); len(run) > 0 {
				id := pick(run)
				for b, of := range backups {
					if of == id && r.Intn(2) == 0 {
						id = b // the backup finishes first
					}
				}
				var obs *predict.Observation
				if r.Intn(2) == 0 {
					obs = &predict.Observation{Profile: stage.MustProfile(schema,
						stage.Stage{Duration: time.Duration(1+r.Intn(10)) * time.Second, Demand: schema.MustTuple(int64(r.Intn(2000)), int64(r.Intn(3))*gib/2)})}
				}
				// The task may have been placed with a future start: finish no earlier,
				// and time moves on to then (it never goes back).
				now = max(now, starts[id])
				err := s.Finished(id, now, obs)
				if err != nil {
					return "finish: " + err.Error()
				}
				if of, ok := backups[id]; ok {
					id = of
				}
				dropBackupOf(id)
				want[id] = finegrain.Finished
			}
		case op < 9:
			if run := byState(finegrain.Running); len(run) > 0 && r.Intn(2) == 0 {
				id := pick(run)
				for b, of := range backups {
					if of == id && r.Intn(2) == 0 {
						if err := s.Failed(b, now); err != nil {
							return "backup fail: " + err.Error()
						}
						delete(backups, b)
						delete(backupNode, b)
						id = ""
					}
				}
				if id == "" {
					break
				}
				if err := s.Failed(id, now); err != nil {
					return "fail: " + err.Error()
				}
				dropBackupOf(id)
				want[id] = finegrain.Pending
			} else if len(ids) > 0 {
				id := pick(ids)
				err := s.Cancel(id, now)
				switch want[id] {
				case finegrain.Pending, finegrain.Running:
					if err != nil {
						return "cancel: " + err.Error()
					}
					dropBackupOf(id)
					want[id] = finegrain.Cancelled
				default:
					if err == nil {
						return "cancel of a finished task succeeded"
					}
				}
			}
		default:
			if len(nodes) > 0 && r.Intn(3) == 1 {
				load := schema.MustTuple(int64(r.Intn(3000)), int64(r.Intn(4))*gib)
				held, err := s.SetExternalLoad(pick(nodes), now, load)
				if err != nil || !load.Covers(held) {
					return fmt.Sprintf("external load %v held %v: %v", load, held, err)
				}
			}
			if len(nodes) > 1 && r.Intn(3) == 0 {
				i := r.Intn(len(nodes))
				requeued, err := s.RemoveNode(nodes[i], now)
				if err != nil {
					return "remove: " + err.Error()
				}
				for _, id := range requeued {
					if want[id] != finegrain.Running {
						return "requeued a task that was not running"
					}
					dropBackupOf(id)
					want[id] = finegrain.Pending
				}
				for b, n := range backupNode {
					if n == nodes[i] {
						delete(backups, b)
						delete(backupNode, b)
					}
				}
				nodes = append(nodes[:i], nodes[i+1:]...)
				addNode(100 + step)
			}
		}
		if msg := checkState(s, ids, want, nodes); msg != "" {
			return fmt.Sprintf("step %d: %s", step, msg)
		}
		for _, id := range ids {
			st, ok := s.State(finegrain.BackupID(id))
			if _, running := backups[finegrain.BackupID(id)]; running != (ok && st == finegrain.Running) {
				return fmt.Sprintf("step %d: backup of %s is %v (known %v), want running %v", step, id, st, ok, running)
			}
		}
	}
	return ""
}

func checkState(s *finegrain.Scheduler, ids []string, want map[string]finegrain.TaskState, nodes []string) string {
	var n [5]int
	for _, id := range ids {
		got, ok := s.State(id)
		if !ok || got != want[id] {
			return fmt.Sprintf("task %s is %v, want %v", id, got, want[id])
		}
		n[got]++
	}
	p, r, f, c := s.Counts()
	if p != n[finegrain.Pending] || r != n[finegrain.Running] || f != n[finegrain.Finished] || c != n[finegrain.Cancelled] || p+r+f+c != len(ids) {
		return fmt.Sprintf("counts %d/%d/%d/%d disagree with %v", p, r, f, c, n)
	}
	for _, id := range nodes {
		segs, err := s.FreeSegments(id, 0, stage.Forever)
		if err != nil {
			return err.Error()
		}
		for _, seg := range segs {
			if seg.Free[1] < 0 {
				return fmt.Sprintf("node %s: memory over-reserved over [%v, %v): %v", id, seg.Start, seg.End, seg.Free)
			}
		}
	}
	return ""
}
