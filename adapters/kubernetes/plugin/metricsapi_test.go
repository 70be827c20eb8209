package plugin_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// The MetricsAPI usage source, in the real kube-scheduler loop: the plugin reads the
// fake metrics clientset when a test says so (Plugin.SampleNow), at the time the
// test's clock says.

const mib = int64(1) << 20

// estimate is what finegrain predicts for pods labelled finegrain.io/logic=logic.
func estimate(c *cluster, logic string) (stage.Profile, bool) {
	return c.plugin.Scheduler().Estimator().Estimate(predict.Key{Logic: ns + "/finegrain.io/logic=" + logic})
}

// end marks pod name ended in phase, its container terminated at finished (none when
// zero).
func (c *cluster) end(name string, phase v1.PodPhase, finished time.Time) {
	c.t.Helper()
	p := c.get(name).DeepCopy()
	p.Status.Phase = phase
	if !finished.IsZero() {
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "main", State: v1.ContainerState{
			Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)},
		}}}
	}
	_, err := c.client.CoreV1().Pods(ns).UpdateStatus(c.ctx, p, metav1.UpdateOptions{})
	require.NoError(c.t, err)
}

// samples steps the clock by 15s n times, each time setting pod name's usage and
// sampling.
func (c *cluster) samples(name string, n int, cpu, mem string) {
	c.t.Helper()
	for range n {
		c.clock.step(15 * time.Second)
		c.podUsage(name, cpu, mem)
		c.sample()
	}
}

// forgotten waits until the sampler no longer follows pod name (it forgets an ended
// pod just after finegrain ends it).
func (c *cluster) forgotten(name string) {
	c.t.Helper()
	c.waitFor(name+" to be no longer followed", func() bool {
		_, followed := c.plugin.TrackedSeries(ns, name)
		return !followed
	})
}

// A pod's sampled usage teaches the next pod of its similarity key: it asked 6 GiB
// and used 1 GiB, and the next one, asking 6 GiB too, is placed beside a pod holding
// 6 GiB of the node's 8, where its request would not fit; a pod of another key asking
// the same is not. The series ends when the pod's container terminated.
func TestSampledSeriesTeachesTheNextSimilarPod(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	etl := map[string]string{"finegrain.io/logic": "etl"}
	c.create(pod{name: "first", cpu: "1", mem: "6Gi", labels: etl})
	c.waitBound("first")
	c.running("first")
	c.samples("first", 3, "500m", "1Gi") // fewer than 4: no running report
	series, ok := c.plugin.TrackedSeries(ns, "first")
	require.True(t, ok, "the sampler follows the pod it placed")
	require.Equal(t, 3, series.Len())
	assert.Equal(t, gib, series.Peak()[1])
	_, predicted := estimate(c, "etl")
	require.False(t, predicted, "nothing is learned before the pod ends")

	terminated := c.clock.Now().Add(10 * time.Second)
	c.clock.step(30 * time.Second)
	c.end("first", v1.PodSucceeded, terminated)
	c.waitState("first", finegrain.Finished)
	prof, predicted := estimate(c, "etl")
	require.True(t, predicted, "the finished pod's series taught its key")
	assert.Equal(t, gib, prof.Peak()[1])
	assert.Equal(t, 40*time.Second, prof.Duration(), "from the first sample (15s) to the termination (55s), not to when the plugin saw it (75s)")
	c.forgotten("first")

	c.learnedPlacesNext(etl)
}

// A running pod's series is reported when its samples have doubled (4, 8, ...): its
// key is predictable before any of its pods has finished. The running estimate holds
// the CPU it used (memory is held at least at the request until the pod ends), so
// the next pod of the key, asking 3 cores, fits beside two pods holding 6 of the
// node's 8; a pod of another key asking the same does not.
func TestRunningPodTeachesBeforeAnyFinishes(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "8", "32Gi")
	etl := map[string]string{"finegrain.io/logic": "etl"}
	c.create(pod{name: "first", cpu: "3", mem: "1Gi", labels: etl})
	c.waitBound("first")
	c.running("first")
	c.samples("first", 3, "500m", "512Mi")
	_, predicted := estimate(c, "etl")
	require.False(t, predicted, "three samples are not reported")
	c.samples("first", 1, "500m", "512Mi")
	prof, predicted := estimate(c, "etl")
	require.True(t, predicted, "the fourth sample reports the running pod")
	assert.Equal(t, stage.Forever, prof.Duration(), "a running pod's estimate has no end")
	assert.Equal(t, int64(500), prof.Peak()[0])
	st, _ := c.plugin.Scheduler().TaskState("uid-first")
	assert.Equal(t, finegrain.Running, st, "first still runs")

	c.create(pod{name: "blocker", cpu: "3", mem: "1Gi"})
	c.waitBound("blocker")
	c.create(pod{name: "other", cpu: "3", mem: "1Gi", labels: map[string]string{"finegrain.io/logic": "report"}})
	assert.Contains(t, c.waitUnschedulable("other"), "cpu")
	c.create(pod{name: "second", cpu: "3", mem: "1Gi", labels: etl})
	assert.Equal(t, "n1", c.waitBound("second"), "second is placed on what first uses")
	assert.Empty(t, c.get("other").Spec.NodeName)
}

// A pod that failed or was deleted did not finish its work: a series of at least two
// samples is reported as a running pod's (what a run uses at least), which makes its
// key predictable; a single sample teaches nothing. Either way the pod is cancelled
// and no longer followed.
func TestFailedOrDeletedPodsTeachWhatTheyUsedWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples int
		end     func(c *cluster)
		learns  bool
	}{
		{"failed after two samples", 2, func(c *cluster) { c.end("first", v1.PodFailed, time.Time{}) }, true},
		{"deleted after two samples", 2, func(c *cluster) { c.delete("first") }, true},
		{"failed after one sample", 1, func(c *cluster) { c.end("first", v1.PodFailed, time.Time{}) }, false},
		{"deleted unsampled", 0, func(c *cluster) { c.delete("first") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t, setup{})
			c.node("n1", "4", "8Gi")
			c.create(pod{name: "first", cpu: "1", mem: "6Gi", labels: map[string]string{"finegrain.io/logic": "etl"}})
			c.waitBound("first")
			c.running("first")
			c.samples("first", tc.samples, "700m", "1Gi")
			c.clock.step(15 * time.Second)
			tc.end(c)
			c.waitState("first", finegrain.Cancelled)
			prof, predicted := estimate(c, "etl")
			require.Equal(t, tc.learns, predicted)
			if tc.learns {
				assert.Equal(t, int64(700), prof.Peak()[0], "what it used while it ran")
				assert.Equal(t, stage.Forever, prof.Duration(), "a lower bound: no end")
			}
			c.forgotten("first")
		})
	}
}

// A pod whose samples are beyond its node (100 GiB on a node of 8) still finishes,
// and teaches nothing: the library refuses the implausible observation, and the next
// pod of its key is placed by its request.
func TestImplausibleSamplesTeachNothing(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	key := map[string]string{"finegrain.io/logic": "etl"}
	c.create(pod{name: "first", cpu: "1", mem: "6Gi", labels: key})
	c.waitBound("first")
	c.running("first")
	c.samples("first", 4, "500m", "100Gi") // the fourth would report it running
	_, predicted := estimate(c, "etl")
	require.False(t, predicted, "the running report was refused")
	c.clock.step(15 * time.Second)
	c.finish("first", "")
	c.waitState("first", finegrain.Finished)
	_, predicted = estimate(c, "etl")
	assert.False(t, predicted, "the finish taught nothing")
	assert.NotEmpty(t, c.logs.errors(plugin.Name, "usage of a finished pod refused"), "the refusal is logged")

	c.requestPlacesNext(key)
}

// Readings that go back in time, or hold a negative quantity, are dropped and
// counted, and logged once for the pod; a reading whose timestamp did not advance is
// skipped without a word.
func TestBadReadingsAreDroppedAndCounted(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "p", cpu: "1", mem: "2Gi"})
	c.waitBound("p")
	c.running("p")
	c.samples("p", 1, "500m", "1Gi")
	c.sample() // the same reading again: skipped
	c.podUsageAt("p", c.clock.Now().Add(-30*time.Second), "500m", "1Gi")
	c.sample() // back in time: refused
	c.clock.step(15 * time.Second)
	c.podUsage("p", "500m", "-1Gi")
	c.sample() // negative: refused
	c.samples("p", 1, "600m", "1Gi")

	series, ok := c.plugin.TrackedSeries(ns, "p")
	require.True(t, ok)
	assert.Equal(t, 2, series.Len(), "the two good readings")
	assert.Equal(t, int64(2), c.plugin.DroppedSamples())
	logged := c.logs.errors(plugin.Name, "metrics reading refused")
	require.Len(t, logged, 1, "logged once for the pod")
	assert.Contains(t, logged[0].err.Error(), "before the previous one")
}

// A pod sampled ten times its bound keeps at most the bound, covering its whole run
// at a coarser resolution: its memory peak is kept, its CPU time too.
func TestSeriesStaysBounded(t *testing.T) {
	const bound = 8
	c := startCluster(t, setup{args: map[string]any{"maxSamplesPerPod": bound}})
	c.node("n1", "8", "16Gi")
	c.create(pod{name: "p", cpu: "2", mem: "8Gi"})
	c.waitBound("p")
	c.running("p")
	var cpuTime float64 // millicore-seconds, as sampled: each reading holds until the next
	for i := range 10 * bound {
		c.clock.step(15 * time.Second)
		mem, cpu := "1Gi", 200+10*(i%7)
		if i == 37 {
			mem = "5Gi"
		}
		if i > 0 {
			cpuTime += float64(200+10*((i-1)%7)) * 15
		}
		c.podUsage("p", fmt.Sprintf("%dm", cpu), mem)
		c.sample()
		series, _ := c.plugin.TrackedSeries(ns, "p")
		require.LessOrEqual(t, series.Len(), bound, "after %d samples", i+1)
	}
	series, ok := c.plugin.TrackedSeries(ns, "p")
	require.True(t, ok)
	assert.Equal(t, 5*gib, series.Peak()[1], "the memory peak is kept")
	first, last := series.Samples[0].At, series.Samples[series.Len()-1].At
	assert.Equal(t, 79*15*time.Second, last-first, "the whole run is covered")
	var merged float64
	for i := 0; i+1 < series.Len(); i++ {
		merged += float64(series.Samples[i].Usage[0]) * (series.Samples[i+1].At - series.Samples[i].At).Seconds()
	}
	assert.InEpsilon(t, cpuTime, merged, 0.01, "the CPU time is kept, but for each merge rounding its mean to a millicore")
}

// A node whose usage runs far above what finegrain holds on it, with little idle,
// stops allocating: the usage report changes its mode, an Event says so on the Node,
// and the next pod, which fits by its request, is not placed there.
func TestNodeUsageChangesTheNodeMode(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "small", cpu: "100m", mem: "256Mi"})
	assert.Equal(t, "n1", c.waitBound("small"), "n1 takes pods")
	c.running("small")
	assert.Equal(t, policy.ModeFineGrained, c.plugin.Scheduler().Adjuster().Mode("n1"))

	c.nodeUsage("n1", "3900m", "7800Mi") // other work finegrain does not know of
	c.sample()                           // the node's first reading starts its window
	for range 3 {
		c.clock.step(15 * time.Second)
		c.nodeUsage("n1", "3900m", "7800Mi")
		c.sample()
	}
	assert.Equal(t, policy.ModeFineGrained, c.plugin.Scheduler().Adjuster().Mode("n1"), "no report before a window (1m) has passed")
	c.clock.step(15 * time.Second)
	c.nodeUsage("n1", "3900m", "7800Mi")
	c.sample()
	assert.Equal(t, policy.ModeStopAllocation, c.plugin.Scheduler().Adjuster().Mode("n1"))
	score, ok := c.plugin.Scheduler().Adjuster().Score("n1")
	require.True(t, ok)
	cpuShare, memShare := float64(3900-100)/4000, float64(7800*mib-256*mib)/float64(8*gib)
	assert.InDelta(t, max(cpuShare, memShare), score, 0.001, "√F/N of the worst resource: usage above what finegrain holds, as a share of the node")
	assert.NotEmpty(t, c.logs.infos(plugin.Name, "node mode changed"))

	var event string
	c.waitFor("the mode change's Event", func() bool {
		events, err := c.client.EventsV1().Events(metav1.NamespaceDefault).List(c.ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, e := range events.Items {
			if e.Reason == plugin.ModeChangedReason && e.Regarding.Kind == "Node" && e.Regarding.Name == "n1" {
				assert.Equal(t, v1.EventTypeWarning, e.Type)
				assert.Equal(t, types.UID("node-n1"), e.Regarding.UID)
				event = e.Note
				return true
			}
		}
		return false
	})
	assert.Contains(t, event, "FineGrained -> StopAllocation")

	c.create(pod{name: "after", cpu: "100m", mem: "256Mi"})
	assert.Contains(t, c.waitUnschedulable("after"), "policy stop")
	assert.Empty(t, c.get("after").Spec.NodeName)
}

// Without metrics-server (metrics.k8s.io answers NotFound), the plugin schedules on,
// learning nothing, and logs one error however many rounds fail; when the API
// answers again it says so, and a new outage is logged once more.
func TestMetricsAPIAbsent(t *testing.T) {
	var absent atomic.Bool
	absent.Store(true)
	c := startCluster(t, setup{metrics: func(m *metricsfake.Clientset) {
		m.PrependReactor("list", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
			if !absent.Load() {
				return false, nil, nil
			}
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "metrics.k8s.io", Resource: action.GetResource().Resource}, "")
		})
	}})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "p", cpu: "1", mem: "1Gi", labels: map[string]string{"finegrain.io/logic": "etl"}})
	assert.Equal(t, "n1", c.waitBound("p"), "scheduling goes on")
	c.running("p")
	for range 5 {
		c.clock.step(15 * time.Second)
		c.sample()
	}
	assert.Equal(t, 10, c.metricsLists(), "each round tried both lists")
	unavailable := "metrics.k8s.io is not available"
	require.Len(t, c.logs.errors(plugin.Name, unavailable), 1, "one error for the outage")
	_, tracked := c.plugin.TrackedSeries(ns, "p")
	assert.True(t, tracked)
	c.create(pod{name: "q", cpu: "1", mem: "1Gi"})
	assert.Equal(t, "n1", c.waitBound("q"))

	absent.Store(false)
	c.clock.step(15 * time.Second)
	c.sample()
	assert.Len(t, c.logs.infos(plugin.Name, "metrics.k8s.io is available again"), 1)
	absent.Store(true)
	c.clock.step(15 * time.Second)
	c.sample()
	c.sample()
	assert.Len(t, c.logs.errors(plugin.Name, unavailable), 2, "a new outage, logged once more")
}

// A replica that has not scheduled (a standby, before it leads) makes no metrics
// calls: the sampler starts with the first scheduling cycle. Then each round is one
// List of pods and one of nodes.
func TestStandbyMakesNoMetricsCalls(t *testing.T) {
	c := startCluster(t, setup{})
	c.node("n1", "4", "8Gi")
	c.nodeUsage("n1", "1", "1Gi")
	c.waitFor("the node to reach the plugin", func() bool { _, err := c.plugin.Scheduler().NodeFree("n1", 0); return err == nil })
	c.clock.step(time.Minute)
	assert.False(t, c.plugin.SampleNow(), "the sampler has not started")
	assert.Empty(t, c.metrics.Actions(), "no metrics call before the first scheduling cycle")

	c.create(pod{name: "p", cpu: "1", mem: "1Gi"})
	c.waitBound("p")
	c.running("p")
	assert.Empty(t, c.metrics.Actions(), "the sampler waits an interval before its first round")
	c.clock.step(15 * time.Second)
	c.sample()
	var lists []string
	for _, a := range c.metrics.Actions() {
		lists = append(lists, a.GetVerb()+" "+a.GetResource().Resource+" in "+fmt.Sprintf("%q", a.GetNamespace()))
	}
	assert.Equal(t, []string{`list pods in ""`, `list nodes in ""`}, lists, "one list of pods across all namespaces, one of nodes")
}
