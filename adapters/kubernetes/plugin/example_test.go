package plugin_test

import (
	"fmt"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// A kube-scheduler binary with the plugin registered: what cmd/kube-scheduler runs.
// Enable the plugin in a profile of the configuration given with --config.
func Example() {
	cmd := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, plugin.New))
	fmt.Println(cmd.Use, "with", plugin.Name)
	// Output: kube-scheduler with FineGrain
}

// A pod's declared stages, as the finegrain.io/stages annotation holds them.
func ExampleParseStages() {
	stages, err := plugin.ParseStages(`[{"duration":"2m","cpu":"4","memory":"6Gi"},{"cpu":"1","memory":"2Gi"}]`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, s := range stages {
		cpu, mem := s.Resources["cpu"], s.Resources["memory"]
		fmt.Printf("stage %d: %v, cpu %s, memory %s\n", i, s.Duration, cpu.String(), mem.String())
	}
	_, err = plugin.ParseStages(`[{"duration":"2m","memory":"-6Gi"}]`)
	fmt.Println(err)
	// Output:
	// stage 0: 2m0s, cpu 4, memory 6Gi
	// stage 1: 0s, cpu 1, memory 2Gi
	// stage 0: "memory": negative quantity -6Gi
}
