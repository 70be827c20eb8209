// Package fairness decides whose turn it is: the orderings a scheduler sorts queues,
// jobs and tasks by before it offers resources (docs/methods.md §3, Alg. 1 line 4:
// "sort(Ts, Pf)", DRF by default), the fair shares they are entitled to, the three-level
// queue → job → task model with delay scheduling for data locality (docs/methods.md §10),
// and Jain's index to measure how fair the outcome was (docs/methods.md §7).
//
// What the package implements, by section of docs/methods.md, the project's method
// reference (equation, definition and algorithm numbers are the sources', kept there):
//
//	§3 Alg. 1 line 4    Policy, the ordering seam; Sort; Tree.Next and Tree.Walk
//	§10 fair rule       Fair: below-min-share first by running/minShare, then running/weight
//	§10 FIFO rule       FIFO: priority, then submission, then ID
//	§3, §7 DRF          DRF: weighted dominant share, ties by the next-largest share;
//	                    hierarchical when used at every level of a Tree; ProgressiveFilling
//	§7 baseline         Capacity: guaranteed and maximum capacity, lowest used/guaranteed
//	                    first, elastic up to the maximum (Tree.Admit), FIFO inside a queue
//	§10 fair shares     WaterFill: weights, min and max shares, demands
//	§10 three levels    Tree (queues, nested, and jobs) and Pending (tasks by locality;
//	                    PendingIndex over entries the caller's task records embed)
//	§10 Alg. 2.1        Delay: node-local / rack-local / off-switch with W1, W2 (5 s, 20 s),
//	                    time-based or skip-count
//	§10 clock rule      LocalityClock, ClockState: the same levels and waits, counted by
//	                    the clock since a job's last launch (or arrival)
//	§7 metric           Jain
//
// A scheduler keeps a Tree of its queues and jobs, told of every task submitted
// (AddPending), started (Start) and finished (Release), and a Pending index of the
// tasks themselves. On an offer from a node it walks the jobs in the policy's order and,
// for each, asks Pending for the best locality the job has there and Delay whether the
// job takes it or passes:
//
//	tree, _ := fairness.NewTree(schema, clusterCapacity) // DRF at every level
//	delay, _ := fairness.NewDelay()                      // W1 = 5 s, W2 = 20 s
//	_ = delay.Heartbeat(now)
//	tree.Walk(func(job string) bool {
//		best, _ := pending.Best(job, node, rack)
//		level, ok, _ := delay.Offer(job, best)
//		if !ok {
//			return true // the job waits for locality; offer the next one
//		}
//		task, _, _ := pending.First(job, node, rack, level)
//		chosen = task
//		return false
//	})
//	// then: pending.Remove(chosen); tree.Start(job, request, request)
//
// Every order is total and deterministic: equal keys go by submission time, then ID.
// Policies take shares against the whole cluster's capacity. Tree, Pending and Delay
// have a single owner each and are not safe for concurrent use; the policies are.
package fairness
