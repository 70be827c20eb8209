package plugin_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// Classes, objectives and progress from the pods' annotations (mixed.go), in the real
// kube-scheduler loop over the fake clientset.

// annotate sets annotation key of pod name to value, through the API.
func (c *cluster) annotate(name, key, value string) {
	c.t.Helper()
	p := c.get(name).DeepCopy()
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[key] = value
	_, err := c.client.CoreV1().Pods(ns).Update(c.ctx, p, metav1.UpdateOptions{})
	require.NoError(c.t, err)
}

// podEvent waits for an Event of reason on pod name whose note holds note, and
// returns it.
func (c *cluster) podEvent(name, reason, note string) eventsv1.Event {
	c.t.Helper()
	var found eventsv1.Event
	c.waitFor("a "+reason+" Event on "+name+" saying "+note, func() bool {
		events, err := c.client.EventsV1().Events(ns).List(c.ctx, metav1.ListOptions{})
		require.NoError(c.t, err)
		for _, e := range events.Items {
			if e.Reason == reason && e.Regarding.Kind == "Pod" && e.Regarding.Name == name && strings.Contains(e.Note, note) {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

// Classes and objectives come from the pods: a malformed class or objective, or an
// objective on a batch pod, keeps the pod unscheduled with a message naming the
// annotation; a progress that cannot be read is not reported, and an Event says so.
func TestClassesAndProgressFromPods(t *testing.T) {
	c := startCluster(t, setup{args: map[string]any{"usageSource": plugin.UsageSourceAnnotation}})
	c.node("n1", "8", "16Gi")
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		labels      map[string]string
		want        string
	}{
		{"bad-class", map[string]string{plugin.ClassAnnotation: "interactive"}, nil, "annotation finegrain.io/class"},
		{"bad-slo", map[string]string{plugin.ClassAnnotation: "LS", plugin.SLOAnnotation: "soon"}, nil, "annotation finegrain.io/slo"},
		{"batch-slo", map[string]string{plugin.SLOAnnotation: "30s"}, map[string]string{plugin.KoordinatorQoSLabel: "BE"}, "an objective on a batch pod"},
	} {
		c.create(pod{name: tc.name, cpu: "100m", mem: "64Mi", annotations: tc.annotations, labels: tc.labels})
		assert.Contains(t, c.waitUnschedulable(tc.name), tc.want, tc.name)
	}
	c.create(pod{name: "koord", cpu: "100m", mem: "64Mi", labels: map[string]string{plugin.KoordinatorQoSLabel: "LSR"}, annotations: map[string]string{plugin.SLOAnnotation: "1m"}})
	c.waitBound("koord")
	c.waitState("koord", finegrain.Running)
	c.annotate("koord", plugin.ProgressAnnotation, "42%")
	e := c.podEvent("koord", plugin.BadProgressReason, `finegrain.io/progress="42%" not reported`)
	assert.Equal(t, v1.EventTypeWarning, e.Type)
	c.annotate("koord", plugin.ProgressAnnotation, "0.5")
	c.waitFor("a good value reported", func() bool { return c.plugin.ReportedProgress(ns, "koord") == "0.5" })
	c.annotate("koord", plugin.ProgressAnnotation, "0.25")
	c.waitFor("a lower value seen", func() bool { return c.plugin.ReportedProgress(ns, "koord") == "0.25" })
	assert.Len(t, c.logs.errors(plugin.Name, "progress not reported"), 1, "once a pod at level 0")
}

func TestParseProgressAndSLO(t *testing.T) {
	for _, tc := range []struct {
		text string
		want float64
		err  string
	}{
		{"0", 0, ""}, {"1", 1, ""}, {"0.42", 0.42, ""}, {" 0.5 ", 0.5, ""}, {"1e-3", 0.001, ""},
		{"42%", 0, "want a number in [0, 1]"}, {"", 0, "want a number"}, {"1.01", 0, "outside [0, 1]"},
		{"-0.1", 0, "outside [0, 1]"}, {"NaN", 0, "outside [0, 1]"}, {"Inf", 0, "outside [0, 1]"},
	} {
		x, err := plugin.ParseProgress(tc.text)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%q", tc.text)
			continue
		}
		require.NoError(t, err, "%q", tc.text)
		assert.Equal(t, tc.want, x, "%q", tc.text)
	}
	for _, tc := range []struct {
		text string
		want time.Duration
		err  string
	}{
		{"30s", 30 * time.Second, ""}, {"1m30s", 90 * time.Second, ""}, {"45", 45 * time.Second, ""}, {"0.5", 500 * time.Millisecond, ""},
		{"0", 0, "positive"}, {"-1s", 0, "negative"}, {"soon", 0, "want a duration"}, {"1e300", 0, "too long"},
	} {
		d, err := plugin.ParseSLO(tc.text)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%q", tc.text)
			continue
		}
		require.NoError(t, err, "%q", tc.text)
		assert.Equal(t, tc.want, d, "%q", tc.text)
	}
}

// Whatever the text, ParseProgress returns a number in [0, 1] or an error.
func FuzzParseProgress(f *testing.F) {
	for _, s := range []string{"0.42", "1", "0", "42%", "NaN", "-0", "1e-400", " 0.5", "0x1p-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		x, err := plugin.ParseProgress(text)
		if err == nil && !(x >= 0 && x <= 1) {
			t.Fatalf("%q: %v", text, x)
		}
	})
}

// Whatever the text, ParseSLO returns a positive duration or an error, and
// classOf's readers never panic.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"30s", "45", "0.5", "0", "-1s", "1e300", "9223372036.854775807", "soon"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d, err := plugin.ParseSLO(text)
		if err == nil && d <= 0 {
			t.Fatalf("%q: %v", text, d)
		}
		_, _ = plugin.ParseClass(text)
	})
}
