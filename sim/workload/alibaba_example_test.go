package workload_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/finegrain/finegrain/sim/workload"
)

// Parse a few rows of cluster-trace-v2017's batch_task table and turn the usable ones
// into a workload: one job per trace job, one task per instance, instances of one trace
// task sharing a similarity key.
func ExampleParseAlibaba2017() {
	const csv = `task_create_time, task_end_time, job_id, task_id,number_of_instances, status, number_of_cpus_requested_per_instance_in_the_task,normalized_memory_requested_per_instance_in_the_task
6459,6524,3,4,3,Terminated,50,0.007956928
6457,6533,3,5,1,Terminated,100,0.004395206
6036,6046,4,7,393,Waiting,,
-1078,2738,9741,63357,2,Terminated,100,0.005404706
`
	rows, err := workload.ParseAlibaba2017(strings.NewReader(csv), "batch_task.csv")
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Printf("line %d: job %d task %d, %d instances, %s, cpu given %v, %v s\n",
			r.Line, r.Job, r.Task, r.Instances, r.Status, r.HasCPU, (r.End - r.Create).Seconds())
	}

	w, st, err := workload.FromAlibaba2017("ali", rows, rand.New(rand.NewPCG(1, 2)), workload.WithJitter(0))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d rows used, %d skipped (%d not Terminated): %d jobs, %d tasks\n", st.Used, st.Skipped(), st.NotTerminated, st.Jobs, st.Tasks)
	s := workload.Schema()
	for _, j := range w.Jobs {
		t := j.Tasks[0]
		fmt.Printf("%s at %v: %d tasks; %s key %+v request %s, %v\n", j.ID, j.Submit, len(j.Tasks), t.ID, j.Key(&t), s.Format(t.Request), t.True.Duration())
	}
	// Output:
	// line 2: job 3 task 4, 3 instances, Terminated, cpu given true, 65 s
	// line 3: job 3 task 5, 1 instances, Terminated, cpu given true, 76 s
	// line 4: job 4 task 7, 393 instances, Waiting, cpu given false, 10 s
	// line 5: job 9741 task 63357, 2 instances, Terminated, cpu given true, 3816 s
	// 3 rows used, 1 skipped (1 not Terminated): 2 jobs, 6 tasks
	// j9741 at 0s: 2 tasks; j9741/t63357/i00000 key {Logic:ali/j9741/t63357/map InputSize:0 Family:} request cpu=1,memory=371408569, 1h3m36s
	// j3 at 2h5m35s: 4 tasks; j3/t5/i00000 key {Logic:ali/j3/t5/map InputSize:0 Family:} request cpu=1,memory=302036257, 1m16s
}
