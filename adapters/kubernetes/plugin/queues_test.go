package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/fairness"
)

const queuesConfigFile = "../deploy/scheduler-config-queues.yaml"

// queuesArgs are the plugin's arguments with queues configured as given (usage read
// from annotations: these tests sample no metrics).
func queuesArgs(queues map[string]any) map[string]any {
	return map[string]any{"usageSource": plugin.UsageSourceAnnotation, "queues": queues}
}

// The shipped configuration with queues is scheduler-config.yaml with FineGrain as
// the queue-sort plugin (PrioritySort disabled) and args.queues set: nothing else
// differs, and kube-scheduler builds a scheduler from it.
func TestShippedQueuesConfig(t *testing.T) {
	base, withQueues := loadProfile(t), loadProfileFrom(t, queuesConfigFile)
	assert.Equal(t, []config.Plugin{{Name: plugin.Name}}, withQueues.Plugins.QueueSort.Enabled)
	assert.Equal(t, []config.Plugin{{Name: "PrioritySort"}}, withQueues.Plugins.QueueSort.Disabled)
	args := profileArgs(t, withQueues)
	require.NotNil(t, args.Queues)
	assert.Equal(t, plugin.QueueArgs{
		Policy: plugin.QueuePolicyDRF, By: plugin.QueueByNamespace,
		Weights:  map[string]float64{"team-a": 2, "team-b": 1},
		MinShare: map[string]float64{"team-a": 0.2},
		MaxShare: map[string]float64{"team-b": 0.5},
	}, *args.Queues)
	args.Queues = nil
	assert.Equal(t, profileArgs(t, base), args, "the other arguments are the base configuration's")
	withQueues.Plugins.QueueSort = base.Plugins.QueueSort
	withQueues.PluginConfig, base.PluginConfig = nil, nil
	assert.Equal(t, base, withQueues, "the profiles differ only in queueSort and the arguments")

	c := startCluster(t, setup{config: queuesConfigFile})
	require.NotNil(t, c.plugin)
}

func TestQueueArgsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		want []string // what the error must mention; none: valid
	}{
		{"defaults", `{"queues":{}}`, nil},
		{"every field", `{"queues":{"policy":"DRF","by":"namespace","weights":{"team-a":2},"minShare":{"team-a":0.2},"maxShare":{"team-a":0.5,"team-b":1}}}`, nil},
		{"by label", `{"queues":{"by":"label:example.com/team","defaultQueue":"rest","weights":{"Data_Science":3}}}`, nil},
		{"Fair in pods", `{"queues":{"policy":"Fair","minShare":{"a":2},"maxShare":{"a":10}}}`, nil},
		{"Capacity", `{"queues":{"policy":"Capacity","minShare":{"a":0.6},"maxShare":{"a":0.8}}}`, nil},
		{"unknown policy", `{"queues":{"policy":"FIFO"}}`, []string{"queues.policy", "Capacity", "DRF", "Fair"}},
		{"unknown by", `{"queues":{"by":"owner"}}`, []string{"queues.by", `"namespace" or "label:KEY"`}},
		{"bad label key", `{"queues":{"by":"label:not a key!"}}`, []string{"queues.by"}},
		{"default queue by namespace", `{"queues":{"defaultQueue":"x"}}`, []string{"queues.defaultQueue", "only with by: label:KEY"}},
		{"bad namespace", `{"queues":{"weights":{"Team_A":1}}}`, []string{"queues.weights[Team_A]", "queue name"}},
		{"zero weight", `{"queues":{"weights":{"a":0}}}`, []string{"queues.weights[a]", "positive and finite"}},
		{"weights under Capacity", `{"queues":{"policy":"Capacity","weights":{"a":2}}}`, []string{"queues.weights", "Capacity does not use weights"}},
		{"share above 1", `{"queues":{"maxShare":{"a":1.5}}}`, []string{"queues.maxShare[a]", "fractions of the cluster"}},
		{"negative min", `{"queues":{"minShare":{"a":-0.1}}}`, []string{"queues.minShare[a]", "non-negative"}},
		{"zero max", `{"queues":{"maxShare":{"a":0}}}`, []string{"queues.maxShare[a]", "omit the queue for none"}},
		{"min above max", `{"queues":{"minShare":{"a":0.5},"maxShare":{"a":0.25}}}`, []string{"queues.minShare[a]", "must not exceed maxShare[a] (0.25)"}},
		{"unknown field", `{"queues":{"weight":{"a":1}}}`, []string{"unknown field", "weight"}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkArgs(t, tc.json, runtime.ContentTypeJSON, tc.want) })
	}
}

// buildScheduler builds (and does not run) a scheduler of profile prof with FineGrain
// registered, returning kube-scheduler's error.
func buildScheduler(t *testing.T, prof config.KubeSchedulerProfile, args map[string]any) error {
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	for i := range prof.PluginConfig {
		if prof.PluginConfig[i].Name == plugin.Name {
			prof.PluginConfig[i].Args = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	_, err = scheduler.New(ctx, client, informers.NewSharedInformerFactory(client, 0), nil,
		profile.NewRecorderFactory(events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})),
		scheduler.WithProfiles(prof),
		scheduler.WithFrameworkOutOfTreeRegistry(frameworkruntime.Registry{plugin.Name: plugin.New}))
	return err
}

// What the README says of enabling the queue sort holds: args.queues without
// disabling PrioritySort is refused at start (two queue-sort plugins), as is FineGrain
// named at queueSort without args.queues; the shipped pairings start.
func TestQueueSortMustBeEnabledWithQueues(t *testing.T) {
	queues := queuesArgs(map[string]any{"policy": "DRF"})
	noQueues := map[string]any{"usageSource": plugin.UsageSourceAnnotation}
	err := buildScheduler(t, loadProfile(t), queues)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only one queue sort plugin")
	err = buildScheduler(t, loadProfileFrom(t, queuesConfigFile), noQueues)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not extend")
	assert.NoError(t, buildScheduler(t, loadProfileFrom(t, queuesConfigFile), queues))
	assert.NoError(t, buildScheduler(t, loadProfile(t), noQueues), "off by default: PrioritySort")
}

// queuedPod is a pod as the scheduling queue holds it.
func queuedPod(t *testing.T, pod *v1.Pod, at time.Time) fwk.QueuedEntityInfo {
	pi, err := schedframework.NewPodInfo(pod)
	require.NoError(t, err)
	return &schedframework.QueuedPodInfo{PodInfo: pi, QueueingParams: schedframework.QueueingParams{Timestamp: at}}
}

func testQueuePod(namespace, name string, prio int32, labels map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(namespace + "-" + name), Labels: labels},
		Spec: v1.PodSpec{Priority: &prio, Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: apiresource.MustParse("1"), v1.ResourceMemory: apiresource.MustParse("1Gi"),
		}}}}},
	}
}

// newSorting builds the plugin with args, no scheduler around it, and node n of 4
// CPUs and 16 GiB.
func newSorting(t *testing.T, args map[string]any) *plugin.Sorting {
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	p, err := plugin.New(context.Background(), &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}, nil)
	require.NoError(t, err)
	s, ok := p.(*plugin.Sorting)
	require.True(t, ok, "with args.queues the factory returns a queue-sort plugin, got %T", p)
	sched := s.Scheduler()
	require.NoError(t, sched.AddNode(finegrain.Node{ID: "n", Capacity: sched.Schema().MustTuple(4000, 16*gib)}))
	return s
}

// prefilter submits pod through PreFilter and returns its status.
func prefilter(s *plugin.Sorting, pod *v1.Pod) *fwk.Status {
	_, st := s.PreFilter(context.Background(), schedframework.NewCycleState(), pod, nil)
	return st
}

// Less puts the pods of the poorer queue first; within a queue, or between queues
// that stand alike, the higher priority, then the earlier; a queue at its max share
// goes last, and PreFilter refuses its pods naming the queue and its share.
func TestLessOrdersByQueueStanding(t *testing.T) {
	s := newSorting(t, queuesArgs(map[string]any{"maxShare": map[string]any{"c": 0.25}}))
	t0 := time.Unix(1_700_000_000, 0)
	a1 := testQueuePod("a", "a1", 0, nil)
	a2 := testQueuePod("a", "a2", 0, nil)
	a3 := testQueuePod("a", "a3", 10, nil)
	b1 := testQueuePod("b", "b1", 0, nil)
	c1 := testQueuePod("c", "c1", 0, nil)
	c2 := testQueuePod("c", "c2", 0, nil)
	qa1, qa2, qa3 := queuedPod(t, a1, t0), queuedPod(t, a2, t0.Add(time.Second)), queuedPod(t, a3, t0.Add(2*time.Second))
	qb1, qc2 := queuedPod(t, b1, t0.Add(3*time.Second)), queuedPod(t, c2, t0.Add(4*time.Second))

	// Nothing held anywhere: PrioritySort's order, whatever the queue.
	assert.True(t, s.Less(qa1, qb1))
	assert.False(t, s.Less(qb1, qa1))
	assert.True(t, s.Less(qa3, qa1), "higher priority first")
	assert.True(t, s.Less(qa1, qa2), "earlier first")

	for _, p := range []*v1.Pod{a1, a2, a3, b1, c1, c2} {
		require.Nil(t, prefilter(s, p), p.Name)
	}
	require.Nil(t, s.Reserve(context.Background(), schedframework.NewCycleState(), a1, "n"))
	assert.True(t, s.Less(qb1, qa2), "a holds a pod, b none: b first, though later")
	assert.False(t, s.Less(qa2, qb1))
	assert.True(t, s.Less(qa3, qa2), "within a queue, priority")
	assert.True(t, s.Less(qb1, qa3), "across queues, the queue's standing before priority")

	require.Nil(t, s.Reserve(context.Background(), schedframework.NewCycleState(), c1, "n"))
	assert.True(t, s.Less(qa2, qc2), "c holds its max share (a quarter of the CPUs): last")
	st := prefilter(s, c2)
	require.NotNil(t, st)
	assert.Equal(t, fwk.Unschedulable, st.Code())
	assert.Contains(t, st.Message(), "queue c holds its max share (0.25 of 0.25")

	s.Unreserve(context.Background(), schedframework.NewCycleState(), c1, "n")
	assert.Nil(t, prefilter(s, c2), "below its max again")
}

// By label, a pod's queue is its label's value, or the default queue without it.
func TestQueuesByLabel(t *testing.T) {
	s := newSorting(t, queuesArgs(map[string]any{"by": "label:example.com/team", "defaultQueue": "rest"}))
	team := func(v string) map[string]string { return map[string]string{"example.com/team": v} }
	t0 := time.Unix(1_700_000_000, 0)
	x1, x2 := testQueuePod("ns1", "x1", 0, team("x")), testQueuePod("ns2", "x2", 0, team("x"))
	y1, r1 := testQueuePod("ns1", "y1", 0, team("y")), testQueuePod("ns1", "r1", 0, nil)
	for _, p := range []*v1.Pod{x1, x2, y1, r1} {
		require.Nil(t, prefilter(s, p), p.Name)
	}
	qs, err := s.Scheduler().Queues("")
	require.NoError(t, err)
	var ids []string
	for _, q := range qs {
		ids = append(ids, q.ID)
	}
	assert.Equal(t, []string{"rest", "x", "y"}, ids)
	require.Nil(t, s.Reserve(context.Background(), schedframework.NewCycleState(), x1, "n"))
	assert.True(t, s.Less(queuedPod(t, y1, t0.Add(time.Second)), queuedPod(t, x2, t0)), "x, across namespaces, holds a pod")
	assert.True(t, s.Less(queuedPod(t, r1, t0.Add(time.Second)), queuedPod(t, x2, t0)))
}

// placements runs the fairness scenario on c: node n1 of slots CPUs is full of
// blockers (namespace default); perQueue pods of 1 CPU wait in each of namespaces;
// then, n times, the pod running longest finishes and one waiting pod takes its
// room. It returns the namespace of each pod placed, in order.
func placements(t *testing.T, c *cluster, slots, perQueue, n int, namespaces ...string) []string {
	t.Helper()
	c.node("n1", fmt.Sprint(slots), "64Gi")
	type ref struct{ namespace, name string }
	var running []ref
	for i := range slots {
		name := fmt.Sprintf("blocker-%d", i)
		c.create(pod{name: name, cpu: "1", mem: "1Gi"})
		c.waitBound(name)
		running = append(running, ref{ns, name})
	}
	var waiting []ref
	for _, q := range namespaces {
		for i := range perQueue {
			r := ref{q, fmt.Sprintf("%s-%d", q, i)}
			c.create(pod{name: r.name, cpu: "1", mem: "1Gi", namespace: q})
			waiting = append(waiting, r)
		}
	}
	get := func(r ref) *v1.Pod {
		p, err := c.client.CoreV1().Pods(r.namespace).Get(c.ctx, r.name, metav1.GetOptions{})
		require.NoError(t, err)
		return p
	}
	c.waitFor("every waiting pod to be tried and refused", func() bool {
		for _, r := range waiting {
			if !strings.Contains(podScheduledFalse(get(r)), "finegrain: short of cpu") {
				return false
			}
		}
		return true
	})
	var placed []string
	for range n {
		done := get(running[0]).DeepCopy()
		running = running[1:]
		done.Status.Phase = v1.PodSucceeded
		_, err := c.client.CoreV1().Pods(done.Namespace).UpdateStatus(c.ctx, done, metav1.UpdateOptions{})
		require.NoError(t, err)
		var next []ref
		c.waitFor("a waiting pod to take the room", func() bool {
			next = nil
			for _, r := range waiting {
				if get(r).Spec.NodeName != "" {
					next = append(next, r)
				}
			}
			return len(next) > 0
		})
		require.Len(t, next, 1, "one pod's room, one pod placed")
		placed = append(placed, next[0].namespace)
		running = append(running, next[0])
		for i, r := range waiting {
			if r == next[0] {
				waiting = append(waiting[:i], waiting[i+1:]...)
				break
			}
		}
	}
	return placed
}

// podScheduledFalse is the message of pod's PodScheduled condition when it is False.
func podScheduledFalse(p *v1.Pod) string {
	for _, cond := range p.Status.Conditions {
		if cond.Type == v1.PodScheduled && cond.Status == v1.ConditionFalse {
			return cond.Message
		}
	}
	return ""
}

// counts counts the placements per namespace, divided by its weight.
func counts(placed []string, weights map[string]float64, namespaces ...string) []float64 {
	out := make([]float64, len(namespaces))
	for i, q := range namespaces {
		for _, p := range placed {
			if p == q {
				out[i]++
			}
		}
		if w, ok := weights[q]; ok {
			out[i] /= w
		}
	}
	return out
}

// Two namespaces of equal weight, each with a backlog, share a full node's room as
// it frees, one pod at a time: the placements alternate, and Jain's index of their
// counts is near 1 (PrioritySort, by arrival, would give the first namespace's whole
// backlog first). Not strictly every time: the scheduler's own requeue of the
// waiting pods, on the event of a pod's end, may sort them before the plugin has
// seen that pod end (README, "Fairness across queues"); the plugin makes a pod
// retried since room was freed give way to a poorer queue's, and a namespace placed
// twice in a row, richer, waits the next time. (Before it gave way so, twice in 50
// runs under load a namespace was placed three times in a row.)
func TestQueuesShareEqually(t *testing.T) {
	c := startCluster(t, setup{config: queuesConfigFile, args: queuesArgs(map[string]any{"policy": "DRF"})})
	placed := placements(t, c, 2, 12, 20, "team-a", "team-b")
	x := counts(placed, nil, "team-a", "team-b")
	j, err := fairness.Jain(x)
	require.NoError(t, err)
	t.Logf("placements %v: %v each, Jain's index %.3f", placed, x, j)
	assert.GreaterOrEqual(t, j, 0.95, "Jain's index of %v", x)
	run, longest := 1, 1
	for i := 1; i < len(placed); i++ {
		if placed[i] == placed[i-1] {
			run++
		} else {
			run = 1
		}
		longest = max(longest, run)
	}
	assert.LessOrEqual(t, longest, 3, "the placements alternate, a namespace placed three times in a row at most: %v", placed)
}

// Weights 2:1 give the first namespace two placements for each of the second's,
// under DRF and under Fair: the weighted Jain index (counts divided by weights) is
// near 1. (Ties — one namespace holding two pods, the other one — go by arrival.)
func TestQueueWeightsShareTwoToOne(t *testing.T) {
	for _, policy := range []string{plugin.QueuePolicyDRF, plugin.QueuePolicyFair} {
		t.Run(policy, func(t *testing.T) {
			weights := map[string]float64{"team-a": 2, "team-b": 1}
			c := startCluster(t, setup{config: queuesConfigFile, args: queuesArgs(map[string]any{"policy": policy, "weights": weights})})
			placed := placements(t, c, 3, 16, 21, "team-a", "team-b")
			x := counts(placed, weights, "team-a", "team-b")
			j, err := fairness.Jain(x)
			require.NoError(t, err)
			t.Logf("placements %v: %v each per weight, Jain's index %.3f", placed, x, j)
			assert.GreaterOrEqual(t, j, 0.95, "Jain's index of %v (placements / weight)", x)
		})
	}
}

// A namespace at its max share gets no more: its next pod is refused at PreFilter,
// naming its queue and share, while another namespace's pods are placed in the room
// left; when one of its pods ends, the refused one is placed.
func TestQueueMaxShareRefusesBeyondIt(t *testing.T) {
	c := startCluster(t, setup{config: queuesConfigFile, args: queuesArgs(map[string]any{"maxShare": map[string]any{"team-a": 0.5}})})
	c.node("n1", "4", "16Gi")
	for i := range 3 {
		c.create(pod{name: fmt.Sprintf("a-%d", i), cpu: "1", mem: "1Gi", namespace: "team-a"})
	}
	get := func(namespace, name string) *v1.Pod {
		p, err := c.client.CoreV1().Pods(namespace).Get(c.ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		return p
	}
	bound := func(namespace string, names ...string) (n int, last string) {
		for _, name := range names {
			if get(namespace, name).Spec.NodeName != "" {
				n++
			} else {
				last = name
			}
		}
		return n, last
	}
	var refused string
	c.waitFor("two of team-a's pods bound and the third refused", func() bool {
		n, last := bound("team-a", "a-0", "a-1", "a-2")
		refused = last
		return n == 2 && last != "" && strings.Contains(podScheduledFalse(get("team-a", last)), "max share")
	})
	msg := podScheduledFalse(get("team-a", refused))
	assert.Contains(t, msg, "queue team-a holds its max share (0.5 of 0.5, a dominant share of the cluster)")

	c.create(pod{name: "b-0", cpu: "1", mem: "1Gi", namespace: "team-b"})
	c.create(pod{name: "b-1", cpu: "1", mem: "1Gi", namespace: "team-b"})
	c.waitFor("team-b's pods in the room left", func() bool { n, _ := bound("team-b", "b-0", "b-1"); return n == 2 })
	assert.Empty(t, get("team-a", refused).Spec.NodeName, "still beyond team-a's max")

	// One of team-b's pods ends: its room goes to team-b's next pod, not to team-a's
	// refused one (activated when the pod ended, and refused again).
	done := get("team-b", "b-0").DeepCopy()
	done.Status.Phase = v1.PodSucceeded
	_, err := c.client.CoreV1().Pods("team-b").UpdateStatus(c.ctx, done, metav1.UpdateOptions{})
	require.NoError(t, err)
	c.create(pod{name: "b-2", cpu: "1", mem: "1Gi", namespace: "team-b"})
	c.waitFor("team-b's next pod in the room", func() bool { return get("team-b", "b-2").Spec.NodeName != "" })
	assert.Empty(t, get("team-a", refused).Spec.NodeName, "still beyond team-a's max")

	// One of team-a's ends: the refused pod is placed.
	var first string // a running pod of team-a's
	for _, name := range []string{"a-0", "a-1", "a-2"} {
		if name != refused {
			first = name
			break
		}
	}
	done = get("team-a", first).DeepCopy()
	done.Status.Phase = v1.PodSucceeded
	_, err = c.client.CoreV1().Pods("team-a").UpdateStatus(c.ctx, done, metav1.UpdateOptions{})
	require.NoError(t, err)
	c.waitFor("the refused pod to be bound once team-a holds less", func() bool { return get("team-a", refused).Spec.NodeName != "" })
}

// A pod that would take its queue past its max share, though the queue holds less,
// passes PreFilter and is refused at Filter by the library's queue admission.
func TestPodPastItsQueuesMaxIsRefusedAtFilter(t *testing.T) {
	s := newSorting(t, queuesArgs(map[string]any{"maxShare": map[string]any{"d": 0.25}}))
	big := testQueuePod("d", "big", 0, nil)
	big.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = apiresource.MustParse("2") // half the CPUs
	cs := schedframework.NewCycleState()
	_, st := s.PreFilter(context.Background(), cs, big, nil)
	require.Nil(t, st, "the queue holds nothing")
	ni := schedframework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: apiresource.MustParse("4"), v1.ResourceMemory: apiresource.MustParse("16Gi"), v1.ResourcePods: apiresource.MustParse("110"),
	}}})
	st = s.Filter(context.Background(), cs, big, ni)
	require.NotNil(t, st)
	assert.Equal(t, fwk.Unschedulable, st.Code())
	assert.Equal(t, "finegrain: max share (QueueAdmission)", st.Message())
}

// Less with the standings unchanged since the last look reads no lock and allocates
// nothing; when they changed (a reservation between two comparisons), it reads the
// queues again.
func BenchmarkLess(b *testing.B) {
	for _, queues := range []int{10, 1000} {
		s := newSortingB(b, queues)
		t0 := time.Unix(1_700_000_000, 0)
		pods := make([]fwk.QueuedEntityInfo, queues)
		for i := range pods {
			pi, err := schedframework.NewPodInfo(testQueuePod(fmt.Sprintf("q%d", i), "p", 0, nil))
			require.NoError(b, err)
			pods[i] = &schedframework.QueuedPodInfo{PodInfo: pi, QueueingParams: schedframework.QueueingParams{Timestamp: t0}}
			require.Nil(b, prefilter(s, pods[i].(*schedframework.QueuedPodInfo).Pod))
		}
		b.Run(fmt.Sprintf("queues=%d/unchanged", queues), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s.Less(pods[i%queues], pods[(i+1)%queues])
			}
		})
		b.Run(fmt.Sprintf("queues=%d/changed", queues), func(b *testing.B) {
			b.ReportAllocs()
			other := testQueuePod("q0", "other", 0, nil)
			require.Nil(b, prefilter(s, other))
			ctx, cs := context.Background(), schedframework.NewCycleState()
			for i := 0; b.Loop(); i++ {
				// A reservation, or its undoing, between two comparisons.
				b.StopTimer()
				if i%2 == 0 {
					require.Nil(b, s.Reserve(ctx, cs, other, "n"))
				} else {
					s.Unreserve(ctx, cs, other, "n")
				}
				b.StartTimer()
				s.Less(pods[i%queues], pods[(i+1)%queues])
			}
		})
	}
}

// newSortingB is newSorting for a benchmark: queues of equal weight, a node of
// room for them.
func newSortingB(b *testing.B, queues int) *plugin.Sorting {
	raw, err := json.Marshal(queuesArgs(map[string]any{"policy": "DRF"}))
	require.NoError(b, err)
	p, err := plugin.New(context.Background(), &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}, nil)
	require.NoError(b, err)
	s := p.(*plugin.Sorting)
	sched := s.Scheduler()
	require.NoError(b, sched.AddNode(finegrain.Node{ID: "n", Capacity: sched.Schema().MustTuple(int64(queues)*4000, int64(queues)*16*gib)}))
	return s
}

// A pod retried since room was freed gives way at Reserve, once for that room, when
// a pod refused earlier waits in a queue that stands before its own; a pod's first
// cycle never does; otherwise it reserves.
func TestPodGivesWayToAPoorerQueueWhenRoomFrees(t *testing.T) {
	s := newSorting(t, queuesArgs(map[string]any{}))
	ctx := context.Background()
	a0, a1, b1 := testQueuePod("a", "a0", 0, nil), testQueuePod("a", "a1", 0, nil), testQueuePod("b", "b1", 0, nil)
	for _, p := range []*v1.Pod{a0, a1, b1} {
		require.Nil(t, prefilter(s, p), p.Name)
	}
	require.Nil(t, s.Reserve(ctx, schedframework.NewCycleState(), a0, "n"), "a holds a pod")
	_, st := s.PostFilter(ctx, schedframework.NewCycleState(), b1, schedframework.NewDefaultNodeToStatus())
	require.NotNil(t, st, "b1 found no room: refused, and waiting")
	reserve := func(p *v1.Pod, freed bool) *fwk.Status {
		cs := schedframework.NewCycleState()
		_, st := s.PreFilter(ctx, cs, p, nil)
		require.Nil(t, st)
		if freed {
			s.RoomFreed() // during the cycle
		}
		return s.Reserve(ctx, cs, p, "n")
	}

	s.RoomFreed() // before a1's second cycle, which a stale order may begin
	cs := schedframework.NewCycleState()
	_, st = s.PreFilter(ctx, cs, a1, nil)
	require.Nil(t, st)
	st = s.Reserve(ctx, cs, a1, "n")
	require.NotNil(t, st)
	assert.Equal(t, fwk.Unschedulable, st.Code())
	assert.Equal(t, "finegrain: room freed goes first to queue b, which stands before queue a", st.Message())
	state, _ := s.Scheduler().TaskState(string(a1.UID))
	assert.Equal(t, finegrain.Pending, state)
	assert.Nil(t, reserve(a1, false), "it gave way for that room once: now it reserves")
	s.Unreserve(ctx, schedframework.NewCycleState(), a1, "n")
	assert.NotNil(t, reserve(a1, true), "another room freed, during its cycle: it gives way again")
	assert.Nil(t, reserve(a1, false))

	c1 := testQueuePod("c", "c1", 0, nil)
	assert.Nil(t, reserve(c1, true), "a first cycle never gives way")
	s.Unreserve(ctx, schedframework.NewCycleState(), c1, "n")
	assert.Nil(t, reserve(c1, true), "c stands as b does (neither holds anything): no queue stands before it")
}
