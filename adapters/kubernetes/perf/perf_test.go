// Not under -race (see doc.go).

//go:build !race

package perf_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	_ "k8s.io/component-base/logs/json/register"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// defaultLabels is the workloads run when -perf-scheduling-label-filter is not
// given: the 500-node ones (performance-config.yaml).
const defaultLabels = "small"

// TestMain sets scheduler_perf's flags up (-perf-scheduling-label-filter, -v, ...),
// as its own test packages do.
func TestMain(m *testing.M) {
	if err := perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "perf-scheduling-label-filter" })
	if !given {
		perf.PerfSchedulingLabelFilter = defaultLabels
	}
	os.Exit(m.Run())
}

// BenchmarkPerfScheduling runs Kubernetes' scheduler_perf over the workloads of
// performance-config.yaml, with FineGrain in the scheduler's out-of-tree registry:
// each case with the default profile and with deploy/scheduler-config.yaml's, in one
// run. scheduler_perf starts an etcd (found on PATH, or FINEGRAIN_ETCD) and a
// kube-apiserver in the test for every workload; without an etcd that serves a
// Unix-socket client URL (3.5 or later: .ci/etcd builds one) the benchmark skips.
//
//	FINEGRAIN_ETCD=$(bash ../../.ci/etcd) go test -run '^$' -bench PerfScheduling -benchtime 1x ./perf/
func BenchmarkPerfScheduling(b *testing.B) {
	useEtcd(b)
	// FineGrain's execution times are collected by the cases' metricsCollectorConfig
	// (performance-config.yaml): appending to perf.PluginNames here would come too
	// late, after scheduler_perf's default configuration copied it.
	perf.RunBenchmarkPerfScheduling(b, "performance-config.yaml", "finegrain",
		frameworkruntime.Registry{plugin.Name: plugin.New})
}

// useEtcd finds an etcd of at least 3.5 — FINEGRAIN_ETCD, else etcd on PATH — and
// puts it first on PATH as etcd, where scheduler_perf's integration framework looks;
// without one the benchmark skips, saying why.
func useEtcd(b *testing.B) {
	path := os.Getenv("FINEGRAIN_ETCD")
	if path == "" {
		p, err := exec.LookPath("etcd")
		if err != nil {
			b.Skip("no etcd: set FINEGRAIN_ETCD (bash .ci/etcd builds one) or put etcd 3.5 or later on PATH to run scheduler_perf")
		}
		path = p
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		b.Skipf("etcd %s does not run (%v): set FINEGRAIN_ETCD to an etcd 3.5 or later (bash .ci/etcd builds one)", path, err)
	}
	if !unixSockets(string(out)) {
		b.Skipf("etcd %s is too old for scheduler_perf, which gives it a Unix-socket client URL (3.5 or later): set FINEGRAIN_ETCD (bash .ci/etcd builds one); it said:\n%s", path, out)
	}
	dir := b.TempDir()
	abs, err := filepath.Abs(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "etcd")); err != nil {
		b.Fatal(err)
	}
	b.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

var etcdVersion = regexp.MustCompile(`(?m)^etcd Version: (\d+)\.(\d+)\.`)

// unixSockets reports whether an etcd whose --version printed out listens on a
// unix:// client URL: 3.5 and later do; 3.4 refuses one ("does not have the form
// host:port").
func unixSockets(out string) bool {
	m := etcdVersion.FindStringSubmatch(out)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > 3 || major == 3 && minor >= 5
}
