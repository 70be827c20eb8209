package plugin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// snapshotPlugin is a plugin without a scheduler around it, with the wall clock
// replaced, and the NodeInfo of a node of 4 CPU and 8 GiB.
func snapshotPlugin(t *testing.T) (*plugin.Plugin, func(name string) fwk.NodeInfo) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	args := &runtime.Unknown{ContentType: runtime.ContentTypeJSON, Raw: []byte(`{"usageSource":"Annotation","checkpointInterval":"0s"}`)}
	pl, err := plugin.NewFactory(plugin.WithClock(clk))(context.Background(), args, nil)
	require.NoError(t, err)
	node := func(name string) fwk.NodeInfo {
		ni := schedframework.NewNodeInfo()
		ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: apiresource.MustParse("4"), v1.ResourceMemory: apiresource.MustParse("8Gi"), v1.ResourcePods: apiresource.MustParse("110"),
		}}})
		return ni
	}
	return pl.(*plugin.Plugin), node
}

func snapshotPod(name, mem string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: apiresource.MustParse("1"), v1.ResourceMemory: apiresource.MustParse(mem),
		}}}}},
	}
}

// TestFilterOnTheSnapshot: Filter and Score answer from the snapshot PreFilter took —
// a pod reserved on the node afterwards is not seen, and Reserve, which checks the
// node as it is, refuses the pod that no longer fits — and a node the plugin did not
// hold at PreFilter is added and asked about on the live state.
func TestFilterOnTheSnapshot(t *testing.T) {
	ctx := context.Background()
	p, node := snapshotPlugin(t)
	n1 := node("n1")
	// The plugin adds a node it does not hold when Filter first sees it.
	warm := snapshotPod("warm", "1Gi")
	cs := schedframework.NewCycleState()
	_, st := p.PreFilter(ctx, cs, warm, nil)
	require.True(t, st.IsSuccess(), "%v", st)
	require.True(t, p.Filter(ctx, cs, warm, n1).IsSuccess())

	a, b := snapshotPod("a", "5Gi"), snapshotPod("b", "5Gi")
	csA, csB := schedframework.NewCycleState(), schedframework.NewCycleState()
	_, st = p.PreFilter(ctx, csA, a, nil)
	require.True(t, st.IsSuccess(), "%v", st)
	_, st = p.PreFilter(ctx, csB, b, nil)
	require.True(t, st.IsSuccess(), "%v", st)
	require.True(t, p.Filter(ctx, csA, a, n1).IsSuccess())
	require.True(t, p.Reserve(ctx, csA, a, "n1").IsSuccess())

	// b's snapshot was taken before a was reserved: n1 still has room there.
	assert.True(t, p.Filter(ctx, csB, b, n1).IsSuccess(), "the snapshot is of n1 before a")
	_, st = p.Score(ctx, csB, b, n1)
	assert.True(t, st.IsSuccess())
	st = p.Reserve(ctx, csB, b, "n1")
	assert.Equal(t, fwk.Unschedulable, st.Code(), "Reserve checks n1 as it is: %v", st)
	held, _ := p.Scheduler().TaskState("uid-b")
	assert.Equal(t, finegrain.Pending, held)

	// The next cycle's snapshot sees a on n1.
	csB = schedframework.NewCycleState()
	_, st = p.PreFilter(ctx, csB, b, nil)
	require.True(t, st.IsSuccess(), "%v", st)
	assert.False(t, p.Filter(ctx, csB, b, n1).IsSuccess())

	// A node added after PreFilter: asked about on the live state.
	n2 := node("n2")
	assert.True(t, p.Filter(ctx, csB, b, n2).IsSuccess())
	x, st := p.Score(ctx, csB, b, n2)
	assert.True(t, st.IsSuccess())
	assert.Positive(t, x)
	assert.True(t, p.Reserve(ctx, csB, b, "n2").IsSuccess())
}
