package promusage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/adapters/kubernetes/promusage"
)

// What the source learns of a pod that ran 45 seconds, from a Prometheus (here a fake
// one) that has its memory from 15s on and its CPU from 30s on (a rate needs two
// scrapes). Each point becomes the sample of the step before it; a value a query
// lacks at a timestamp is held from its last one (before its first, from its first). A kube-scheduler binary
// gives the source to the plugin with
// app.WithPlugin(plugin.Name, plugin.NewFactory(plugin.WithUsageSource(src))), as
// cmd/kube-scheduler-prometheus does.
func Example() {
	started := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // 1767268800 in Unix seconds
	var (
		mu    sync.Mutex
		asked []string
	)
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm() // query, start, end and step, form-encoded
		mu.Lock()
		asked = append(asked, fmt.Sprintf("%s start=%s end=%s step=%s", r.Form.Get("query"), r.Form.Get("start"), r.Form.Get("end"), r.Form.Get("step")))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.Form.Get("query"), "cpu") { // cores
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[`+
				`[1767268830,"1.5"],[1767268845,"0.25"]]}]}}`)
			return
		}
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[`+ // bytes
			`[1767268815,"2147483648"],[1767268830,"4294967296"],[1767268845,"1073741824"]]}]}}`)
	}))
	defer prom.Close()

	src, err := promusage.NewFromAddress(prom.URL) // step 15s, CPU rate over 1m
	if err != nil {
		fmt.Println(err)
		return
	}
	// The plugin's units: a plugin started when the pod did.
	p, err := plugin.NewFactory(plugin.WithUsageSource(src), plugin.WithClock(clocktesting.NewFakePassiveClock(started)))(context.Background(), nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "train-1"},
		Status: corev1.PodStatus{
			StartTime: &metav1.Time{Time: started},
			ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.Time{Time: started.Add(45 * time.Second)}},
			}}},
		},
	}
	usage, err := src.Usage(context.Background(), pod, p.(*plugin.Plugin).Units())
	if err != nil {
		fmt.Println(err)
		return
	}
	slices.Sort(asked)
	for _, q := range asked {
		fmt.Println(q)
	}
	for _, s := range usage.Series.Samples {
		fmt.Printf("from %v: %d millicores, %d MiB\n", s.At, s.Usage[0], s.Usage[1]>>20)
	}
	// Output:
	// sum(max_over_time(container_memory_working_set_bytes{namespace="batch",pod="train-1",container!="",container!="POD"}[15s])) start=1767268800 end=1767268845 step=15
	// sum(rate(container_cpu_usage_seconds_total{namespace="batch",pod="train-1",container!="",container!="POD"}[1m])) start=1767268800 end=1767268845 step=15
	// from 0s: 1500 millicores, 2048 MiB
	// from 15s: 1500 millicores, 4096 MiB
	// from 30s: 250 millicores, 1024 MiB
}
