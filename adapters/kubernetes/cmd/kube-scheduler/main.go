// Command kube-scheduler is the Kubernetes scheduler with finegrain's plugin
// registered (plugin.Name, "FineGrain"): enable it in a profile of the scheduler
// configuration given with --config (deploy/scheduler-config.yaml). Every other flag
// and behaviour is kube-scheduler's own.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

func main() {
	cmd := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, plugin.New))
	os.Exit(cli.Run(cmd))
}
