package plugin

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
)

// A pod whose resize the kubelet found infeasible is not resized again for five
// minutes of the plugin's clock.
func TestResizeBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))
	a := DefaultArgs()
	a.UsageSource, a.ScaleUp = UsageSourceAnnotation, &ScaleUpArgs{}
	a = a.withDefaults()
	p, err := newPlugin(t.Context(), a, nil, options{clock: clk})
	require.NoError(t, err)
	p.scale.pending["t"] = &pendingResize{infeasible: "no room", action: finegrain.ScaleAction{Task: "t"}}
	p.setBackInfeasible(context.Background())
	assert.Equal(t, infeasibleBackoff, p.resizeBackoff("t"))
	clk.Step(4 * time.Minute)
	assert.Equal(t, time.Minute, p.resizeBackoff("t"))
	clk.Step(time.Minute)
	assert.Zero(t, p.resizeBackoff("t"))
	assert.Empty(t, p.scale.backoff, "forgotten once over")
}

// A move — which the plugin's own configuration never plans, and Kubernetes cannot
// make — is not carried out, and the books are set back: the straggler is on its old
// node with its old allocation. Here the Scheduler plans moves.
func TestMoveIsNotCarriedOut(t *testing.T) {
	a := DefaultArgs()
	a.UsageSource, a.ScaleUp, a.CheckpointInterval = UsageSourceAnnotation, &ScaleUpArgs{}, &metav1.Duration{}
	a = a.withDefaults()
	clk := clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))
	p, err := newPlugin(t.Context(), a, nil, options{clock: clk})
	require.NoError(t, err)
	gib := int64(1) << 30
	p.sched, err = finegrain.New(p.scheme.schema, finegrain.WithPrediction(false),
		finegrain.WithScaleUp(finegrain.ScaleUpConfig{IdleOnly: true}))
	require.NoError(t, err)
	s := p.sched
	for _, n := range []string{"n1", "n2"} {
		require.NoError(t, s.AddNode(finegrain.Node{ID: n, Capacity: resource.Tuple{8000, 16 * gib}}))
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "web", Job: "j", Request: resource.Tuple{2000, 2 * gib}, Class: finegrain.LatencySensitive, SLO: 10 * time.Second},
		finegrain.Task{ID: "etl", Job: "j", Request: resource.Tuple{6000, 8 * gib}}))
	for _, id := range []string{"web", "etl"} {
		_, err := s.Reserve(id, "n1", 0)
		require.NoError(t, err)
		_, err = s.Commit(id, 0)
		require.NoError(t, err)
	}
	p.pods["web"] = &podRecord{namespace: "default", name: "web", uid: "uid-web", node: "n1"}
	for i, x := range []float64{0.1, 0.2, 0.25, 0.3} {
		require.NoError(t, s.Progress("web", x, time.Duration(i+1)*time.Second))
	}
	clk.Step(4 * time.Second)
	p.scale.started.Store(true)
	p.scaleRound(context.Background())
	al, err := s.Allocation("web", 4*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "n1", al.Node, "moved back in the books")
	assert.Equal(t, resource.Tuple{2000, 2 * gib}, al.Held)
	free, err := s.NodeFree("n2", 4*time.Second)
	require.NoError(t, err)
	assert.Equal(t, resource.Tuple{8000, 16 * gib}, free)
	assert.Equal(t, moveUnsupported, p.scale.said["web"], "said why")
}
