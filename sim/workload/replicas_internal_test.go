package workload

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// placeReplicasLinear is PlaceReplicas as first written: every replica scans all the
// nodes for the least-loaded one it may take. The tree behind PlaceReplicas must place
// every replica where it does.
func placeReplicasLinear(c *Cluster, blocks []int64, replicas int) [][]int {
	n := len(c.Nodes)
	rackOf, _ := rackIndexes(c)
	load := make([]int64, n)
	chosen := make([]bool, n)
	out := make([][]int, len(blocks))
	least := func(ok func(i int) bool) int {
		best := -1
		for i := 0; i < n; i++ {
			if !chosen[i] && ok(i) && (best < 0 || load[i] < load[best]) {
				best = i
			}
		}
		return best
	}
	anyNode := func(int) bool { return true }
	for b, size := range blocks {
		rs := make([]int, replicas)
		for k := range rs {
			var i int
			switch k {
			case 0:
				i = least(anyNode)
			case 1:
				r0 := rackOf[rs[0]]
				if i = least(func(i int) bool { return rackOf[i] == r0 }); i < 0 {
					i = least(anyNode)
				}
			case 2:
				r0 := rackOf[rs[0]]
				if i = least(func(i int) bool { return rackOf[i] != r0 }); i < 0 {
					i = least(anyNode)
				}
			default:
				i = least(anyNode)
			}
			rs[k] = i
			chosen[i] = true
		}
		for _, i := range rs {
			chosen[i] = false
			load[i] += size
		}
		out[b] = rs
	}
	return out
}

func TestPlaceReplicasAsTheLinearScan(t *testing.T) {
	props := gopter.NewProperties(gopter.DefaultTestParameters())
	props.Property("every replica where the linear scan puts it", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		nodes, racks := 1+r.Intn(40), 1+r.Intn(6)
		c, err := FGMCluster(WithRacks(1), WithNodesPerRack(nodes))
		if err != nil {
			return "cluster: " + err.Error()
		}
		for i := range c.Nodes {
			c.Nodes[i].Rack = fmt.Sprintf("r%d", r.Intn(racks)) // racks interleaved, some of one node
		}
		blocks := make([]int64, r.Intn(200))
		for i := range blocks {
			blocks[i] = int64(r.Intn(5)) * int64(1+r.Intn(3)) << 20 // many equal loads: ties
		}
		replicas := 1 + r.Intn(min(nodes, 5))
		got, err := PlaceReplicas(&c, blocks, replicas)
		if err != nil {
			return err.Error()
		}
		want := placeReplicasLinear(&c, blocks, replicas)
		for b := range want {
			for k := range want[b] {
				if got[b][k] != want[b][k] {
					return fmt.Sprintf("%d nodes in %d racks, %d replicas: block %d replica %d on node %d, the scan says %d", nodes, racks, replicas, b, k, got[b][k], want[b][k])
				}
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}
