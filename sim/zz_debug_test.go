package sim

import (
	"fmt"
	"testing"
)

func TestDebugSeed(t *testing.T) {
	sc := drawPreemptScenario(637)
	for _, j := range sc.w.Jobs {
		fmt.Printf("job %s q=%s submit=%v prio=%d min=%d\n", j.ID, j.Queue, j.Submit, j.Priority, j.MinMember)
		for _, x := range j.Tasks {
			fmt.Printf("   %s %v dur=%v peak=%v req=%v\n", x.ID, x.Kind, x.True.Duration(), x.True.Peak(), x.Request)
		}
	}
	for _, n := range sc.cl.Nodes { fmt.Println(n.ID, n.Capacity, n.Speed) }
	fmt.Println(sc.p.Name, len(sc.opts))
	r, err := Run(&sc.w, &sc.cl, sc.p, sc.opts...)
	fmt.Println(err, r.Summary.Preemptions, r.Summary.Reclaims, r.Summary.OOMKills, r.Summary.NodeKills, r.Mode, r.Summary.PartialGangs, r.Summary.GangGathers)
	for _, e := range r.Evictions { fmt.Printf("%+v\n", e) }
	for _, x := range r.Tasks { fmt.Printf("%s sub=%v start=%v finish=%v kills=%d ev=%d\n", x.ID, x.Submitted, x.Start, x.Finish, x.Kills, x.Evictions) }
}
