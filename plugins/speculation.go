package plugins

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/speculate"
)

// Speculation (Pass) is speculative execution (docs/methods.md §8–9): after the
// locality strategy's passes, while the node has room, the jobs with running tasks
// and none pending are visited in priority then submission order (as Hadoop's
// schedulers offer speculation to the earlier job), and the speculator (LATE, PRRL or
// your own) decides whether one of each job's running tasks gets a backup attempt on
// the node (framework.Cycle.TryBackup: the same steps as a task). The speculator sees
// each job's own progress model (cluster.WithJobProgress), the tasks already backed
// up, and as nodes not to back up on each task's own node and the nodes where its
// backups failed; PRRL also sees the other jobs' running tasks as slots that free
// when their time left is up.
type Speculation struct{ speculator speculate.Speculator }

// NewSpeculation returns the speculation pass asking sp.
func NewSpeculation(sp speculate.Speculator) (*Speculation, error) {
	if sp == nil {
		return nil, fmt.Errorf("plugins: speculation: nil speculator: %w", cluster.ErrInvalid)
	}
	return &Speculation{speculator: sp}, nil
}

// Name implements framework.Plugin.
func (*Speculation) Name() string { return "Speculation" }

// Pass implements framework.PassPlugin.
func (p *Speculation) Pass(c *framework.Cycle, n *cluster.NodeInfo) error {
	st := c.State()
	var candidates []*cluster.JobInfo
	for j := range st.BusyJobs() {
		if len(j.Classes()) == 0 && j.Progress() != nil && j.Progress().Len() > 0 {
			candidates = append(candidates, j)
		}
	}
	slices.SortFunc(candidates, func(a, b *cluster.JobInfo) int {
		x, y := a.Spec(), b.Spec()
		if x.Priority != y.Priority {
			return cmp.Compare(y.Priority, x.Priority)
		}
		if x.Submitted != y.Submitted {
			return cmp.Compare(x.Submitted, y.Submitted)
		}
		return strings.Compare(x.ID, y.ID)
	})
	var busy []speculate.BusySlot
	busyDone := false
	for _, j := range candidates {
		if !c.Room() {
			return nil
		}
		if !busyDone {
			busy, busyDone = busySlots(st, c.Now(), false), true
		}
		req := speculate.Request{Node: n.ID(), Now: c.Now(), Busy: otherJobs(busy, j)}
		dec, err := p.speculator.Speculate(specJob(j), req)
		if err != nil {
			c.Warn("speculation failed", "job", j.ID(), "node", n.ID(), "err", err)
			continue
		}
		if dec.Action != speculate.Backup {
			continue
		}
		t, ok := st.Task(dec.Task)
		if !ok || t.State() != cluster.Running || t.Backup() != nil || t.BackupOf() != nil || t.Node() == n {
			continue
		}
		c.TryBackup(t)
	}
	return nil
}

// specJob is what the speculator reads of job j: its progress model, its backed-up
// tasks, and the nodes its running tasks may not be backed up on.
func specJob(j *cluster.JobInfo) speculate.Job {
	sj := speculate.Job{Tasks: j.Progress(), Backups: map[string]bool{}, FailedOn: map[string][]string{}}
	for _, t := range j.Running() {
		if t.Backup() != nil {
			sj.Backups[t.ID()] = true
		}
		sj.FailedOn[t.ID()] = append(slices.Clip(t.FailedOn()), t.Node().ID())
	}
	return sj
}

// otherJobs is busy without job j's own tasks (the speculator counts those itself).
func otherJobs(busy []speculate.BusySlot, j *cluster.JobInfo) []speculate.BusySlot {
	if j.NumRunning() == 0 {
		return busy
	}
	out := make([]speculate.BusySlot, 0, len(busy))
	for _, b := range busy {
		if !j.IsRunning(b.Task) {
			out = append(out, b)
		}
	}
	return out
}
