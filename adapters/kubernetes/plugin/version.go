package plugin

// Version is finegrain's version in this binary, stamped when it is built:
//
//	go build -ldflags "-X github.com/finegrain/finegrain/adapters/kubernetes/plugin.Version=v0.1.0" ./cmd/kube-scheduler
//
// (the Dockerfile takes it from the build argument FINEGRAIN_VERSION). It is "dev"
// when not stamped. The plugin logs it when it is built (logStart): kube-scheduler's
// own --version prints the Kubernetes version (k8s.io/component-base/version).
var Version = "dev"

// logStart logs the plugin's start: finegrain's version and what the arguments
// switch on.
func (p *Plugin) logStart() {
	p.logger.Info("FineGrain plugin started", "version", Version, "profile", p.profile,
		"usageSource", p.args.UsageSource, "preemption", p.args.Preemption, "queues", p.args.Queues != nil)
}
