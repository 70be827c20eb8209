package plugin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// The arguments of deploy/scheduler-config.yaml, read the way kube-scheduler reads
// them, are valid and are what the file says.
func TestShippedConfigArgs(t *testing.T) {
	prof := loadProfile(t)
	var found bool
	for _, pc := range prof.PluginConfig {
		if pc.Name != plugin.Name {
			continue
		}
		found = true
		var a plugin.Args
		require.NoError(t, frameworkruntime.DecodeInto(pc.Args, &a))
		require.NoError(t, a.Validate())
		assert.True(t, a.Preemption)
		assert.Equal(t, 60*time.Second, a.GangTimeout.Duration)
		assert.Equal(t, plugin.UsageSourceMetricsAPI, a.UsageSource, "the shipped configuration learns from metrics-server")
		assert.Equal(t, 15*time.Second, a.SampleInterval.Duration)
		assert.Equal(t, 240, *a.MaxSamplesPerPod)
		assert.Equal(t, time.Minute, a.UsageWindow.Duration)
		_, err := plugin.New(context.Background(), pc.Args, nil)
		require.NoError(t, err)
	}
	assert.True(t, found, "the profile configures %s", plugin.Name)
}

func TestArgsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		want []string // what the error must mention; none: valid
	}{
		{"empty", `{}`, nil},
		{"defaults spelled out", `{"compressionLimit":0.1,"matcher":"FineGrained","scorers":[{"name":"LeastAllocated","weight":1},{"name":"BalancedAllocation","weight":1}],"gangTimeout":"60s"}`, nil},
		{"no compression", `{"compressionLimit":0}`, nil},
		{"extended resource", `{"extendedResources":["nvidia.com/gpu"]}`, nil},
		{"compression limit of 1", `{"compressionLimit":1}`, []string{"compressionLimit", "[0, 1)"}},
		{"negative compression limit", `{"compressionLimit":-0.5}`, []string{"compressionLimit"}},
		{"unknown matcher", `{"matcher":"Greedy"}`, []string{"matcher", "FineGrained"}},
		{"unknown scorer", `{"scorers":[{"name":"Random","weight":1}]}`, []string{"scorers[0].name", "LeastAllocated"}},
		{"zero weight", `{"scorers":[{"name":"BestFit","weight":0}]}`, []string{"scorers[0].weight"}},
		{"scorer twice", `{"scorers":[{"name":"BestFit","weight":1},{"name":"BestFit","weight":2}]}`, []string{"scorers[1].name", "Duplicate"}},
		{"no scorer", `{"scorers":[]}`, []string{"scorers", "Required"}},
		{"bad label", `{"similarityLabels":["not a label!"]}`, []string{"similarityLabels[0]"}},
		{"extended resource without a domain", `{"extendedResources":["gpu"]}`, []string{"extendedResources[0]", "domain"}},
		{"cpu as an extended resource", `{"extendedResources":["cpu"]}`, []string{"extendedResources[0]"}},
		{"extended resource twice", `{"extendedResources":["a.io/x","a.io/x"]}`, []string{"extendedResources[1]"}},
		{"too many extended resources", `{"extendedResources":["a.io/1","a.io/2","a.io/3","a.io/4","a.io/5","a.io/6","a.io/7"]}`, []string{"extendedResources", "Too many"}},
		{"zero gang timeout", `{"gangTimeout":"0s"}`, []string{"gangTimeout"}},
		{"annotation usage", `{"usageSource":"Annotation"}`, nil},
		{"metrics usage, every setting", `{"usageSource":"MetricsAPI","sampleInterval":"1s","maxSamplesPerPod":4,"usageWindow":"1s"}`, nil},
		{"unknown usage source", `{"usageSource":"Prometheus"}`, []string{"usageSource", "Annotation", "MetricsAPI"}},
		{"usage source in another case", `{"usageSource":"metricsapi"}`, []string{"usageSource"}},
		{"sample interval below a second", `{"sampleInterval":"500ms"}`, []string{"sampleInterval", "at least 1s"}},
		{"negative sample interval", `{"sampleInterval":"-15s"}`, []string{"sampleInterval"}},
		{"too few samples per pod", `{"maxSamplesPerPod":3}`, []string{"maxSamplesPerPod", "[4, 1048576]"}},
		{"zero samples per pod", `{"maxSamplesPerPod":0}`, []string{"maxSamplesPerPod"}},
		{"too many samples per pod", `{"maxSamplesPerPod":1048577}`, []string{"maxSamplesPerPod"}},
		{"samples per pod not a number", `{"maxSamplesPerPod":"many"}`, []string{"maxSamplesPerPod"}},
		{"usage window below the sample interval", `{"sampleInterval":"30s","usageWindow":"15s"}`, []string{"usageWindow", "sampleInterval (30s)"}},
		{"checkpoints, every setting", `{"checkpointInterval":"1s","checkpointNamespace":"finegrain","checkpointName":"estimates.batch"}`, nil},
		{"checkpoints off", `{"checkpointInterval":"0s"}`, nil},
		{"learned keys at their bounds", `{"maxLearnedKeys":1}`, nil},
		{"no learned keys", `{"maxLearnedKeys":0}`, []string{"maxLearnedKeys", "[1, 65536]"}},
		{"too many learned keys", `{"maxLearnedKeys":65537}`, []string{"maxLearnedKeys"}},
		{"checkpoint interval below a second", `{"checkpointInterval":"500ms"}`, []string{"checkpointInterval", "0 (off) or at least 1s"}},
		{"negative checkpoint interval", `{"checkpointInterval":"-1m"}`, []string{"checkpointInterval"}},
		{"checkpoint namespace not a name", `{"checkpointNamespace":"Kube_System"}`, []string{"checkpointNamespace"}},
		{"checkpoint name not a name", `{"checkpointName":"Estimates!"}`, []string{"checkpointName"}},
		{"GPU devices, defaults", `{"gpuDevices":true}`, nil},
		{"GPU devices, every setting", `{"gpuDevices":true,"gpuResource":"example.com/gpu","gpuShareResource":"example.com/gpu-share","gpuModelLabel":"example.com/gpu-model","gpuScorer":"Packing"}`, nil},
		{"GPU scorers", `{"gpuDevices":true,"gpuScorer":"None"}`, nil},
		{"GPU devices beside other extended resources", `{"gpuDevices":true,"extendedResources":["example.com/fpga"]}`, nil},
		{"GPU resource on the timelines too", `{"gpuDevices":true,"extendedResources":["example.com/fpga","nvidia.com/gpu"]}`, []string{"extendedResources[1]", "device by device"}},
		{"GPU share on the timelines too", `{"gpuDevices":true,"extendedResources":["finegrain.io/gpu-milli"]}`, []string{"extendedResources[0]", "device by device"}},
		{"unknown GPU scorer", `{"gpuDevices":true,"gpuScorer":"BestFit"}`, []string{"gpuScorer", "DeviceBestFit", "DotProduct", "FGD", "None", "Packing"}},
		{"GPU resource without a domain", `{"gpuResource":"gpu"}`, []string{"gpuResource", "domain"}},
		{"GPU share resource not a name", `{"gpuShareResource":"a.io/gpu share"}`, []string{"gpuShareResource"}},
		{"GPU share resource as the GPU resource", `{"gpuShareResource":"nvidia.com/gpu"}`, []string{"gpuShareResource", "differ from gpuResource"}},
		{"GPU model label not a label", `{"gpuModelLabel":"gpu model"}`, []string{"gpuModelLabel"}},
		{"scale-up rounds, defaults", `{"scaleUp":{}}`, nil},
		{"scale-up rounds, every setting", `{"scaleUp":{"interval":"1s","expectedUtilisation":0,"preemptibleShare":1,"idleOnly":true}}`, nil},
		{"scale-up interval below a second", `{"scaleUp":{"interval":"500ms"}}`, []string{"scaleUp.interval", "at least 1s"}},
		{"negative scale-up interval", `{"scaleUp":{"interval":"-30s"}}`, []string{"scaleUp.interval"}},
		{"expected utilisation above 1", `{"scaleUp":{"expectedUtilisation":1.5}}`, []string{"scaleUp.expectedUtilisation", "[0, 1]"}},
		{"negative expected utilisation", `{"scaleUp":{"expectedUtilisation":-0.1}}`, []string{"scaleUp.expectedUtilisation"}},
		{"no preemptible share", `{"scaleUp":{"preemptibleShare":0}}`, []string{"scaleUp.preemptibleShare", "(0, 1]"}},
		{"preemptible share above 1", `{"scaleUp":{"preemptibleShare":1.01}}`, []string{"scaleUp.preemptibleShare"}},
		{"unknown scale-up field", `{"scaleUp":{"period":"30s"}}`, []string{"unknown field", "scaleUp.period"}},
		{"unknown field", `{"compresionLimit":0.2}`, []string{"unknown field", "compresionLimit"}},
		{"wrong type", `{"preemption":"yes"}`, []string{"preemption"}},
		{"several at once", `{"compressionLimit":2,"matcher":"x"}`, []string{"compressionLimit", "matcher"}},
		{"white space after the object", "{\"compressionLimit\":0.2}\n\t ", nil},
		{"a second object after the first", `{} {"compressionLimit": 5}`, []string{"after top-level value"}},
		{"text after the object", `{"matcher":"FineGrained"} garbage`, []string{"after top-level value"}},
		{"a stray bracket after the object", `{"compressionLimit":0.1}]`, []string{"after top-level value"}},
		{"a key twice", `{"compressionLimit":0.9,"compressionLimit":0.1}`, []string{"duplicate field", `"compressionLimit"`}},
		{"a nested key twice", `{"scorers":[{"name":"BestFit","name":"Alignment","weight":1}]}`, []string{"duplicate field", `"scorers[0].name"`}},
		{"a field named in another case", `{"CompressionLimit":0.2}`, []string{"unknown field", `"CompressionLimit"`}},
		{"a field twice, in two cases", `{"compressionLimit":0.2,"CompressionLimit":5}`, []string{"unknown field", `"CompressionLimit"`}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkArgs(t, tc.json, runtime.ContentTypeJSON, tc.want) })
	}
	for _, tc := range []struct {
		name string
		yaml string
		want []string // what the error must mention; none: valid
	}{
		{"valid", "compressionLimit: 0.2\nmatcher: CoarseGrained\n", nil},
		{"a document marker before", "---\ncompressionLimit: 0.2\n", nil},
		{"an empty document after", "compressionLimit: 0.2\n---\n", nil},
		{"malformed", "matcher: [\n", []string{"yaml"}},
		{"a second document", "compressionLimit: 0.2\n---\ncompressionLimit: 5\n", []string{"one YAML document", "document 2"}},
		{"malformed text after the document's end", "compressionLimit: 0.2\n...\ngarbage: [\n", []string{"yaml"}},
		{"a key twice", "compressionLimit: 0.9\ncompressionLimit: 0.1\n", []string{"already set", `"compressionLimit"`}},
		{"unknown field", "compresionLimit: 0.2\n", []string{"unknown field", `"compresionLimit"`}},
		{"a field named in another case", "CompressionLimit: 0.2\n", []string{"unknown field", `"CompressionLimit"`}},
		{"a field twice, in two cases", "compressionLimit: 0.2\nCompressionLimit: 5\n", []string{"unknown field", `"CompressionLimit"`}},
	} {
		t.Run("YAML "+tc.name, func(t *testing.T) { checkArgs(t, tc.yaml, runtime.ContentTypeYAML, tc.want) })
	}
	t.Run("no args", func(t *testing.T) {
		_, err := plugin.New(context.Background(), nil, nil)
		require.NoError(t, err)
	})
	t.Run("args of a foreign type", func(t *testing.T) {
		_, err := plugin.New(context.Background(), &v1.Pod{}, nil)
		require.ErrorContains(t, err, "want the arguments as raw JSON or YAML")
	})
	t.Run("a nil *runtime.Unknown", func(t *testing.T) {
		var u *runtime.Unknown
		require.NotPanics(t, func() {
			_, err := plugin.New(context.Background(), u, nil)
			require.ErrorContains(t, err, "got a nil *runtime.Unknown")
		})
	})
	t.Run("nil options", func(t *testing.T) {
		_, err := plugin.NewFactory(nil)(context.Background(), nil, nil)
		require.ErrorContains(t, err, "nil option")
		_, err = plugin.NewFactory(plugin.WithUsageSource(nil))(context.Background(), nil, nil)
		require.ErrorContains(t, err, "nil usage source")
		_, err = plugin.NewFactory(plugin.WithClock(nil))(context.Background(), nil, nil)
		require.ErrorContains(t, err, "nil clock")
		_, err = plugin.NewFactory(plugin.WithMetricsClient(nil))(context.Background(), nil, nil)
		require.ErrorContains(t, err, "nil metrics client")
	})
}

func TestParseStages(t *testing.T) {
	got, err := plugin.ParseStages(`[{"duration":"30s","cpu":"2","memory":"6Gi"},{"duration":90,"cpu":0.5,"memory":"1Gi"},{"cpu":"100m","memory":"512Mi"}]`)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, 30*time.Second, got[0].Duration)
	assert.Equal(t, 90*time.Second, got[1].Duration, "a number is seconds")
	assert.Zero(t, got[2].Duration, "the last stage may be open-ended")
	assert.True(t, got[0].Resources[v1.ResourceMemory].Equal(apiresource.MustParse("6Gi")))
	assert.True(t, got[1].Resources[v1.ResourceCPU].Equal(apiresource.MustParse("500m")))
	got, err = plugin.ParseStages(`[{"duration":"9223372036","cpu":"1"},{"duration":9223372036.854,"cpu":"1"},null]`)
	require.NoError(t, err, "durations near the longest a Duration holds")
	assert.Equal(t, 9223372036*time.Second, got[0].Duration)
	assert.InDelta(t, float64(9223372036854*time.Millisecond), float64(got[1].Duration), float64(time.Microsecond))
	assert.Zero(t, got[2].Duration, "a null last stage is open-ended")

	for _, tc := range []struct{ name, text, want string }{
		{"not JSON", `stages`, "not a JSON list"},
		{"an object", `{"duration":"1s"}`, "not a JSON list"},
		{"empty list", `[]`, "no stages"},
		{"open-ended stage before the last", `[{"cpu":"1"},{"duration":"1s","cpu":"1"}]`, "stage 0"},
		{"bad duration", `[{"duration":"soon"}]`, `stage 0: "duration"`},
		{"negative duration", `[{"duration":"-5s"}]`, "negative duration"},
		{"huge duration", `[{"duration":"1e300"}]`, "too long"},
		{"duration just past the longest", `[{"duration":"9223372036.854775807"}]`, `stage 0: "duration": duration 9223372036.854775807 is too long`},
		{"duration just past the longest, a number", `[{"duration":9223372036.854775807}]`, "too long"},
		{"negative duration, in seconds", `[{"duration":"-0.5"}]`, "negative duration -0.5"},
		{"a quantity twice", `[{"duration":"1s","cpu":"-1","cpu":"1"}]`, `stage 0: duplicate field "cpu"`},
		{"duration twice", `[{"duration":"1s"},{"duration":"0","duration":"1s"}]`, `stage 1: duplicate field "duration"`},
		{"a stage not an object", `[{"duration":"1s"},1]`, "stage 1: not a JSON object"},
		{"bad quantity", `[{"duration":"1s","memory":"lots"}]`, `"memory"`},
		{"negative quantity", `[{"duration":"1s","memory":"-1Gi"}]`, "negative"},
		{"a list as a value", `[{"duration":"1s","memory":[1]}]`, "string or a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plugin.ParseStages(tc.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Whatever the text, ParseStages returns stages or an error, and never panics; the
// stages it returns have non-negative durations and quantities, only the last
// open-ended.
func FuzzParseStages(f *testing.F) {
	for _, s := range []string{
		`[{"duration":"30s","cpu":"2","memory":"6Gi"},{"cpu":"1"}]`,
		`[{"duration":90,"memory":1e9}]`,
		`[{"duration":"1e300"}]`,
		`[{"duration":"1s","memory":"-1"}]`,
		`[]`, `{}`, `[{}]`, `[null]`, `null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		stages, err := plugin.ParseStages(text)
		if err != nil {
			return
		}
		if len(stages) == 0 {
			t.Fatalf("no stages and no error for %q", text)
		}
		for i, s := range stages {
			if s.Duration < 0 || (s.Duration == 0 && i != len(stages)-1) {
				t.Fatalf("stage %d: duration %v from %q", i, s.Duration, text)
			}
			for name, q := range s.Resources {
				if q.Sign() < 0 {
					t.Fatalf("stage %d: %s negative from %q", i, name, text)
				}
			}
		}
	})
}

// Whatever the arguments, the factory returns a plugin or an error, and never panics.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"compressionLimit":0.3}`, `{"matcher":"CoarseGrained","scorers":[{"name":"BestFit","weight":2}]}`,
		`{"extendedResources":["nvidia.com/gpu"],"gangTimeout":"5s"}`, `{"gangTimeout":"-1s"}`, `null`, `[]`,
		`{"usageSource":"MetricsAPI","sampleInterval":"2s","maxSamplesPerPod":8,"usageWindow":"4s"}`, `{"maxSamplesPerPod":-1}`,
		`{"checkpointInterval":"2m","checkpointNamespace":"ops","checkpointName":"x"}`, `{"checkpointName":"-"}`,
		`{"queues":{"policy":"Fair","by":"label:a.io/team","weights":{"x":2},"maxShare":{"x":3}}}`, `{"queues":{"minShare":{"a":0.5},"maxShare":{"a":0.25}}}`,
		`{"gpuDevices":true,"gpuScorer":"FGD","gpuModelLabel":"nvidia.com/gpu.product"}`, `{"gpuDevices":true,"extendedResources":["nvidia.com/gpu"]}`,
		`{"scaleUp":{"interval":"10s","expectedUtilisation":0.7,"preemptibleShare":0.25}}`, `{"scaleUp":{"preemptibleShare":0}}`, `{"scaleUp":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := plugin.New(context.Background(), &runtime.Unknown{Raw: []byte(text), ContentType: runtime.ContentTypeJSON}, nil)
		if err == nil && p == nil {
			t.Fatalf("no plugin and no error for %q", text)
		}
	})
}

// checkArgs builds the plugin with raw arguments of contentType: it must succeed when
// want is empty, else fail with an error holding every string of want.
func checkArgs(t *testing.T, raw, contentType string, want []string) {
	t.Helper()
	_, err := plugin.New(context.Background(), &runtime.Unknown{Raw: []byte(raw), ContentType: contentType}, nil)
	if len(want) == 0 {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
}
