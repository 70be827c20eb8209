package plugin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/finegrain/finegrain"
)

// The class and objective of a pod, from its annotations and Koordinator's label.
func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		labels      map[string]string
		class       finegrain.TaskClass
		slo         time.Duration
		err         string
	}{
		{name: "nothing: batch"},
		{name: "latency-sensitive", annotations: map[string]string{ClassAnnotation: "latency-sensitive", SLOAnnotation: "30s"}, class: finegrain.LatencySensitive, slo: 30 * time.Second},
		{name: "LS, in any case, blanks around", annotations: map[string]string{ClassAnnotation: " ls ", SLOAnnotation: "1m30s"}, class: finegrain.LatencySensitive, slo: 90 * time.Second},
		{name: "objective in seconds", annotations: map[string]string{ClassAnnotation: "LS", SLOAnnotation: "0.5"}, class: finegrain.LatencySensitive, slo: 500 * time.Millisecond},
		{name: "latency-sensitive without an objective", annotations: map[string]string{ClassAnnotation: "latency-sensitive"}, class: finegrain.LatencySensitive},
		{name: "batch", annotations: map[string]string{ClassAnnotation: "batch"}},
		{name: "BE", annotations: map[string]string{ClassAnnotation: "BE"}},
		{name: "Koordinator LSE", labels: map[string]string{KoordinatorQoSLabel: "LSE"}, class: finegrain.LatencySensitive},
		{name: "Koordinator LSR with an objective", labels: map[string]string{KoordinatorQoSLabel: "LSR"}, annotations: map[string]string{SLOAnnotation: "2m"}, class: finegrain.LatencySensitive, slo: 2 * time.Minute},
		{name: "Koordinator LS", labels: map[string]string{KoordinatorQoSLabel: "LS"}, class: finegrain.LatencySensitive},
		{name: "Koordinator BE", labels: map[string]string{KoordinatorQoSLabel: "BE"}},
		{name: "Koordinator SYSTEM", labels: map[string]string{KoordinatorQoSLabel: "SYSTEM"}},
		{name: "a Koordinator value it does not define: Koordinator's to check", labels: map[string]string{KoordinatorQoSLabel: "GOLD"}},
		{name: "the annotation over the label", labels: map[string]string{KoordinatorQoSLabel: "LS"}, annotations: map[string]string{ClassAnnotation: "batch"}},
		{name: "unknown class", annotations: map[string]string{ClassAnnotation: "interactive"}, err: "annotation finegrain.io/class"},
		{name: "empty class", annotations: map[string]string{ClassAnnotation: ""}, err: "annotation finegrain.io/class"},
		{name: "objective not a duration", annotations: map[string]string{ClassAnnotation: "LS", SLOAnnotation: "soon"}, err: "annotation finegrain.io/slo: want a duration"},
		{name: "zero objective", annotations: map[string]string{ClassAnnotation: "LS", SLOAnnotation: "0s"}, err: "want a positive duration"},
		{name: "negative objective", annotations: map[string]string{ClassAnnotation: "LS", SLOAnnotation: "-5s"}, err: "annotation finegrain.io/slo"},
		{name: "objective on a batch pod", annotations: map[string]string{SLOAnnotation: "30s"}, err: "an objective on a batch pod"},
		{name: "objective on a Koordinator BE pod", labels: map[string]string{KoordinatorQoSLabel: "BE"}, annotations: map[string]string{SLOAnnotation: "30s"}, err: "an objective on a batch pod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations, Labels: tc.labels}}
			class, slo, err := classOf(pod)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.class, class)
			assert.Equal(t, tc.slo, slo)
		})
	}
}
