package cluster_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// FuzzSubmit builds a batch of up to six tasks from fuzzed input — IDs split from ids
// at NUL bytes, input nodes split from inputs at commas, durations, request amounts
// and key sizes that may be negative, jobs that may be unknown, declared profiles,
// latency-sensitive or batch tasks with SLOs that may be negative or on a batch task —
// and checks that Submit never panics, fails exactly when some task is invalid, and
// either adds the whole batch, each task pending and findable, or changes nothing.
func FuzzSubmit(f *testing.F) {
	f.Add([]byte("a\x00b\x00c"), "n1,n2", int64(time.Second), int64(1000), int64(2), int64(10), uint16(0))
	f.Add([]byte("a\x00a"), "", int64(0), int64(1), int64(1), int64(0), uint16(1))
	f.Add([]byte("old"), "n1", int64(5), int64(1), int64(1), int64(0), uint16(2))
	f.Add([]byte("x\x00\x00y"), "ghost", int64(1), int64(1), int64(1), int64(1), uint16(3))
	f.Add([]byte("t"), "n2", int64(-1), int64(1), int64(1), int64(1), uint16(4))
	f.Add([]byte("t\x00u"), "n1", int64(1), int64(-5), int64(1), int64(1), uint16(5))
	f.Add([]byte("t"), "n1", int64(1), int64(1), int64(1), int64(-1), uint16(6))
	f.Add([]byte("p\x00q\x00r\x00s"), "n1,n1,n2", int64(3), int64(0), int64(0), int64(7), uint16(0xffff))
	f.Add([]byte("big"), "n2", int64(1)<<62, int64(1)<<62, int64(1)<<62, int64(1)<<62, uint16(0x5555))
	f.Add([]byte("ls\x00ls2"), "n1", int64(1), int64(1), int64(1), int64(30), uint16(0xb000)) // latency-sensitive, with SLOs
	f.Add([]byte("ls\x00be"), "n1", int64(1), int64(1), int64(1), int64(30), uint16(0x9000))  // an SLO on a batch task
	f.Add([]byte("ls"), "n1", int64(1), int64(1), int64(1), int64(0), uint16(0x1000))         // latency-sensitive, no SLO
	f.Fuzz(func(t *testing.T, ids []byte, inputs string, dur, cpu, mem, size int64, flags uint16) {
		s, err := cluster.New(schema)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []cluster.NodeSpec{{ID: "n1", Rack: "r1", Capacity: capacity}, {ID: "n2", Rack: "r2", Capacity: capacity}} {
			if err := s.AddNode(n); err != nil {
				t.Fatal(err)
			}
		}
		for _, j := range []string{"j0", "j1"} {
			if err := s.AddJob(cluster.JobSpec{ID: j}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Submit(cluster.TaskSpec{ID: "old", Job: "j0", Request: tup(1, 1)}); err != nil {
			t.Fatal(err)
		}
		old, _ := s.Task("old")

		var in []string
		if inputs != "" {
			in = strings.Split(inputs, ",")
		}
		names := strings.Split(string(ids), "\x00")
		if len(names) > 6 {
			names = names[:6]
		}
		specs := make([]cluster.TaskSpec, len(names))
		valid := true
		seen := map[string]bool{"old": true}
		for i, id := range names {
			bit := func(k int) bool { return flags>>(uint(i*2+k)%16)&1 == 1 }
			sp := cluster.TaskSpec{
				ID:        id,
				Job:       "j0",
				Key:       predict.Key{Logic: "map", InputSize: size - int64(i)},
				Request:   resource.Tuple{cpu - int64(i), mem + int64(i)},
				Duration:  time.Duration(dur) * time.Duration(i+1),
				Inputs:    in,
				Priority:  i % 2,
				Submitted: time.Duration(i),
			}
			if bit(0) {
				sp.Job = "j1"
				if bit(1) {
					sp.Job = "nope"
				}
			}
			if bit(1) && !bit(0) {
				// A declared profile, when its fuzzed stage is a valid one.
				if p, err := stage.NewProfile(schema, stage.Stage{Duration: time.Duration(dur), Demand: resource.Tuple{mem, cpu}}); err == nil {
					sp.Profile = p
				}
			}
			// Bits 12 to 14 (the others' are below 12): latency-sensitive; bit 15: the
			// fuzzed key size as an SLO.
			if flags>>(12+i%3)&1 == 1 {
				sp.Class = cluster.LatencySensitive
			}
			if flags>>15&1 == 1 {
				sp.SLO = time.Duration(size)
			}
			specs[i] = sp
			valid = valid && id != "" && !seen[id] && sp.Job != "nope" && sp.Duration >= 0 &&
				sp.Key.InputSize >= 0 && sp.Request[0] >= 0 && sp.Request[1] >= 0 &&
				sp.SLO >= 0 && (sp.SLO == 0 || sp.Class == cluster.LatencySensitive)
			seen[id] = true
		}

		before := fingerprint(s, []*cluster.TaskInfo{old})
		pending := s.Count(cluster.Pending)
		err = s.Submit(specs...)
		if valid && err != nil && slices.Contains(in, "") && errors.Is(err, cluster.ErrInvalid) {
			valid = false // refusing an empty input node is as good as holding the task
		}
		if (err == nil) != valid {
			t.Fatalf("Submit of %+v: error %v, want success %v", specs, err, valid)
		}
		if err != nil {
			known := []error{cluster.ErrInvalid, cluster.ErrDuplicate, cluster.ErrUnknownJob, resource.ErrNegative}
			if !anyIs(err, known) {
				t.Fatalf("Submit error %v wraps none of the sentinels", err)
			}
			if got := s.Count(cluster.Pending); got != pending {
				t.Fatalf("a failing Submit changed Count(Pending) from %d to %d", pending, got)
			}
			if d := diff(before, fingerprint(s, []*cluster.TaskInfo{old})); d != "" {
				t.Fatalf("a failing Submit changed the state: %s", d)
			}
			for _, sp := range specs {
				if tk, ok := s.Task(sp.ID); ok && tk != old {
					t.Fatalf("a failing Submit added task %q", sp.ID)
				}
			}
			return
		}
		if got := s.Count(cluster.Pending); got != pending+len(specs) {
			t.Fatalf("Count(Pending) = %d after submitting %d to %d", got, len(specs), pending)
		}
		n1, _ := s.Node("n1")
		for _, jid := range []string{"j0", "j1"} {
			j, _ := s.Job(jid)
			want := map[string]bool{}
			for _, sp := range specs {
				if sp.Job == jid {
					want[sp.ID] = true
				}
			}
			if jid == "j0" {
				want["old"] = true
			}
			e, err := s.JobEntry(jid)
			if err != nil {
				t.Fatal(err)
			}
			classes := 0
			for _, c := range j.Classes() {
				classes += c.N
			}
			found := map[string]bool{}
			s.AscendPending(j, n1, fairness.OffSwitch, func(tk *cluster.TaskInfo, _ fairness.Level) bool {
				found[tk.ID()] = true
				return true
			})
			if e.Pending != len(want) || classes != len(want) || fmt.Sprint(found) != fmt.Sprint(want) {
				t.Fatalf("job %s: fairness pending %d, classes %d, pending index %v; submitted %v", jid, e.Pending, classes, found, want)
			}
		}
		for _, sp := range specs {
			tk, ok := s.Task(sp.ID)
			if !ok || tk.State() != cluster.Pending || tk.Job() != sp.Job || tk.Class() != sp.Class || tk.SLO() != sp.SLO {
				t.Fatalf("task %q: %v %v", sp.ID, tk, ok)
			}
		}
	})
}

func anyIs(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// FuzzGangJob adds a job with fuzzed MinMember and MaxDisrupted and submits a batch
// of fuzzed size to it: AddJob fails exactly on a negative setting, Submit exactly
// when the batch leaves a gang short of MinMember live tasks, and a failed call
// changes nothing.
func FuzzGangJob(f *testing.F) {
	f.Add(3, 0, uint8(3))
	f.Add(3, 1, uint8(2))
	f.Add(-1, 0, uint8(1))
	f.Add(0, -2, uint8(0))
	f.Add(1, 5, uint8(0))
	f.Add(1<<40, 0, uint8(255))
	f.Fuzz(func(t *testing.T, minMember, maxDisrupted int, n uint8) {
		s, err := cluster.New(schema)
		if err != nil {
			t.Fatal(err)
		}
		err = s.AddJob(cluster.JobSpec{ID: "g", MinMember: minMember, MaxDisrupted: maxDisrupted})
		if bad := minMember < 0 || maxDisrupted < 0; bad != (err != nil) {
			t.Fatalf("AddJob(min %d, max disrupted %d): %v", minMember, maxDisrupted, err)
		}
		if err != nil {
			if !errors.Is(err, cluster.ErrInvalid) || s.NumJobs() != 0 {
				t.Fatalf("refused job: %v, %d jobs held", err, s.NumJobs())
			}
			return
		}
		batch := make([]cluster.TaskSpec, int(n)%40)
		for i := range batch {
			batch[i] = cluster.TaskSpec{ID: fmt.Sprint("t", i), Job: "g", Request: tup(1, 1)}
		}
		err = s.Submit(batch...)
		short := minMember > 1 && len(batch) > 0 && len(batch) < minMember
		if short != (err != nil) {
			t.Fatalf("Submit of %d tasks to a gang of %d: %v", len(batch), minMember, err)
		}
		want := len(batch)
		if err != nil {
			want = 0
			if !errors.Is(err, cluster.ErrInvalid) {
				t.Fatalf("short gang: %v", err)
			}
		}
		if got := s.Count(cluster.Pending); got != want {
			t.Fatalf("%d pending after the submission, want %d", got, want)
		}
	})
}
