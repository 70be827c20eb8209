package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// env is a getenv of m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// The environment read, and what is refused, with the variable named.
func TestSourceFromEnv(t *testing.T) {
	const url = "http://prometheus.monitoring:9090"
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // in the error; none: accepted
		desc []any
	}{
		{name: "no URL", env: nil,
			want: "FINEGRAIN_PROMETHEUS_URL is not set: the Prometheus to learn the pods' usage from, such as http://prometheus.monitoring:9090"},
		{name: "a blank URL", env: map[string]string{envURL: "  "}, want: "FINEGRAIN_PROMETHEUS_URL is not set"},
		{name: "no scheme", env: map[string]string{envURL: "prometheus.monitoring:9090"},
			want: `FINEGRAIN_PROMETHEUS_URL="prometheus.monitoring:9090": not an http or https URL with a host`},
		{name: "not a URL, password hidden", env: map[string]string{envURL: "http://u:secret@[::1"}, want: "FINEGRAIN_PROMETHEUS_URL: not a URL: missing ']' in host"},
		{name: "another scheme, password hidden", env: map[string]string{envURL: "ftp://u:secret@prometheus"},
			want: `FINEGRAIN_PROMETHEUS_URL="ftp://u:xxxxx@prometheus": not an http or https URL`},
		{name: "a step without its unit", env: map[string]string{envURL: url, envStep: "15"},
			want: `FINEGRAIN_PROMETHEUS_STEP="15": not a duration such as 15s or 1m`},
		{name: "a step too short", env: map[string]string{envURL: url, envStep: "500ms"},
			want: `promusage: FINEGRAIN_PROMETHEUS_STEP="500ms": step 500ms: want at least 1s`},
		{name: "a rate window of zero", env: map[string]string{envURL: url, envRateWindow: "0s"},
			want: `promusage: FINEGRAIN_PROMETHEUS_RATE_WINDOW="0s": rate window 0s: want at least 1s`},
		{name: "a negative timeout", env: map[string]string{envURL: url, envTimeout: "-1s"},
			want: `promusage: FINEGRAIN_PROMETHEUS_TIMEOUT="-1s": timeout -1s: want a positive duration`},
		{name: "a label without a value", env: map[string]string{envURL: url, envLabels: "job"},
			want: `FINEGRAIN_PROMETHEUS_LABELS="job": "job": want name=value`},
		{name: "a label without a name", env: map[string]string{envURL: url, envLabels: "=kubelet"},
			want: `FINEGRAIN_PROMETHEUS_LABELS="=kubelet": "=kubelet": want name=value`},
		{name: "a label twice", env: map[string]string{envURL: url, envLabels: "job=a,job=b"},
			want: `FINEGRAIN_PROMETHEUS_LABELS="job=a,job=b": label "job" given twice`},
		{name: "a label of the source's", env: map[string]string{envURL: url, envLabels: "pod=x"},
			want: `FINEGRAIN_PROMETHEUS_LABELS="pod=x": label "pod": the source matches it itself`},
		{name: "the URL alone", env: map[string]string{envURL: url}, desc: []any{"url", url}},
		{name: "everything", env: map[string]string{envURL: "https://u:secret@prometheus/prom", envStep: "30s", envRateWindow: "2m",
			envTimeout: "5s", envLabels: " job = kubelet , metrics_path=/metrics/cadvisor"},
			desc: []any{"url", "https://u:xxxxx@prometheus/prom", "step", 30 * time.Second, "rate_window", 2 * time.Minute, "timeout", 5 * time.Second,
				"labels", map[string]string{"job": "kubelet", "metrics_path": "/metrics/cadvisor"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, desc, err := sourceFromEnv(env(tc.env))
			if tc.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
				assert.NotContains(t, err.Error(), "secret")
				assert.Nil(t, src)
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, src)
			assert.Equal(t, tc.desc, desc)
		})
	}
}

// The variables reach the queries: the step, the rate window, the timeout and the
// labels, as a fake Prometheus receives them.
func TestEnvReachesTheQueries(t *testing.T) {
	var (
		mu    sync.Mutex
		asked []string
	)
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.NoError(t, r.ParseForm())
		mu.Lock()
		asked = append(asked, r.URL.Path+" "+r.Form.Get("query")+" step="+r.Form.Get("step")+" timeout="+r.Form.Get("timeout"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer prom.Close()
	src, _, err := sourceFromEnv(env(map[string]string{envURL: prom.URL + "/prom", envStep: "30s", envRateWindow: "2m",
		envTimeout: "5s", envLabels: "job=kubelet,metrics_path=/metrics/cadvisor"}))
	require.NoError(t, err)

	started := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p, err := plugin.NewFactory(plugin.WithClock(clocktesting.NewFakePassiveClock(started)))(context.Background(), nil, nil)
	require.NoError(t, err)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "train-1"},
		Status: corev1.PodStatus{StartTime: &metav1.Time{Time: started}, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.Time{Time: started.Add(time.Hour)}}}}}},
	}
	usage, err := src.Usage(context.Background(), pod, p.(*plugin.Plugin).Units())
	require.NoError(t, err)
	assert.Zero(t, usage)
	const sel = `{namespace="batch",pod="train-1",container!="",container!="POD",job="kubelet",metrics_path="/metrics/cadvisor"}`
	assert.ElementsMatch(t, []string{
		`/prom/api/v1/query_range sum(rate(container_cpu_usage_seconds_total` + sel + `[2m])) step=30 timeout=5s`,
		`/prom/api/v1/query_range sum(max_over_time(container_memory_working_set_bytes` + sel + `[30s])) step=30 timeout=5s`,
	}, asked)
}

// The factory: without a URL it fails, naming the variable, which kube-scheduler
// reports when it builds the profile; with one it builds the plugin and asks
// Prometheus nothing yet.
func TestFactory(t *testing.T) {
	_, err := factory(env(nil))(context.Background(), nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FINEGRAIN_PROMETHEUS_URL is not set")

	var asked atomic.Bool
	prom := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { asked.Store(true) }))
	defer prom.Close()
	p, err := factory(env(map[string]string{envURL: prom.URL}))(context.Background(), nil, nil)
	require.NoError(t, err)
	assert.IsType(t, &plugin.Plugin{}, p)
	assert.False(t, asked.Load())
}

// kube-scheduler's command is intact: its flags parse, and --help needs no URL.
func TestCommand(t *testing.T) {
	cmd := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, factory(env(nil))))
	assert.Equal(t, "kube-scheduler", cmd.Use)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--help"})
	require.NoError(t, cmd.Execute())
	for _, flag := range []string{"--config", "--leader-elect", "--kubeconfig"} {
		assert.True(t, strings.Contains(out.String(), flag), "help lists %s", flag)
	}
	require.NoError(t, cmd.ParseFlags([]string{"--config=/etc/kubernetes/scheduler-config.yaml", "--leader-elect=false"}))
	assert.Equal(t, "/etc/kubernetes/scheduler-config.yaml", cmd.Flag("config").Value.String())
}
