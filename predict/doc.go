// Package predict learns what tasks will need and watches how they run: per-stage demand
// profiles learned from similar tasks, stage segmentation of usage series, prediction
// conformity, LATE's progress model, and the straggler and over-allocation detectors.
//
// What it implements, by section of docs/methods.md, the project's method reference
// (equation, definition and algorithm numbers are the sources', kept there):
//
//	§2 Def. 3      Key (similar tasks: same logic, same input size), with optional size
//	               buckets (LogBuckets, LinearBuckets) and nearest-size scaling
//	§2 sooner      Key.Family and WithFamily (a new logic predicted from its application's
//	               tasks of a similar size), RunningObserver and ObserveRunning (a key
//	               predicted from its tasks still running until one finishes)
//	§2 eq. 8       Estimator, SimilarTask: iterative per-stage, per-dimension update with
//	               the compression-aware weight w' = w × (1 − rcObs) (the eq. 8 Reading)
//	§2 stages      Segmenter, Segment: usage samples → stages (the segmentation Reading)
//	§2 measured    Series (a task's sampled usage), SimilarTask's history, Redivide and
//	               RunRedivision (stages divided again from recent observations, off the
//	               scheduling path), WithEnvelope (never less memory than recently used)
//	§2 eq. 14      stage.TimeAverage, reused by Conformity (not duplicated here)
//	§2 eq. 16      Conformity (Def. 4), ConformityLog (the last k values per server,
//	               the input of Alg. 3)
//	§8 eq. 3.1     Phases, MapProgress, ReduceProgress
//	§8 eq. 3.2–3.4 ProgressRate, TimeLeft, IsSlowTask; RuntimeEstimator and
//	               ProgressObserver, implemented by ProgressTracker
//	§11 S1–S4      DetectStraggler
//	§11 T1–T2      DetectRedundant; RedundancyTest for many tasks alike
//
// The Readings adopted where the sources are silent or ambiguous are stated where they
// apply: the update rule and stage alignment (SimilarTask), the segmentation method
// (Segmenter), T_SLO as a run time (DetectStraggler) and the reclaimable amount
// (DetectRedundant).
//
// Learning a profile: hand each finished task's usage samples to the estimator, which
// divides them into stages, re-divide now and then off the scheduling path, and ask for
// the next task of the same key:
//
//	est, _ := predict.NewSimilarTask(resource.Standard())
//	go est.RunRedivision(ctx, time.Minute)
//	key := predict.Key{Logic: "wordcount/map", InputSize: 128 << 20}
//	_ = est.Observe(key, predict.Observation{Series: predict.Series{Samples: samples, End: finished}})
//	if profile, ok := est.Estimate(key); ok {
//		// fine-grained matching with profile
//	}
//
// Checkpoints: what a SimilarTask learned survives a restart or a failover.
// SimilarTask.Checkpoint writes it — every key's estimate, the exact state of its
// iterative update, its history, its place in the eviction order, and the families' —
// as a versioned JSON document (format CheckpointFormat, version 1, deterministic), and
// SimilarTask.Restore reads it back into an estimator of the same schema and options,
// which then answers, learns and evicts as the first would have. Restore refuses input
// it did not write or cannot hold (another version or schema, incompatible options,
// implausible content) with ErrCheckpoint, changing nothing. Checkpointer is the seam
// for other estimators; the reference scheduler's SaveEstimates and RestoreEstimates
// call it:
//
//	var saved bytes.Buffer // a file, a ConfigMap, an object store
//	_ = est.Checkpoint(&saved)
//	restarted, _ := predict.NewSimilarTask(resource.Standard())
//	if err := restarted.Restore(&saved); err != nil {
//		// errors.Is(err, predict.ErrCheckpoint): start empty, or from an older checkpoint
//	}
//
// SimilarTask, ConformityLog and ProgressTracker are safe for concurrent use; Segmenter
// is immutable. Bad input is rejected with a *FieldError (or a resource or stage error)
// naming the field and value and wrapping a sentinel for errors.Is, and changes nothing.
package predict
