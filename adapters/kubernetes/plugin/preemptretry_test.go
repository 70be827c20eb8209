package plugin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/finegrain/finegrain"
)

// slowPostBind holds a pod's PostBind back for a while, before FineGrain's: the pod
// is bound in the API and still Reserved in finegrain, as it is for a moment on a
// busy scheduler.
type slowPostBind struct{ pod string }

func (slowPostBind) Name() string { return "SlowPostBind" }

func (s slowPostBind) PostBind(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	if pod.Name == s.pod {
		time.Sleep(500 * time.Millisecond)
	}
}

// A preemptor tried while its would-be victim is bound but not yet committed finds
// nothing to evict (finegrain evicts only running pods); once the victim is
// committed it is tried again, and preempts. (Before, it waited in the
// unschedulable queue for an unrelated event, up to the queue's five-minute flush:
// TestPreemptorWaitsForItsVictims and TestPreemptionEvictsByTimeline timed out when
// a busy machine delayed PostBind so.)
func TestPreemptorRetriedWhenItsVictimIsCommitted(t *testing.T) {
	slow := slowPostBind{pod: "low"}
	c := startCluster(t, setup{extra: []extraPlugin{{name: slow.Name(), factory: func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return slow, nil }}}})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "low", cpu: "1", mem: "6Gi"})
	c.waitFor("low to be bound in the API", func() bool { return c.get("low").Spec.NodeName != "" }) // not waitBound: it waits for the commit
	st, _ := c.plugin.Scheduler().TaskState("uid-low")
	assert.Equal(t, finegrain.Reserved, st, "bound, and PostBind held back")
	c.create(pod{name: "high", cpu: "1", mem: "6Gi", priority: 1000})
	assert.Equal(t, "n1", c.waitBound("high"))
	_, err := c.client.CoreV1().Pods(ns).Get(c.ctx, "low", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the victim was deleted: %v", err)
}
