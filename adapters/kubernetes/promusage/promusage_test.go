package promusage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/adapters/kubernetes/promusage"
	"github.com/finegrain/finegrain/predict"
)

const gib = 1 << 30

var (
	// epoch is when the plugin whose units the tests use started; start is when the
	// test pods started, a minute later.
	epoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	start = epoch.Add(time.Minute)
)

// request is what the fake Prometheus was asked.
type request struct {
	Method, Query, Start, End, Step, Timeout string
}

// fakeProm serves Prometheus' /api/v1/query_range: answer gives the status and body
// of each query (by its PromQL); the requests are recorded.
type fakeProm struct {
	*httptest.Server
	answer  func(r *http.Request, query string) (int, string)
	postNot bool // refuse POST with 405, as a proxy may: the client falls back to GET

	mu       sync.Mutex
	requests []request
}

func newFakeProm(t *testing.T, answer func(r *http.Request, query string) (int, string)) *fakeProm {
	t.Helper()
	f := &fakeProm{answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeProm) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query_range" {
		http.NotFound(w, r)
		return
	}
	if f.postNot && r.Method == http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil { // the POST body, form-encoded, or the GET query
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form.Get("query")
	f.mu.Lock()
	f.requests = append(f.requests, request{r.Method, q, r.Form.Get("start"), r.Form.Get("end"), r.Form.Get("step"), r.Form.Get("timeout")})
	f.mu.Unlock()
	code, body := f.answer(r, q)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// asked is what the fake was asked, CPU query first.
func (f *fakeProm) asked() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append([]request(nil), f.requests...)
	if len(out) == 2 && strings.Contains(out[0].Query, "memory") {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// tv is a point of an answer: at start+at, value v as Prometheus writes it.
type tv struct {
	at time.Duration
	v  string
}

// matrix is a successful answer of one series with pts, or of none without.
func matrix(pts ...tv) string {
	if len(pts) == 0 {
		return `{"status":"success","data":{"resultType":"matrix","result":[]}}`
	}
	vals := make([]string, len(pts))
	for i, p := range pts {
		vals[i] = fmt.Sprintf("[%s,%q]", unix(start.Add(p.at)), p.v)
	}
	return `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[` + strings.Join(vals, ",") + `]}]}}`
}

// unix is t as Prometheus' API writes times: seconds since the Unix epoch.
func unix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64)
}

// byMetric answers the CPU query with cpu and the memory query with mem.
func byMetric(cpu, mem string) func(*http.Request, string) (int, string) {
	return func(_ *http.Request, q string) (int, string) {
		if strings.Contains(q, "container_cpu_usage_seconds_total") {
			return http.StatusOK, cpu
		}
		return http.StatusOK, mem
	}
}

// units are the units of a plugin started at epoch.
func units(t testing.TB) plugin.Units {
	t.Helper()
	p, err := plugin.NewFactory(plugin.WithClock(clocktesting.NewFakePassiveClock(epoch)))(context.Background(), nil, nil)
	require.NoError(t, err)
	return p.(*plugin.Plugin).Units()
}

// source is a Source on f's Prometheus, with now at start+10m.
func source(t testing.TB, f *fakeProm, opts ...promusage.Option) *promusage.Source {
	t.Helper()
	c, err := promapi.NewClient(promapi.Config{Address: f.URL})
	require.NoError(t, err)
	opts = append([]promusage.Option{promusage.WithClock(clocktesting.NewFakePassiveClock(start.Add(10 * time.Minute)))}, opts...)
	s, err := promusage.New(promv1.NewAPI(c), opts...)
	require.NoError(t, err)
	return s
}

// pod is batch/train-1, started at start, its container terminated ran after it (none
// with ran zero).
func pod(ran time.Duration) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "train-1"},
		Status:     corev1.PodStatus{StartTime: &metav1.Time{Time: start}},
	}
	if ran > 0 {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{
			{Name: "sidecar", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.Time{Time: start.Add(ran / 2)}}}},
			{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.Time{Time: start.Add(ran)}}}},
		}
	}
	return p
}

const (
	cpuBatch = `sum(rate(container_cpu_usage_seconds_total{namespace="batch",pod="train-1",container!="",container!="POD"}[%s]))`
	memBatch = `sum(max_over_time(container_memory_working_set_bytes{namespace="batch",pod="train-1",container!="",container!="POD"}[%s]))`
)

// The PromQL, range and step sent: from the pod's start to its end rounded up to a
// whole step; a pod longer than MaxPoints steps at a wider one, in whole seconds.
func TestQueriesSent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pod         *corev1.Pod
		opts        []promusage.Option
		postNot     bool
		method      string
		cpu, mem    string
		end         time.Duration // after start
		step        string
		wantTimeout string
	}{
		{name: "terminated containers: the latest", pod: pod(50 * time.Second), method: http.MethodPost,
			cpu: fmt.Sprintf(cpuBatch, "1m"), mem: fmt.Sprintf(memBatch, "15s"), end: time.Minute, step: "15", wantTimeout: "10s"},
		{name: "on the step grid", pod: pod(45 * time.Second), method: http.MethodPost,
			cpu: fmt.Sprintf(cpuBatch, "1m"), mem: fmt.Sprintf(memBatch, "15s"), end: 45 * time.Second, step: "15", wantTimeout: "10s"},
		{name: "no container terminated: until now", pod: pod(0), method: http.MethodPost,
			cpu: fmt.Sprintf(cpuBatch, "1m"), mem: fmt.Sprintf(memBatch, "15s"), end: 10 * time.Minute, step: "15", wantTimeout: "10s"},
		{name: "options", pod: pod(time.Hour), method: http.MethodPost,
			opts: []promusage.Option{promusage.WithStep(30 * time.Second), promusage.WithRateWindow(2 * time.Minute), promusage.WithTimeout(3 * time.Second),
				promusage.WithLabels(map[string]string{"metrics_path": "/metrics/cadvisor", "job": "kubelet"})},
			cpu: `sum(rate(container_cpu_usage_seconds_total{namespace="batch",pod="train-1",container!="",container!="POD",job="kubelet",metrics_path="/metrics/cadvisor"}[2m]))`,
			mem: `sum(max_over_time(container_memory_working_set_bytes{namespace="batch",pod="train-1",container!="",container!="POD",job="kubelet",metrics_path="/metrics/cadvisor"}[30s]))`,
			end: time.Hour, step: "30", wantTimeout: "3s"},
		{name: "a step wider than the rate window widens it", pod: pod(time.Hour), method: http.MethodPost,
			opts: []promusage.Option{promusage.WithStep(90 * time.Second)},
			cpu:  fmt.Sprintf(cpuBatch, "1m30s"), mem: fmt.Sprintf(memBatch, "1m30s"), end: time.Hour, step: "90", wantTimeout: "10s"},
		{name: "exactly MaxPoints steps: the step kept", pod: pod(promusage.MaxPoints * 15 * time.Second), method: http.MethodPost,
			cpu: fmt.Sprintf(cpuBatch, "1m"), mem: fmt.Sprintf(memBatch, "15s"), end: promusage.MaxPoints * 15 * time.Second, step: "15", wantTimeout: "10s"},
		{name: "three days: 24s steps", pod: pod(72 * time.Hour), method: http.MethodPost, // 259,200s / 11,000 = 23.6s
			cpu: fmt.Sprintf(cpuBatch, "1m"), mem: fmt.Sprintf(memBatch, "24s"), end: 72 * time.Hour, step: "24", wantTimeout: "10s"},
		{name: "ten days: 79s steps, and the rate window with them", pod: pod(240 * time.Hour), method: http.MethodPost, // 864,000s / 11,000 = 78.5s
			cpu: fmt.Sprintf(cpuBatch, "1m19s"), mem: fmt.Sprintf(memBatch, "1m19s"), end: 10937 * 79 * time.Second, step: "79", wantTimeout: "10s"},
		{name: "POST refused: GET", pod: pod(50 * time.Second), postNot: true, method: http.MethodGet,
			cpu: fmt.Sprintf(cpuBatch, "1m"), mem: fmt.Sprintf(memBatch, "15s"), end: time.Minute, step: "15", wantTimeout: "10s"},
		{name: "quotes and backslashes escaped", method: http.MethodPost,
			pod:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: `a"b`, Name: `c\d`}, Status: corev1.PodStatus{StartTime: &metav1.Time{Time: start}}},
			opts: []promusage.Option{promusage.WithLabels(map[string]string{"job": `k"\`})},
			cpu:  `sum(rate(container_cpu_usage_seconds_total{namespace="a\"b",pod="c\\d",container!="",container!="POD",job="k\"\\"}[1m]))`,
			mem:  `sum(max_over_time(container_memory_working_set_bytes{namespace="a\"b",pod="c\\d",container!="",container!="POD",job="k\"\\"}[15s]))`,
			end:  10 * time.Minute, step: "15", wantTimeout: "10s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeProm(t, byMetric(matrix(), matrix()))
			f.postNot = tc.postNot
			usage, err := source(t, f, tc.opts...).Usage(context.Background(), tc.pod, units(t))
			require.NoError(t, err)
			assert.Zero(t, usage, "empty answers teach nothing")
			want := []request{
				{tc.method, tc.cpu, unix(start), unix(start.Add(tc.end)), tc.step, tc.wantTimeout},
				{tc.method, tc.mem, unix(start), unix(start.Add(tc.end)), tc.step, tc.wantTimeout},
			}
			assert.Equal(t, want, f.asked())
		})
	}
}

// The two answers joined: each point the sample of the step before it, the point at
// the start left out, a value one answer lacks held from its last (or, before its
// first, its first).
func TestSeriesJoined(t *testing.T) {
	f := newFakeProm(t, byMetric(
		// CPU: no rate at 15s (one scrape yet); a predecessor's rate at the start.
		matrix(tv{0, "9"}, tv{30 * time.Second, "1.5"}, tv{45 * time.Second, "0.25"}, tv{60 * time.Second, "2.0004"}),
		// memory: none at 60s (the container gone); rounded to the byte.
		matrix(tv{0, "123"}, tv{15 * time.Second, "1073741824"}, tv{30 * time.Second, "4294967296"}, tv{45 * time.Second, "2147483648.4"}),
	))
	u := units(t)
	usage, err := source(t, f).Usage(context.Background(), pod(50*time.Second), u)
	require.NoError(t, err)
	sc := u.Schema()
	assert.Equal(t, plugin.Usage{Series: predict.Series{Samples: []predict.Sample{
		// At: the point's time less a step, from the plugin's epoch (a minute before start)
		{At: time.Minute, Usage: sc.MustTuple(1500, 1*gib)},                  // 15s: CPU's first value, held back
		{At: time.Minute + 15*time.Second, Usage: sc.MustTuple(1500, 4*gib)}, // 30s
		{At: time.Minute + 30*time.Second, Usage: sc.MustTuple(250, 2*gib)},  // 45s
		{At: time.Minute + 45*time.Second, Usage: sc.MustTuple(2000, 2*gib)}, // 60s: memory's last value, held
	}}}, usage)
}

// What teaches nothing, without an error: a pod that never started, or ended as it
// started; empty answers, or one of them; answers with only the point at the start.
func TestNothingLearned(t *testing.T) {
	noStart := pod(time.Minute)
	noStart.Status.StartTime = nil
	endedAtStart := pod(0)
	endedAtStart.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.Time{Time: start}}}}}
	some := matrix(tv{15 * time.Second, "1"}, tv{30 * time.Second, "2"})
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		cpu, mem string
		asked    int
	}{
		{"never started", noStart, some, some, 0},
		{"ended as it started", endedAtStart, some, some, 0},
		{"empty answers", pod(time.Minute), matrix(), matrix(), 2},
		{"no CPU (a pod too short for a rate)", pod(time.Minute), matrix(), some, 2},
		{"no memory", pod(time.Minute), some, matrix(), 2},
		{"only the point at the start", pod(time.Minute), matrix(tv{0, "1"}), matrix(tv{0, "1"}), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeProm(t, byMetric(tc.cpu, tc.mem))
			usage, err := source(t, f).Usage(context.Background(), tc.pod, units(t))
			require.NoError(t, err)
			assert.Zero(t, usage)
			assert.Len(t, f.asked(), tc.asked)
		})
	}
}

// What is refused with an error naming the query: Prometheus' errors and warnings,
// values that are no usage, answers of another form.
func TestRefused(t *testing.T) {
	good := matrix(tv{15 * time.Second, "1"}, tv{30 * time.Second, "2"})
	errorBody := `{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}`
	for _, tc := range []struct {
		name     string
		cpu, mem func() (int, string)
		query    string // of the error
		contains []string
	}{
		{"an error (422)", answer(http.StatusUnprocessableEntity, errorBody), answer(http.StatusOK, good), cpuBatch,
			[]string{"execution: query processing would load too many samples"}},
		{"bad data (400)", answer(http.StatusOK, good), answer(http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": parse error"}`), memBatch,
			[]string{`bad_data: invalid parameter "query": parse error`}},
		{"unavailable (503)", answer(http.StatusServiceUnavailable, "overloaded"), answer(http.StatusOK, good), cpuBatch,
			[]string{"server_error"}},
		{"warnings", answer(http.StatusOK, good), answer(http.StatusOK,
			`{"status":"success","warnings":["remote read failed: store-2 unavailable"],"data":{"resultType":"matrix","result":[]}}`), memBatch,
			[]string{"answered with warnings, so perhaps incompletely: remote read failed: store-2 unavailable"}},
		{"NaN", answer(http.StatusOK, matrix(tv{15 * time.Second, "1"}, tv{30 * time.Second, "NaN"})), answer(http.StatusOK, good), cpuBatch,
			[]string{"point 1 at 2026-01-01T12:01:30Z: NaN cores: not a usage, refused"}},
		{"infinite", answer(http.StatusOK, good), answer(http.StatusOK, matrix(tv{15 * time.Second, "+Inf"})), memBatch,
			[]string{"point 0 at 2026-01-01T12:01:15Z: +Inf bytes: not a usage, refused"}},
		{"negative", answer(http.StatusOK, good), answer(http.StatusOK, matrix(tv{15 * time.Second, "1"}, tv{45 * time.Second, "-4096"})), memBatch,
			[]string{"point 1 at 2026-01-01T12:01:45Z: -4096 bytes: negative, refused"}},
		{"too large", answer(http.StatusOK, good), answer(http.StatusOK, matrix(tv{15 * time.Second, "1e300"})), memBatch,
			[]string{"1e+300 bytes: too large"}},
		{"two series", answer(http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"container":"a"},"values":[]},{"metric":{"container":"b"},"values":[]}]}}`),
			answer(http.StatusOK, good), cpuBatch, []string{"answered 2 series, want one (the sum)"}},
		{"a vector", answer(http.StatusOK, good), answer(http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[]}}`), memBatch,
			[]string{"answered a vector, want a matrix"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeProm(t, func(_ *http.Request, q string) (int, string) {
				if strings.Contains(q, "container_cpu_usage_seconds_total") {
					return tc.cpu()
				}
				return tc.mem()
			})
			usage, err := source(t, f).Usage(context.Background(), pod(time.Minute), units(t))
			require.Error(t, err)
			assert.Zero(t, usage)
			window := "15s"
			if tc.query == cpuBatch {
				window = "1m"
			}
			assert.Contains(t, err.Error(), "Prometheus query "+fmt.Sprintf(tc.query, window)+" from 2026-01-01T12:01:00Z to 2026-01-01T12:02:00Z step 15s: ")
			for _, s := range tc.contains {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func answer(code int, body string) func() (int, string) {
	return func() (int, string) { return code, body }
}

// A Prometheus that does not answer: each query gives up at the source's timeout, or
// when the caller's context ends. The handler waits for the request's context.
func TestTimeout(t *testing.T) {
	silent := func(arrived chan<- struct{}) func(*http.Request, string) (int, string) {
		return func(r *http.Request, _ string) (int, string) {
			arrived <- struct{}{}
			<-r.Context().Done() // the client gave up
			return http.StatusOK, matrix()
		}
	}

	t.Run("the source's timeout", func(t *testing.T) {
		f := newFakeProm(t, silent(make(chan struct{}, 2)))
		usage, err := source(t, f, promusage.WithTimeout(50*time.Millisecond)).Usage(context.Background(), pod(time.Minute), units(t))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Zero(t, usage)
		assert.Contains(t, err.Error(), "Prometheus query ")
	})
	t.Run("the caller's context", func(t *testing.T) {
		arrived := make(chan struct{}, 2)
		f := newFakeProm(t, silent(arrived))
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-arrived // a query waits
			cancel()
		}()
		usage, err := source(t, f).Usage(ctx, pod(time.Minute), units(t))
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, usage)
	})
}

// Options and addresses refused.
func TestOptionsRefused(t *testing.T) {
	c, err := promapi.NewClient(promapi.Config{Address: "http://prometheus:9090"})
	require.NoError(t, err)
	api := promv1.NewAPI(c)
	for _, tc := range []struct {
		name string
		new  func() (*promusage.Source, error)
		want string
	}{
		{"no API", func() (*promusage.Source, error) { return promusage.New(nil) }, "promusage: nil Prometheus API"},
		{"nil option", func() (*promusage.Source, error) { return promusage.New(api, nil) }, "promusage: nil option"},
		{"step under a second", func() (*promusage.Source, error) { return promusage.New(api, promusage.WithStep(500*time.Millisecond)) },
			"promusage: step 500ms: want at least 1s, in whole milliseconds"},
		{"step of a fraction of a millisecond", func() (*promusage.Source, error) {
			return promusage.New(api, promusage.WithStep(time.Second+time.Microsecond))
		}, "step 1.000001s: want at least 1s"},
		{"rate window zero", func() (*promusage.Source, error) { return promusage.New(api, promusage.WithRateWindow(0)) },
			"promusage: rate window 0s: want at least 1s"},
		{"timeout zero", func() (*promusage.Source, error) { return promusage.New(api, promusage.WithTimeout(0)) },
			"promusage: timeout 0s: want a positive duration"},
		{"label name", func() (*promusage.Source, error) {
			return promusage.New(api, promusage.WithLabels(map[string]string{"metrics-path": "x"}))
		}, `promusage: label "metrics-path": not a label name`},
		{"the source's own label", func() (*promusage.Source, error) {
			return promusage.New(api, promusage.WithLabels(map[string]string{"pod": "x"}))
		}, `promusage: label "pod": the source matches it itself`},
		{"nil clock", func() (*promusage.Source, error) { return promusage.New(api, promusage.WithClock(nil)) }, "promusage: nil clock"},
		{"no address", func() (*promusage.Source, error) { return promusage.NewFromAddress("") },
			`promusage: Prometheus address "": want an http or https URL with a host`},
		{"no scheme", func() (*promusage.Source, error) { return promusage.NewFromAddress("prometheus.monitoring:9090") },
			`promusage: Prometheus address "prometheus.monitoring:9090": want an http or https URL`},
		{"another scheme", func() (*promusage.Source, error) { return promusage.NewFromAddress("ftp://prometheus") },
			`promusage: Prometheus address "ftp://prometheus": want an http or https URL`},
		{"no host", func() (*promusage.Source, error) { return promusage.NewFromAddress("http:///api") },
			`promusage: Prometheus address "http:///api": want an http or https URL with a host`},
		{"password not repeated", func() (*promusage.Source, error) { return promusage.NewFromAddress("ftp://u:secret@prometheus") },
			`promusage: Prometheus address "ftp://u:xxxxx@prometheus"`},
		{"unparsable, password not repeated", func() (*promusage.Source, error) { return promusage.NewFromAddress("http://u:secret@[::1") },
			"promusage: Prometheus address: not a URL: missing ']' in host"},
		{"an option of the address's", func() (*promusage.Source, error) {
			return promusage.NewFromAddress("http://prometheus:9090", promusage.WithTimeout(-time.Second))
		}, "promusage: timeout -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.new()
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "secret")
		})
	}
	s, err := promusage.NewFromAddress("https://prometheus.monitoring:9090/prom", promusage.WithStep(30*time.Second))
	require.NoError(t, err)
	assert.NotNil(t, s)
}
