package speculate

import (
	"fmt"

	"github.com/finegrain/finegrain/predict"
)

// LATE is the Longest Approximate Time to End speculator (Zaharia et al., OSDI 2008;
// docs/methods.md §8, PRRL thesis §2.3.2), as Hadoop 0.21 runs it. When a free resource
// on a node asks a job for work:
//
//  0. a job with unstarted tasks runs one of those (Hadoop schedules new tasks before
//     backups);
//  1. the node must not be slow (eq. 2.1, see below);
//  2. fewer backups than speculativeCap × running tasks may be running (eq. 2.2);
//  3. the candidates are the running tasks that did not fail on this node before, have
//     no backup running, have run longer than the minimum runtime, and are slow (eq.
//     2.3 / 3.3, predict.IsSlowTask);
//  4. the candidate with the largest time left (eq. 2.4 / 3.4) is backed up; ties go to
//     the smallest task ID.
//
// Progress, rates and time left come from the job's predict.RuntimeEstimator (eq.
// 3.1–3.4); LATE only reads them. One decision costs one pass over the running tasks,
// O(n).
//
// Reading (eq. 2.1): the thesis prints the slow-node test as
// mean(node) − mean(all) ≤ σ × slowNodeThreshold over progress rates, which would reject
// fast nodes and accept slow ones; Hadoop evaluates that inequality over task durations,
// where it rejects slow nodes, as LATE intends. With rates we use the same test turned
// the right way: a node may host a backup unless mean(all) − mean(node) > σ ×
// slowNodeThreshold, where mean(node) is the mean rate of the job's tasks finished on
// the node, mean(all) and σ those of all the job's finished tasks. A node that finished
// none of them is not slow (as in Hadoop).
//
// A LATE is immutable and safe for concurrent use.
type LATE struct {
	cfg config
}

// NewLATE returns a LATE speculator with Hadoop's defaults (speculativeCap 0.1,
// slowTaskThreshold 1.0, slowNodeThreshold 1.0, minimum runtime 60 s) changed by opts.
// It fails on an invalid option.
func NewLATE(opts ...Option) (*LATE, error) {
	cfg, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	return &LATE{cfg: cfg}, nil
}

// Speculate implements Speculator. It fails when job.Tasks is nil, job.Unstarted is
// negative, req.Node is empty or req.Now negative, or when the estimator reports a
// progress outside [0, 1], a negative or non-finite rate or time, or duplicate tasks.
func (l *LATE) Speculate(job Job, req Request) (Decision, error) {
	if err := checkRequest(job, req); err != nil {
		return Decision{}, err
	}
	if job.Unstarted > 0 {
		return Decision{Action: RunUnstarted, Reason: ReasonUnstarted}, nil
	}
	s := getScratch()
	defer putScratch(s)
	snap, err := load(job, req, s)
	if err != nil {
		return Decision{}, err
	}
	if len(snap.tasks) == 0 {
		return Decision{Reason: ReasonNoSlowTask}, nil
	}
	fin := snap.finished
	if st, ok := job.Tasks.NodeRate(req.Node); ok && st.N > 0 {
		if f, v := checkStats(st); f != "" {
			return Decision{}, fieldErr(fmt.Sprintf("Job.Tasks.NodeRate(%q).%s", req.Node, f), v, ErrInvalidValue)
		}
		if l.slowNode(st, fin) {
			return Decision{Reason: ReasonSlowNode}, nil
		}
	}
	if l.cfg.atCap(snap.backups, len(snap.tasks)) {
		return Decision{Reason: ReasonAtCap}, nil
	}
	best, n := -1, 0
	for i := range snap.tasks {
		t := &snap.tasks[i]
		if !l.cfg.candidate(job, req.Node, t, fin) {
			continue
		}
		n++
		if best < 0 || t.TimeLeft > snap.tasks[best].TimeLeft {
			best = i // tasks come in ascending ID order: ties keep the smaller ID
		}
	}
	if best < 0 {
		return Decision{Reason: ReasonNoSlowTask}, nil
	}
	t := snap.tasks[best]
	rate := fin.Mean
	if st, ok := job.Tasks.NodeRate(req.Node); ok && st.N > 0 {
		rate = st.Mean
	}
	return Decision{
		Action:    Backup,
		Reason:    ReasonBackup,
		Task:      t.Task,
		TimeLeft:  t.TimeLeft,
		Finish:    backupFinish(rate, 0),
		SlowTasks: n,
	}, nil
}

// SlowNode reports whether LATE's eq. 2.1 (in the Reading stated on LATE) keeps node
// from hosting a backup for the job whose progress model is est.
func (l *LATE) SlowNode(est predict.RuntimeEstimator, node string) (bool, error) {
	if est == nil {
		return false, fieldErr("estimator", "nil", ErrInvalidValue)
	}
	if node == "" {
		return false, fieldErr("node", node, ErrEmptyID)
	}
	fin := est.Finished()
	if f, v := checkStats(fin); f != "" {
		return false, fieldErr("Finished()."+f, v, ErrInvalidValue)
	}
	st, ok := est.NodeRate(node)
	if !ok || st.N == 0 {
		return false, nil
	}
	if f, v := checkStats(st); f != "" {
		return false, fieldErr(fmt.Sprintf("NodeRate(%q).%s", node, f), v, ErrInvalidValue)
	}
	return l.slowNode(st, fin), nil
}

func (l *LATE) slowNode(node, all predict.RateStats) bool {
	return all.Mean-node.Mean > all.Std*l.cfg.slowNode
}

var _ Speculator = (*LATE)(nil)
