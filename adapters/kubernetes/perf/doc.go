// Package perf runs Kubernetes' scheduler_perf (k8s.io/kubernetes
// test/integration/scheduler_perf) with the FineGrain plugin in the scheduler's
// out-of-tree registry: BenchmarkPerfScheduling, over the workloads of
// performance-config.yaml, each with the scheduler's default profile and with
// FineGrain's (deploy/scheduler-config.yaml, or deploy/scheduler-config-gpu.yaml for
// the GPU-sharing case) in one run. It has no code of its own beyond the
// benchmark; scheduler_perf starts etcd (3.5 or later: .ci/etcd builds one) and a
// kube-apiserver in the test. See the module's README, Throughput (scheduler_perf).
//
// The benchmark is not built under -race: a throughput figure means nothing there,
// and building scheduler_perf's in-process kube-apiserver with the race detector
// takes minutes.
package perf
