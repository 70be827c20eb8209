// Command kube-scheduler-prometheus is kube-scheduler with finegrain's plugin
// registered (plugin.Name, "FineGrain") learning what its pods used from Prometheus:
// when one of its pods ends, the plugin reads the pod's CPU and memory over its run
// from cAdvisor's metrics with two range queries (package promusage says which). It
// is cmd/kube-scheduler with plugin.NewFactory(plugin.WithUsageSource(src)) in place
// of plugin.New; every flag and behaviour is kube-scheduler's own, and the plugin is
// enabled in a profile of the configuration given with --config, as there.
//
// Build and run, from adapters/kubernetes:
//
//	go build -o kube-scheduler-prometheus ./cmd/kube-scheduler-prometheus
//	FINEGRAIN_PROMETHEUS_URL=http://prometheus.monitoring:9090 \
//	  ./kube-scheduler-prometheus --config=deploy/scheduler-config.yaml
//
// The source is configured by environment variables, which leave kube-scheduler's
// command and flags as they are:
//
//	FINEGRAIN_PROMETHEUS_URL          the Prometheus to query, an http or https URL
//	                                  (a path prefix is kept); required
//	FINEGRAIN_PROMETHEUS_STEP         the queries' step, the kubelets' scrape interval
//	                                  (default 15s)
//	FINEGRAIN_PROMETHEUS_RATE_WINDOW  the CPU rate's shortest window, four scrape
//	                                  intervals (default 1m)
//	FINEGRAIN_PROMETHEUS_TIMEOUT      each query's timeout (default 10s)
//	FINEGRAIN_PROMETHEUS_LABELS       more label matchers for both queries, as
//	                                  name=value,name=value (values without commas),
//	                                  e.g. job=kubelet,metrics_path=/metrics/cadvisor
//
// A missing or malformed variable is reported when the scheduler builds the profile
// that enables the plugin, at start and before leader election, and the scheduler
// exits: "initializing plugin "FineGrain": FINEGRAIN_PROMETHEUS_URL is not set: …".
// --help and --version need none. With usageSource MetricsAPI in the plugin's
// arguments (the default) the nodes' usage is still read from metrics.k8s.io, for the
// per-node policy; with Annotation nothing calls it.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/cli"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/adapters/kubernetes/promusage"
)

// The environment variables that configure the source.
const (
	envURL        = "FINEGRAIN_PROMETHEUS_URL"
	envStep       = "FINEGRAIN_PROMETHEUS_STEP"
	envRateWindow = "FINEGRAIN_PROMETHEUS_RATE_WINDOW"
	envTimeout    = "FINEGRAIN_PROMETHEUS_TIMEOUT"
	envLabels     = "FINEGRAIN_PROMETHEUS_LABELS"
)

func main() {
	cmd := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, factory(os.Getenv)))
	os.Exit(cli.Run(cmd))
}

// factory is the plugin's factory with the Prometheus source getenv configures; a
// configuration error is the factory's, so that kube-scheduler reports it when it
// builds the profile, and --help and --version work without one.
func factory(getenv func(string) string) frameworkruntime.PluginFactory {
	src, desc, err := sourceFromEnv(getenv)
	if err != nil {
		return func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return nil, err }
	}
	build := plugin.NewFactory(plugin.WithUsageSource(src))
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		klog.FromContext(ctx).Info("Learning the pods' usage from Prometheus", desc...)
		return build(ctx, obj, h)
	}
}

// sourceFromEnv is the source the environment configures, and its configuration as
// key-value pairs to log (the URL without its password).
func sourceFromEnv(getenv func(string) string) (*promusage.Source, []any, error) {
	addr := strings.TrimSpace(getenv(envURL))
	if addr == "" {
		return nil, nil, fmt.Errorf("%s is not set: the Prometheus to learn the pods' usage from, such as http://prometheus.monitoring:9090", envURL)
	}
	u, err := url.Parse(addr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a password
		}
		return nil, nil, fmt.Errorf("%s: not a URL: %w", envURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("%s=%q: not an http or https URL with a host, such as http://prometheus.monitoring:9090", envURL, u.Redacted())
	}
	desc := []any{"url", u.Redacted()}
	var opts []promusage.Option
	for _, d := range []struct {
		name string
		opt  func(time.Duration) promusage.Option
	}{
		{envStep, promusage.WithStep},
		{envRateWindow, promusage.WithRateWindow},
		{envTimeout, promusage.WithTimeout},
	} {
		v := strings.TrimSpace(getenv(d.name))
		if v == "" {
			continue
		}
		dur, err := time.ParseDuration(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s=%q: not a duration such as 15s or 1m", d.name, v)
		}
		opts = append(opts, named(d.name, v, d.opt(dur)))
		desc = append(desc, strings.ToLower(strings.TrimPrefix(d.name, "FINEGRAIN_PROMETHEUS_")), dur)
	}
	if v := strings.TrimSpace(getenv(envLabels)); v != "" {
		labels, err := parseLabels(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s=%q: %w", envLabels, v, err)
		}
		opts = append(opts, named(envLabels, v, promusage.WithLabels(labels)))
		desc = append(desc, "labels", labels)
	}
	src, err := promusage.NewFromAddress(addr, opts...)
	if err != nil {
		return nil, nil, err
	}
	return src, desc, nil
}

// named is opt with its error naming the variable that set it.
func named(name, value string, opt promusage.Option) promusage.Option {
	return func(s *promusage.Source) error {
		if err := opt(s); err != nil {
			return fmt.Errorf("%s=%q: %w", name, value, err)
		}
		return nil
	}
}

// parseLabels reads name=value,name=value.
func parseLabels(v string) (map[string]string, error) {
	labels := map[string]string{}
	for item := range strings.SplitSeq(v, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want name=value", strings.TrimSpace(item))
		}
		if _, dup := labels[name]; dup {
			return nil, fmt.Errorf("label %q given twice", name)
		}
		labels[name] = strings.TrimSpace(value)
	}
	return labels, nil
}
