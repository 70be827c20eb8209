package cluster_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
)

func TestTaskClassString(t *testing.T) {
	for _, tc := range []struct {
		c    cluster.TaskClass
		want string
	}{
		{cluster.Batch, "batch"},
		{cluster.LatencySensitive, "latency-sensitive"},
		{2, "TaskClass(2)"},
		{255, "TaskClass(255)"},
	} {
		assert.Equal(t, tc.want, tc.c.String())
	}
	assert.Equal(t, cluster.Batch, cluster.TaskClass(0), "the zero value is batch")
}

func TestParseTaskClass(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want cluster.TaskClass
		ok   bool
	}{
		{"batch", cluster.Batch, true},
		{"Batch", cluster.Batch, true},
		{"BATCH", cluster.Batch, true},
		{"BE", cluster.Batch, true},
		{"be", cluster.Batch, true},
		{"latency-sensitive", cluster.LatencySensitive, true},
		{"Latency-Sensitive", cluster.LatencySensitive, true},
		{"LS", cluster.LatencySensitive, true},
		{"ls", cluster.LatencySensitive, true},
		{" LS\t", cluster.LatencySensitive, true},
		{"", 0, false},
		{"latency sensitive", 0, false},
		{"Burstable", 0, false},
		{"Guaranteed", 0, false},
		{"TaskClass(2)", 0, false},
		{"LSE", 0, false},
		{"b", 0, false},
		{"l\u017f", 0, false}, // ſ, which Unicode case folding matches with s
		{"batch\x00", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := cluster.ParseTaskClass(tc.in)
			if !tc.ok {
				require.ErrorIs(t, err, cluster.ErrInvalid)
				assert.Contains(t, err.Error(), "task class")
				assert.Contains(t, err.Error(), strconv.Quote(tc.in), "the error quotes the value")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// Every class String names, ParseTaskClass reads back; every other value's name it
// refuses.
func TestTaskClassRoundTrip(t *testing.T) {
	for v := range 256 {
		c := cluster.TaskClass(v)
		got, err := cluster.ParseTaskClass(c.String())
		if c == cluster.Batch || c == cluster.LatencySensitive {
			require.NoError(t, err, "class %d", v)
			assert.Equal(t, c, got)
			continue
		}
		require.ErrorIs(t, err, cluster.ErrInvalid, "class %d", v)
	}
}

// FuzzParseTaskClass checks that ParseTaskClass never panics, accepts exactly the
// four names in any case (spaces around ignored), refuses everything else with an
// error wrapping ErrInvalid, and that what it accepts String writes back as a name
// it reads as the same class.
func FuzzParseTaskClass(f *testing.F) {
	for _, s := range []string{"batch", "latency-sensitive", "BE", "LS", "ls ", "", "Burstable", "TaskClass(7)", "\xff", "LATENCY-SENSITIVE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := cluster.ParseTaskClass(s)
		norm := strings.ToLower(strings.TrimSpace(s))
		known := norm == "batch" || norm == "be" || norm == "latency-sensitive" || norm == "ls"
		if (err == nil) != known {
			t.Fatalf("ParseTaskClass(%q): %v, %v", s, c, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "task class") {
				t.Fatalf("ParseTaskClass(%q): error %q names no field", s, err)
			}
			if c != cluster.Batch {
				t.Fatalf("ParseTaskClass(%q) failed with class %v", s, c)
			}
			return
		}
		if c != cluster.Batch && c != cluster.LatencySensitive {
			t.Fatalf("ParseTaskClass(%q) = %d, not a class", s, c)
		}
		back, err := cluster.ParseTaskClass(c.String())
		if err != nil || back != c {
			t.Fatalf("ParseTaskClass(%q) = %v, which reads back as %v, %v", s, c, back, err)
		}
	})
}

func TestSubmitClassAndSLO(t *testing.T) {
	withClass := func(id string, c cluster.TaskClass, slo time.Duration) cluster.TaskSpec {
		sp := task(id, "j", 1, 1)
		sp.Class, sp.SLO = c, slo
		return sp
	}
	for _, tc := range []struct {
		name string
		spec cluster.TaskSpec
		want []string // what the error names; nil: accepted
	}{
		{"batch", withClass("t", cluster.Batch, 0), nil},
		{"latency-sensitive with an SLO", withClass("t", cluster.LatencySensitive, 90*time.Second), nil},
		{"latency-sensitive without an SLO", withClass("t", cluster.LatencySensitive, 0), nil},
		{"unknown class", withClass("t", 2, 0), []string{`task "t"`, "class TaskClass(2)"}},
		{"unknown class with an SLO", withClass("t", 9, time.Second), []string{`task "t"`, "class TaskClass(9)"}},
		{"negative SLO", withClass("t", cluster.LatencySensitive, -time.Second), []string{`task "t"`, "SLO -1s"}},
		{"negative SLO on a batch task", withClass("t", cluster.Batch, -1), []string{`task "t"`, "SLO -1ns"}},
		{"SLO on a batch task", withClass("t", cluster.Batch, time.Minute), []string{`task "t"`, "SLO 1m0s", "batch task"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newState(t)
			addNode(t, s, "n1", "")
			addJob(t, s, "j")
			old := submit(t, s, task("old", "j", 2, 2))
			before := fingerprint(s, old)
			err := s.Submit(task("ok", "j", 1, 1), tc.spec, task("after", "j", 1, 1))
			if tc.want != nil {
				require.ErrorIs(t, err, cluster.ErrInvalid)
				for _, w := range tc.want {
					assert.Contains(t, err.Error(), w)
				}
				require.ErrorIs(t, s.Check(tc.spec), cluster.ErrInvalid, "Check refuses what Submit refuses")
				assert.Equal(t, 1, s.Count(cluster.Pending), "a failing Submit adds none of the batch")
				for _, id := range []string{"ok", "t", "after"} {
					_, ok := s.Task(id)
					assert.False(t, ok, "task %s", id)
				}
				assert.Empty(t, diff(before, fingerprint(s, old)))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 4, s.Count(cluster.Pending))
			tk, ok := s.Task("t")
			require.True(t, ok)
			assert.Equal(t, tc.spec.Class, tk.Class())
			assert.Equal(t, tc.spec.SLO, tk.SLO())
			sp := tk.Spec()
			assert.Equal(t, tc.spec.Class, sp.Class, "Spec gives the class back")
			assert.Equal(t, tc.spec.SLO, sp.SLO, "Spec gives the SLO back")
			assert.Equal(t, tc.spec.Class, tk.View().Class(), "a view has the class")
			assert.Equal(t, tc.spec.SLO, tk.View().SLO(), "a view has the SLO")
			other, _ := s.Task("ok")
			assert.Equal(t, cluster.Batch, other.Class(), "a task that says nothing is batch")
			assert.Zero(t, other.SLO())
		})
	}
}

// A backup attempt is its task run again: it has the task's class and SLO, and
// neither changes when it is committed or when the task it backs up finishes.
func TestBackupKeepsClassAndSLO(t *testing.T) {
	for _, tc := range []struct {
		name  string
		class cluster.TaskClass
		slo   time.Duration
	}{
		{"batch", cluster.Batch, 0},
		{"latency-sensitive", cluster.LatencySensitive, 0},
		{"latency-sensitive with an SLO", cluster.LatencySensitive, 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newState(t)
			n1 := addNode(t, s, "n1", "")
			n2 := addNode(t, s, "n2", "")
			addJob(t, s, "j")
			sp := task("t", "j", 1, 1)
			sp.Class, sp.SLO = tc.class, tc.slo
			tk := submit(t, s, sp)[0]
			place(t, s, tk, n1, 0)
			b, err := s.ReserveBackup(tk, n2, held(tk, 0))
			require.NoError(t, err)
			assert.Equal(t, tc.class, b.Class())
			assert.Equal(t, tc.slo, b.SLO())
			require.NoError(t, s.Commit(b))
			assert.Equal(t, tc.class, b.Class())
			assert.Equal(t, tc.slo, b.SLO())
			assert.Equal(t, tc.class, tk.Class())
			assert.Equal(t, tc.slo, tk.SLO())
		})
	}
}
