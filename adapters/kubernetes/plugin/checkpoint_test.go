package plugin_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"maps"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/policy"
)

// The checkpoint ConfigMap of the test profile.
const (
	checkpointNS   = "kube-system"
	checkpointName = "finegrain-estimates-" + schedulerName
)

// checkpointMap reads the checkpoint ConfigMap from c's API.
func (c *cluster) checkpointMap() (*v1.ConfigMap, error) {
	return c.client.CoreV1().ConfigMaps(checkpointNS).Get(c.ctx, checkpointName, metav1.GetOptions{})
}

// placeSecond adds c's only node, n1 of 8 GiB, and checks that it places the next
// pod of the etl key on what it learned (want) or by its request.
func placeSecond(c *cluster, want bool) {
	c.t.Helper()
	c.node("n1", "4", "8Gi")
	if want {
		c.learnedPlacesNext(etlLabels)
	} else {
		c.requestPlacesNext(etlLabels)
	}
}

// withObjects seeds the fake clientset with objs.
func withObjects(objs ...*v1.ConfigMap) func(*fake.Clientset) {
	return func(fc *fake.Clientset) {
		for _, o := range objs {
			if err := fc.Tracker().Add(o); err != nil {
				panic(err)
			}
		}
	}
}

// What a plugin learned survives its restart: the replica that schedules writes its
// checkpoint, the next one restores it at its first scheduling cycle and places the
// next pod of the learned key as the first would have (on 1 GiB, beside a pod holding
// 6 GiB of 8), with the same estimate; without the checkpoint, on its request, it
// does not fit.
func TestCheckpointCarriesWhatWasLearnedAcrossARestart(t *testing.T) {
	a := startCluster(t, setup{args: annotationArgs})
	a.node("n0", "4", "8Gi")
	learnETL(a)
	want, ok := a.plugin.Scheduler().Estimator().Estimate(etlKey)
	require.True(t, ok, "the first plugin learned the key")
	require.NoError(t, a.plugin.Close(), "the leader's last checkpoint")
	cm, err := a.checkpointMap()
	require.NoError(t, err)
	assert.Equal(t, "1", cm.Annotations[plugin.CheckpointKeysAnnotation])
	assert.NotEmpty(t, cm.Annotations[plugin.CheckpointWrittenAnnotation])
	require.NotEmpty(t, cm.BinaryData[plugin.CheckpointKey])
	a.close()

	restoresBefore := checkpointCount(t, "restore", "ok")
	b := startCluster(t, setup{args: annotationArgs, client: withObjects(cm.DeepCopy())})
	placeSecond(b, true) // the restarted plugin places the pod on what it restored
	got, ok := b.plugin.Scheduler().Estimator().Estimate(etlKey)
	require.True(t, ok)
	assert.Equal(t, want.Stages(), got.Stages(), "the restored estimate is the learned one")
	assert.Equal(t, restoresBefore+1, checkpointCount(t, "restore", "ok"))
	assert.NotEmpty(t, b.logs.infos("FineGrain", "estimates restored"))

	fresh := startCluster(t, setup{args: annotationArgs})
	placeSecond(fresh, false) // without a checkpoint, the pod is placed by its 6 GiB request
}

// A checkpoint the plugin cannot use — not gzip, not a checkpoint, of another
// version, of another schema (other extended resources), or without its data — is
// refused with an error that says why and names the ConfigMap; the plugin starts
// empty and schedules on the pods' requests rather than failing.
func TestBadCheckpointIsRefusedAndThePluginStartsEmpty(t *testing.T) {
	gz := func(text string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte(text))
		require.NoError(t, w.Close())
		return b.Bytes()
	}
	// A real checkpoint of a profile that schedules an extended resource too.
	other := startCluster(t, setup{args: map[string]any{"usageSource": plugin.UsageSourceAnnotation, "extendedResources": []string{"example.com/foo"}}})
	other.node("n0", "4", "8Gi")
	learnETL(other)
	require.NoError(t, other.plugin.Close())
	otherCM, err := other.checkpointMap()
	require.NoError(t, err)
	other.close()

	for _, tc := range []struct {
		name string
		data map[string][]byte
		why  string
	}{
		{"not-gzip", map[string][]byte{plugin.CheckpointKey: []byte("{}")}, "gzip"},
		{"not-a-checkpoint", map[string][]byte{plugin.CheckpointKey: gz(`{"hello":1}`)}, "invalid checkpoint"},
		{"truncated", map[string][]byte{plugin.CheckpointKey: gz(`{"format":"finegrain/predict.SimilarTask","version":1,"schema":[`)}, "invalid checkpoint"},
		{"other-version", map[string][]byte{plugin.CheckpointKey: gz(`{"format":"finegrain/predict.SimilarTask","version":99}`)}, "reads version 1 only"},
		{"other-schema", otherCM.BinaryData, "schema"},
		{"no-data", map[string][]byte{"something-else": []byte("x")}, "holds no " + plugin.CheckpointKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: checkpointName, Namespace: checkpointNS}, BinaryData: tc.data}
			refused := checkpointCount(t, "restore", "refused")
			c := startCluster(t, setup{args: annotationArgs, client: withObjects(cm)})
			placeSecond(c, false) // an empty estimator places the pod by its request
			errs := c.logs.errors("FineGrain", "estimates not restored")
			require.Len(t, errs, 1)
			assert.Contains(t, errs[0].err.Error(), checkpointNS+"/"+checkpointName)
			assert.Contains(t, errs[0].err.Error(), tc.why)
			assert.Equal(t, refused+1, checkpointCount(t, "restore", "refused"))
			_, ok := c.plugin.Scheduler().Estimator().Estimate(etlKey)
			assert.False(t, ok, "nothing was restored")
		})
	}
}

// A replica that never scheduled (a standby under leader election) reads and writes
// no checkpoint, even when it stops; checkpointInterval 0 turns checkpoints off for a
// replica that schedules too.
func TestCheckpointsOnlyFromTheSchedulingReplica(t *testing.T) {
	count := func(calls *atomic.Int64) func(*fake.Clientset) {
		return func(fc *fake.Clientset) {
			fc.PrependReactor("*", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
				calls.Add(1)
				return false, nil, nil
			})
		}
	}
	var standby, off, on atomic.Int64
	c := startCluster(t, setup{args: annotationArgs, client: count(&standby)})
	c.node("n1", "4", "8Gi")
	require.NoError(t, c.plugin.Close())
	c.close()
	assert.Zero(t, standby.Load(), "a standby touched the checkpoint")

	c = startCluster(t, setup{args: map[string]any{"usageSource": plugin.UsageSourceAnnotation, "checkpointInterval": "0s"}, client: count(&off)})
	c.node("n1", "4", "8Gi")
	learnETL(c)
	require.NoError(t, c.plugin.Close())
	assert.Zero(t, off.Load(), "checkpoints are off")

	c = startCluster(t, setup{args: annotationArgs, client: count(&on)})
	c.node("n1", "4", "8Gi")
	learnETL(c)
	require.NoError(t, c.plugin.Close())
	assert.Equal(t, int64(3), on.Load(), "one read at the first cycle; at Close an update, then a create (none yet)")
}

// The replica that schedules writes a checkpoint every checkpointInterval of its
// clock, with what it has learned by then; a replica taking over from a leader that
// wrote no last checkpoint starts from it, having lost at most one interval.
func TestCheckpointEveryInterval(t *testing.T) {
	c := startCluster(t, setup{args: map[string]any{"usageSource": plugin.UsageSourceAnnotation, "checkpointInterval": "5m"}, ticking: true})
	c.node("n1", "4", "8Gi")
	c.create(pod{name: "starter", cpu: "1", mem: "1Gi"}) // the first cycle starts the checkpoints
	c.waitBound("starter")
	written := func() string {
		cm, err := c.checkpointMap()
		if apierrors.IsNotFound(err) {
			return ""
		}
		require.NoError(t, err)
		return cm.Annotations[plugin.CheckpointKeysAnnotation]
	}
	learnETL(c) // steps the clock 90 s: no checkpoint yet
	assert.Empty(t, written(), "written before its interval")
	c.clock.step(4 * time.Minute)
	c.waitFor("the checkpoint after 5 minutes", func() bool { return written() == "1" })

	// The leader is lost without a last checkpoint (killed, its node gone): the
	// replica that takes over starts from the periodic one.
	cm, err := c.checkpointMap()
	require.NoError(t, err)
	next := startCluster(t, setup{args: annotationArgs, client: withObjects(cm.DeepCopy())})
	placeSecond(next, true)
}

// A checkpoint that cannot be written is reported by Close, and counted.
func TestCheckpointWriteFailure(t *testing.T) {
	c := startCluster(t, setup{args: annotationArgs, client: func(fc *fake.Clientset) {
		fc.PrependReactor("create", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(v1.Resource("configmaps"), checkpointName, errors.New("denied by the test"))
		})
	}})
	c.node("n1", "4", "8Gi")
	learnETL(c)
	failed := checkpointCount(t, "write", "failed")
	err := c.plugin.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "forbidden")
	assert.Equal(t, failed+1, checkpointCount(t, "write", "failed"))
}

// The plugin's own metrics count what it learned and how it placed, on the
// scheduler's registry: a pod placed on its request, its usage learned, the next
// pod of its key placed on the prediction, with the estimate's error observed when
// that pod finishes.
func TestPluginMetrics(t *testing.T) {
	before := gather(t)
	c := startCluster(t, setup{args: annotationArgs})
	c.node("n1", "4", "8Gi")
	learnETL(c)
	predicted, ok := c.plugin.Scheduler().Estimator().Estimate(etlKey)
	require.True(t, ok)
	predictedMem := float64(predicted.Peak()[1])
	c.create(pod{name: "second", cpu: "1", mem: "6Gi", labels: etlLabels})
	c.waitBound("second")
	c.clock.step(90 * time.Second)
	c.finish("second", `[{"duration":"60s","cpu":"500m","memory":"2Gi"}]`)
	c.waitState("second", finegrain.Finished)
	after := gather(t)
	delta := func(name string, labels map[string]string) float64 {
		return after.value(t, name, labels) - before.value(t, name, labels)
	}
	prof := map[string]string{"profile": schedulerName}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"profile": schedulerName}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	assert.Equal(t, 2.0, delta("finegrain_observations_total", with("result", "learned")))
	assert.Equal(t, 1.0, delta("finegrain_placements_total", with("demand", "request", "compressed", "false")))
	assert.Equal(t, 1.0, delta("finegrain_placements_total", with("demand", "predicted", "compressed", "false")))
	assert.Equal(t, 1.0, after.value(t, "finegrain_estimator_keys", prof))
	assert.Equal(t, 1.0, delta("finegrain_estimate_error_ratio_count", with("resource", "cpu")))
	assert.Equal(t, 1.0, delta("finegrain_estimate_error_ratio_count", with("resource", "memory")))
	// The second pod was placed on first's memory (about 1 GiB) and used 2 GiB.
	used := float64(2 << 30)
	assert.InDelta(t, math.Abs(predictedMem-used)/used, delta("finegrain_estimate_error_ratio_sum", with("resource", "memory")), 1e-9)
	assert.Equal(t, 1.0, delta("finegrain_nodes", with("mode", policy.ModeFineGrained.String())))
}

// gathered is the legacy registry's metrics at one moment: each sample's value by
// its family's name (a histogram's as NAME_count and NAME_sum) and labels.
type gathered []gatheredSample

type gatheredSample struct {
	name   string
	labels map[string]string
	value  float64
}

func gather(t *testing.T) gathered {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	require.NoError(t, err)
	var out gathered
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "finegrain_") {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Counter != nil:
				out = append(out, gatheredSample{f.GetName(), labels, m.Counter.GetValue()})
			case m.Gauge != nil:
				out = append(out, gatheredSample{f.GetName(), labels, m.Gauge.GetValue()})
			case m.Histogram != nil:
				out = append(out, gatheredSample{f.GetName() + "_count", labels, float64(m.Histogram.GetSampleCount())},
					gatheredSample{f.GetName() + "_sum", labels, m.Histogram.GetSampleSum()})
			}
		}
	}
	return out
}

// value is the sample of name whose labels are exactly labels; 0 when there is none.
func (g gathered) value(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	for _, s := range g {
		if s.name == name && maps.Equal(s.labels, labels) {
			return s.value
		}
	}
	return 0
}

// checkpointCount is finegrain_checkpoints_total of the test profile, operation and
// result.
func checkpointCount(t *testing.T, operation, result string) float64 {
	t.Helper()
	return gather(t).value(t, "finegrain_checkpoints_total", map[string]string{"profile": schedulerName, "operation": operation, "result": result})
}
