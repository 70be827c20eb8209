// Package workload describes what a simulated cluster runs, independent of any
// scheduler: jobs and their tasks with the true stage profile each task really uses
// (which no scheduler sees) and the request its user declares, the input blocks tasks
// read and where their replicas sit, the cluster's nodes and racks, and background load
// from other applications. The simulator (package sim) replays a Workload on a Cluster
// through any scheduler; the comparison program generates its default workload here.
//
// What it provides, by section of docs/methods.md, the project's method reference
// (equation, definition and algorithm numbers are the sources', kept there):
//
//	§2 Def. 3       SimilarityKey, Job.Key: (job logic + task kind, input bytes); map
//	                tasks of full 128 MiB blocks of the same application share a key;
//	                Job.Family, the key's family (application + task kind)
//	§2 stages       AppClass.Profile: the task model — map = read (disk-io) → compute
//	                (cpu) → spill (disk-io + memory); reduce = shuffle (net-io) → sort
//	                (cpu + memory) → reduce (cpu + disk-io); Jitter; Overestimate
//	§7              FGM: the paper-like workload — Facebook input sizes (FB2009, FB2010:
//	                quantile tables fitted to SWIM's traces), 400 GiB offline or Poisson
//	                online; FGMCluster: 23 nodes of 16 cores and 32 GiB
//	§11             Task.LatencySensitive and Task.SLO: latency-sensitive tasks and
//	                their objectives, for the straggler method; FromOpenB marks LS
//	                pods, and the generators a share of their jobs
//	                (WithLatencySensitive), with SLOs of WithSLOFactor (1.5 by
//	                default) times the task's true run time
//	§10 §4.3.1      Thesis, ThesisExperiment, Table 4.2's ThesisSmall/Normal/Large;
//	                ThesisCluster: 3 racks × (10 slow, 10 normal, 10 fast) nodes, 4
//	                slots, 20 / 5 MB/s; PlaceReplicas: 3 replicas for load balance;
//	                Cluster.Locality and Cluster.TransferTime
//	traces          ParseSWIM/LoadSWIM + FromSWIM (SWIM TSV: Facebook 2009/2010);
//	                ParsePlanetLab/LoadPlanetLab/LoadPlanetLabDir (CPU % every 5 min)
//	                → Series, a background load for the "cloud" environment
//	                ParseAlibaba2017/LoadAlibaba2017 + FromAlibaba2017 (Alibaba
//	                cluster-trace-v2017 batch_task: a job per trace job, a task per
//	                instance, a seeded true-usage model under the trace's requests);
//	                ParseOpenBNodes/ParseOpenBPods and their Load functions (Alibaba
//	                cluster-trace-gpu-v2023, the "openb" GPU-sharing cluster) +
//	                OpenBCluster, FromOpenB (a job per pod; LS pods latency-sensitive)
//
// Every tuple and profile uses Schema(): cpu (milli-cores, compressible), memory (bytes),
// disk-io and net-io (bytes/s, compressible). Time is a time.Duration from the
// workload's epoch (0 = start). Generators take a caller-owned *rand.Rand
// (math/rand/v2) and are deterministic: the same source state and options give the same
// workload, byte for byte. Bad input gives an error naming the field (a *FieldError) or
// the file, line and column (a *ParseError), wrapping a sentinel such as ErrSyntax or
// ErrInvalidValue.
//
// Example:
//
//	r := rand.New(rand.NewPCG(1, 2))
//	w, err := workload.FGM(r, workload.WithScale(0.25))             // 100 GiB offline
//	cl, err := workload.FGMCluster()
//	replicas, err := workload.PlaceReplicas(&cl, w.Blocks, workload.DefaultReplication)
//	for _, j := range w.Jobs {
//		for _, t := range j.Tasks {
//			key := j.Key(&t)  // what an estimator learns under
//			_ = t.Request     // what a request-based scheduler reserves
//			_ = t.True        // what the simulator runs
//		}
//	}
package workload
