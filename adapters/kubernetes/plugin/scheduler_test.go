package plugin_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

const gib = int64(1) << 30

// Two pods whose memory peaks come one after the other share a node of 8 GiB that
// their requests (6 GiB each) would not fit; a third whose 4 GiB stage overlaps the
// first pod's peak is not bound, and its condition says why.
func TestStagesShareANodeTheirRequestsWouldNot(t *testing.T) {
	c := startCluster(t, setup{})
	shareANode(t, c)
	assert.Empty(t, c.get("overlap").Spec.NodeName)
	free, err := c.plugin.Scheduler().NodeFree("n1", 0)
	require.NoError(t, err)
	assert.Equal(t, 8*gib-6*gib-1*gib, free[1], "both pods are held on n1's timeline, by stage")
}

// shareANode runs the stage-sharing case on c: early and late bound to n1 of 8 GiB,
// overlap refused for memory and pending in finegrain.
func shareANode(t *testing.T, c *cluster) {
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "early", cpu: "1", mem: "6Gi", stages: `[{"duration":"60s","cpu":"1","memory":"6Gi"},{"duration":"0","cpu":"1","memory":"1Gi"}]`})
	assert.Equal(t, "n1", c.waitBound("early"))
	c.create(pod{name: "late", cpu: "1", mem: "6Gi", stages: `[{"duration":"60s","cpu":"1","memory":"1Gi"},{"duration":"0","cpu":"1","memory":"6Gi"}]`})
	assert.Equal(t, "n1", c.waitBound("late"), "late's peak comes after early's")
	c.create(pod{name: "overlap", cpu: "1", mem: "4Gi", stages: `[{"duration":"30s","cpu":"1","memory":"4Gi"}]`})
	assert.Contains(t, c.waitUnschedulable("overlap"), "memory", "the refusal names the resource short")
	st, _ := c.plugin.Scheduler().TaskState(c.uid("overlap"))
	assert.Equal(t, finegrain.Pending, st)
}

// permitGate rejects every pod at Permit while closed: a plugin after FineGrain that
// makes the framework call Unreserve.
type permitGate struct{ rejected atomic.Int64 }

func (*permitGate) Name() string { return "PermitGate" }

func (g *permitGate) Permit(context.Context, fwk.CycleState, *v1.Pod, string) (*fwk.Status, time.Duration) {
	g.rejected.Add(1)
	return fwk.NewStatus(fwk.Unschedulable, "the gate is closed"), 0
}

// A pod reserved on a node and then rejected at Permit by another plugin is
// unreserved by the framework: the node's timeline is as it was, and the pod is
// pending in finegrain again.
func TestUnreserveRestoresTheTimeline(t *testing.T) {
	gate := &permitGate{}
	c := startCluster(t, setup{extra: []extraPlugin{{name: gate.Name(), factory: func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return gate, nil }}}})
	c.node("n1", "4", "8Gi")
	c.waitFor("the node to reach the plugin", func() bool { _, err := c.plugin.Scheduler().NodeFree("n1", 0); return err == nil })
	before, err := c.plugin.Scheduler().FreeSegments("n1", 0, time.Hour)
	require.NoError(t, err)

	c.create(pod{name: "p", cpu: "2", mem: "3Gi", stages: `[{"duration":"60s","cpu":"2","memory":"3Gi"},{"duration":"60s","cpu":"1","memory":"5Gi"}]`})
	msg := c.waitUnschedulable("p")
	assert.Contains(t, msg, "the gate is closed")
	assert.GreaterOrEqual(t, gate.rejected.Load(), int64(1))

	after, err := c.plugin.Scheduler().FreeSegments("n1", 0, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, before, after, "Unreserve took the pod's stages off the timeline")
	st, _ := c.plugin.Scheduler().TaskState("uid-p")
	assert.Equal(t, finegrain.Pending, st)
	_, held := c.plugin.Scheduler().Held("uid-p")
	assert.False(t, held)
}

// annotationArgs are the plugin's arguments with usage read from the
// finegrain.io/observed-stages annotation.
var annotationArgs = map[string]any{"usageSource": plugin.UsageSourceAnnotation}

// A finished pod's observed usage (the annotation) teaches the profile of the next pod
// with its similarity key: that pod, asking 6 GiB, is placed by the 1 GiB its
// predecessor used beside a pod holding 6 GiB of the node's 8; a pod of another key
// asking the same is not.
func TestFinishedPodTeachesTheNextSimilarPod(t *testing.T) {
	c := startCluster(t, setup{args: annotationArgs})
	c.node("n1", "4", "8Gi")
	learnETL(c)
	c.learnedPlacesNext(etlLabels)
}

// A finished pod whose reported usage is implausible, malformed or open-ended still
// finishes, and teaches nothing: the next pod of its key is placed by its request.
func TestBadUsageTeachesNothing(t *testing.T) {
	for _, tc := range []struct{ name, observed string }{
		{"beyond-the-node", `[{"duration":"60s","cpu":"1","memory":"100Gi"}]`},
		{"malformed", `[{"duration":`},
		{"open-ended", `[{"cpu":"1","memory":"1Gi"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t, setup{args: annotationArgs})
			c.node("n1", "4", "8Gi")
			key := map[string]string{"finegrain.io/logic": tc.name}
			c.create(pod{name: "first", cpu: "1", mem: "6Gi", labels: key})
			c.waitBound("first")
			c.finish("first", tc.observed)
			c.waitState("first", finegrain.Finished)
			c.requestPlacesNext(key)
		})
	}
}

// Pods of a gang wait at Permit, reserved, until MinMember of them can be bound;
// then all are.
func TestGangBindsAllOrNothing(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "8", "16Gi")
	gang := map[string]string{plugin.GangLabel: "train", plugin.MinMemberLabel: "3"}
	c.create(pod{name: "w0", cpu: "1", mem: "2Gi", labels: gang})
	c.create(pod{name: "w1", cpu: "1", mem: "2Gi", labels: gang})
	c.waitFor("two members to wait reserved", func() bool {
		s0, _ := c.plugin.Scheduler().TaskState("uid-w0")
		s1, _ := c.plugin.Scheduler().TaskState("uid-w1")
		return s0 == finegrain.Reserved && s1 == finegrain.Reserved
	})
	assert.Empty(t, c.get("w0").Spec.NodeName)
	assert.Empty(t, c.get("w1").Spec.NodeName)
	assert.Zero(t, c.bound.Load(), "no member is bound before the gang can be")

	c.create(pod{name: "w2", cpu: "1", mem: "2Gi", labels: gang})
	for _, name := range []string{"w0", "w1", "w2"} {
		assert.Equal(t, "n1", c.waitBound(name))
	}
	c.waitFor("the members to be committed", func() bool {
		for _, id := range []string{"uid-w0", "uid-w1", "uid-w2"} {
			if st, _ := c.plugin.Scheduler().TaskState(id); st != finegrain.Running {
				return false
			}
		}
		return true
	})
}

// A gang that cannot gather gives its reservations back when its wait times out. The
// member is then tried again after its backoff, and waits reserved again: what is
// checked is that between two waits it is pending and holds nothing (checking the
// node's free memory at one moment after the timeout raced the next attempt).
func TestGangTimeoutReleases(t *testing.T) {
	c := startCluster(t, setup{args: map[string]any{"gangTimeout": "1s"}})
	c.node("n1", "8", "16Gi")
	gang := map[string]string{plugin.GangLabel: "short", plugin.MinMemberLabel: "3"}
	c.create(pod{name: "s0", cpu: "1", mem: "2Gi", labels: gang})
	c.waitFor("the member to wait reserved", func() bool {
		st, _ := c.plugin.Scheduler().TaskState("uid-s0")
		free, err := c.plugin.Scheduler().NodeFree("n1", 0)
		return st == finegrain.Reserved && err == nil && free[1] == 14*gib
	})
	c.waitUnschedulable("s0")
	c.waitFor("the timed-out member to be pending and hold nothing", func() bool {
		st, _ := c.plugin.Scheduler().TaskState("uid-s0")
		free, err := c.plugin.Scheduler().NodeFree("n1", 0)
		return st == finegrain.Pending && err == nil && free[1] == 16*gib
	})
	assert.Empty(t, c.get("s0").Spec.NodeName, "never bound")
}

// With preemption on, a high-priority pod that fits no node evicts a lower-priority
// pod (deleted through the API), is nominated to its node and bound there.
func TestPreemptionEvictsByTimeline(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "low", cpu: "1", mem: "6Gi", priority: 0})
	c.waitBound("low")
	c.create(pod{name: "high", cpu: "1", mem: "6Gi", priority: 1000})
	assert.Equal(t, "n1", c.waitBound("high"))
	_, err := c.client.CoreV1().Pods(ns).Get(c.ctx, "low", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the victim was deleted: %v", err)
	c.waitFor("the preemptor to run in finegrain", func() bool {
		st, _ := c.plugin.Scheduler().TaskState("uid-high")
		return st == finegrain.Running
	})
}

// A victim whose deletion fails still runs: it is held on its node by its requests,
// and the preemptor, which needs its room, is not bound.
func TestPreemptionVictimThatCannotBeDeletedKeepsItsRoom(t *testing.T) {
	var refused atomic.Int64
	c := startCluster(t, setup{client: func(cs *fake.Clientset) {
		cs.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
			if action.(clienttesting.DeleteAction).GetName() != "stubborn" {
				return false, nil, nil
			}
			refused.Add(1)
			return true, nil, errors.New("the API server refused the deletion")
		})
	}})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "stubborn", cpu: "1", mem: "6Gi", priority: 0})
	c.waitBound("stubborn")
	c.create(pod{name: "high", cpu: "1", mem: "6Gi", priority: 1000})
	c.waitFor("the deletion to be refused", func() bool { return refused.Load() > 0 })
	c.waitUnschedulable("high")
	c.waitFor("the victim's requests to be held again", func() bool {
		free, err := c.plugin.Scheduler().NodeFree("n1", 0)
		return err == nil && free[1] == 2*gib
	})
	assert.Equal(t, "n1", c.get("stubborn").Spec.NodeName, "the victim still runs")
	assert.Empty(t, c.get("high").Spec.NodeName)
}

// A preemptor waits, holding the room, until its victims are gone: a victim in its
// grace period still runs.
func TestPreemptorWaitsForItsVictims(t *testing.T) {
	var fc *fake.Clientset
	var graceful atomic.Bool
	c := startCluster(t, setup{client: func(cs *fake.Clientset) {
		fc = cs
		cs.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
			if action.(clienttesting.DeleteAction).GetName() != "slow" {
				return false, nil, nil
			}
			// Accepted: the pod is marked for deletion (an update the informers see
			// at once) and terminates later.
			obj, err := cs.Tracker().Get(podsGVR, ns, "slow")
			if err != nil {
				return true, nil, err
			}
			marked := obj.(*v1.Pod).DeepCopy()
			now := metav1.Now()
			marked.DeletionTimestamp = &now
			if err := cs.Tracker().Update(podsGVR, marked, ns); err != nil {
				return true, nil, err
			}
			graceful.Store(true)
			return true, nil, nil
		})
	}})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "slow", cpu: "1", mem: "6Gi"})
	c.waitBound("slow")
	c.create(pod{name: "high", cpu: "1", mem: "6Gi", priority: 1000})
	c.waitFor("the victim's deletion", graceful.Load)
	c.waitUnschedulable("high")
	// A node too small for high: an event that makes the scheduler try high again.
	c.node("n2", "1", "1Gi")
	c.waitFor("the preemptor to wait for its victim", func() bool {
		return strings.Contains(c.waitUnschedulable("high"), "waiting for 1 preempted pod")
	})
	assert.Empty(t, c.get("high").Spec.NodeName, "not bound while its victim runs")
	require.NoError(t, fc.Tracker().Delete(podsGVR, ns, "slow"))
	assert.Equal(t, "n1", c.waitBound("high"))
}

// nodeGate refuses node n1 to pod "high", as a plugin that preemption cannot help
// (taints, affinity) would.
type nodeGate struct{}

func (nodeGate) Name() string { return "NodeGate" }

func (nodeGate) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	if pod.Name == "high" && ni.Node().Name == "n1" {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "n1 is not for high")
	}
	return nil
}

// Preemption evicts nothing on a node another plugin refused: room there would not
// help.
func TestPreemptionSkipsNodesOthersRefused(t *testing.T) {
	c := startCluster(t, setup{extra: []extraPlugin{{name: "NodeGate", factory: func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return nodeGate{}, nil }}}})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "low", cpu: "1", mem: "6Gi"})
	c.waitBound("low")
	c.create(pod{name: "high", cpu: "1", mem: "6Gi", priority: 1000})
	c.waitUnschedulable("high")
	assert.Equal(t, "n1", c.get("low").Spec.NodeName, "low was not evicted")
	st, _ := c.plugin.Scheduler().TaskState("uid-low")
	assert.Equal(t, finegrain.Running, st)
}

// A pod whose preemptionPolicy is Never evicts nothing.
func TestPreemptionPolicyNever(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "low", cpu: "1", mem: "6Gi"})
	c.waitBound("low")
	c.create(pod{name: "polite", cpu: "1", mem: "6Gi", priority: 1000, never: true})
	assert.Contains(t, c.waitUnschedulable("polite"), "preemptionPolicy")
	assert.Equal(t, "n1", c.get("low").Spec.NodeName)
}

// What NodeResourcesFit checked besides CPU and memory, the plugin checks: the
// node's pod count and extended resources it does not schedule on its timelines.
func TestPodCountAndExtendedResourcesAreChecked(t *testing.T) {
	c := startCluster(t, setup{})
	c.nodeWith("full", "4", "8Gi", "1", nil)
	c.node("plain", "1", "1Gi")
	c.create(pod{name: "theirs", cpu: "100m", mem: "100Mi", scheduler: "default-scheduler", node: "full"})
	c.create(pod{name: "one-too-many", cpu: "100m", mem: "2Gi"})
	assert.Contains(t, c.waitUnschedulable("one-too-many"), "Too many pods", "full has room for one pod")

	gpu := v1.ResourceList{"example.com/gpu": apiresource.MustParse("1")}
	c.create(pod{name: "wants-gpu", cpu: "100m", mem: "100Mi", extra: gpu})
	assert.Contains(t, c.waitUnschedulable("wants-gpu"), "Insufficient example.com/gpu")
	c.nodeWith("gpu", "4", "8Gi", "110", gpu)
	assert.Equal(t, "gpu", c.waitBound("wants-gpu"))
	assert.Equal(t, "gpu", c.waitBound("one-too-many"))
}

// finegrain's refusals read the same on every node refused for one reason, so that
// the pod's event counts nodes per reason as kube-scheduler's own do; a pod larger than
// every node is refused as unresolvable, and a BestEffort pod is placed by
// kube-scheduler's stand-in request.
func TestRefusalsAreCountedByReason(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	c.node("n2", "4", "8Gi")
	c.create(pod{name: "theirs-1", cpu: "100m", mem: "7Gi", scheduler: "default-scheduler", node: "n1"})
	c.create(pod{name: "theirs-2", cpu: "100m", mem: "7Gi", scheduler: "default-scheduler", node: "n2"})
	c.waitFor("the foreign pods' load", func() bool {
		a, err1 := c.plugin.Scheduler().NodeFree("n1", 0)
		b, err2 := c.plugin.Scheduler().NodeFree("n2", 0)
		return err1 == nil && err2 == nil && a[1] == gib && b[1] == gib
	})
	c.create(pod{name: "short", cpu: "1", mem: "2Gi"})
	assert.Contains(t, c.waitUnschedulable("short"), "0/2 nodes are available: 2 finegrain: short of memory.")
	c.create(pod{name: "huge", cpu: "1", mem: "64Gi"})
	assert.Contains(t, c.waitUnschedulable("huge"), "no node could ever hold the task")
	c.create(pod{name: "best-effort"})
	assert.Contains(t, []string{"n1", "n2"}, c.waitBound("best-effort"))
}

// A bound pod of another scheduler is held on its node as its requests; when it is
// deleted, the room is the plugin's again.
func TestPodsOfOtherSchedulersAreHeldByRequest(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "theirs", cpu: "1", mem: "6Gi", scheduler: "default-scheduler", node: "n1"})
	c.waitFor("the foreign pod's load", func() bool {
		free, err := c.plugin.Scheduler().NodeFree("n1", 0)
		return err == nil && free[1] == 2*gib
	})
	c.create(pod{name: "ours", cpu: "1", mem: "4Gi"})
	c.waitUnschedulable("ours")
	c.delete("theirs")
	assert.Equal(t, "n1", c.waitBound("ours"))
}

// Pods whose annotations or labels are malformed are refused, with the reason.
func TestMalformedPodsAreUnschedulable(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	for _, tc := range []struct {
		name string
		p    pod
		want string
	}{
		{"bad-json", pod{cpu: "1", mem: "1Gi", stages: `[{"duration":`}, "not a JSON list"},
		{"negative", pod{cpu: "1", mem: "1Gi", stages: `[{"duration":"10s","memory":"-1Gi"}]`}, "negative"},
		{"unknown-resource", pod{cpu: "1", mem: "1Gi", stages: `[{"duration":"10s","nvidia.com/gpu":"1"}]`}, "unknown resource"},
		{"gang-without-size", pod{cpu: "1", mem: "1Gi", labels: map[string]string{plugin.GangLabel: "g"}}, plugin.MinMemberLabel},
		{"bad-input-size", pod{cpu: "1", mem: "1Gi", labels: map[string]string{"finegrain.io/logic": "x", "finegrain.io/input-size": "lots"}}, "input-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.name = tc.name
			c.create(tc.p)
			msg := c.waitUnschedulable(tc.name)
			assert.True(t, strings.Contains(msg, tc.want), "message %q should mention %q", msg, tc.want)
		})
	}
}
