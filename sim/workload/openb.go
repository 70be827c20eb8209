package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// OpenBMaxGPUs is the most GPUs a node of an openb node list may have, and a pod of an
// openb pod list may request: 64. The published trace has at most 8.
const OpenBMaxGPUs = 64

// OpenBNode is one row of a node list of Alibaba's cluster-trace-gpu-v2023, the "openb"
// GPU-sharing cluster of the USENIX ATC'23 paper "Beware of Fragmentation: Scheduling
// GPU-Sharing Workloads with Fragmentation Gradient Descent"
// (openb_node_list_all_node.csv, openb_node_list_gpu_node.csv): one machine.
type OpenBNode struct {
	// Name is column sn, the node's name, e.g. "openb-node-0227"; unique within a file.
	Name string
	// CPUMilli is column cpu_milli, the node's CPUs in milli-cores.
	CPUMilli int64
	// MemoryMiB is column memory_mib, the node's main memory in MiB.
	MemoryMiB int64
	// GPUs is column gpu, the number of GPUs, 0 to OpenBMaxGPUs.
	GPUs int
	// Model is column model, the GPU model, e.g. "V100M32", "T4", or "G1", "G2", "G3"
	// (undisclosed internal models); empty for a node without GPUs, and possibly for a
	// node with GPUs whose model the file does not give.
	Model string
	// Line is the 1-based line of the file the node was read from (0 if built by hand).
	Line int
}

// OpenBPod is one row of a pod list of cluster-trace-gpu-v2023 (openb_pod_list_*.csv):
// one task submitted to the openb cluster, with what it requests and, in most lists,
// when it was created, scheduled and deleted.
type OpenBPod struct {
	// Name is column name, the pod's name, e.g. "openb-pod-0017"; unique within a file.
	Name string
	// CPUMilli is column cpu_milli, the CPUs requested, in milli-cores.
	CPUMilli int64
	// MemoryMiB is column memory_mib, the main memory requested, in MiB.
	MemoryMiB int64
	// NumGPU is column num_gpu, the number of GPUs requested, 0 to OpenBMaxGPUs (0, 1,
	// 2, 4 or 8 in the published lists).
	NumGPU int
	// GPUMilli is column gpu_milli, the share of each requested GPU in thousandths: 0
	// for a pod without GPUs, 1 to 1000 for a pod with one GPU (below 1000 it shares
	// the GPU with other pods), 1000 for a pod with several (whole GPUs).
	GPUMilli int64
	// GPUSpec is column gpu_spec: the GPU models the pod may run on, from the column's
	// '|'-separated list without empty entries or repeats, in file order; nil when the
	// column is empty or absent (any model). Only a pod with GPUs may have one.
	GPUSpec []string
	// QoS is column qos as written: LS (latency-sensitive), BE (best effort),
	// Burstable, Guaranteed; empty when the column is absent. LatencySensitive reads
	// it.
	QoS string
	// Phase is column pod_phase as written: Running, Succeeded, Failed, Pending; empty
	// when the column is absent.
	Phase string
	// Created is column creation_time, seconds from the trace's start; meaningful only
	// when HasCreated.
	Created time.Duration
	// Deleted is column deletion_time, seconds from the trace's start, not before
	// Created or Scheduled; meaningful only when HasDeleted.
	Deleted time.Duration
	// Scheduled is column scheduled_time, when the pod was bound to a node, seconds
	// from the trace's start, not before Created; meaningful only when HasScheduled.
	Scheduled time.Duration
	// HasCreated reports whether the file has a creation_time column (then every row
	// has a value).
	HasCreated bool
	// HasDeleted reports whether the row has a deletion_time.
	HasDeleted bool
	// HasScheduled reports whether the row has a scheduled_time (pending pods have
	// none).
	HasScheduled bool
	// Line is the 1-based line of the file the pod was read from (0 if built by hand).
	Line int
}

// LatencySensitive reports whether the pod's qos marks it latency-sensitive: "LS", or
// Koordinator's stricter "LSR" and "LSE" (latency-sensitive with reserved or exclusive
// CPUs), in any case. The published pod lists hold LS, BE, Burstable and Guaranteed;
// only LS is latency-sensitive (see FromOpenB for why the others are batch).
func (p *OpenBPod) LatencySensitive() bool {
	return strings.EqualFold(p.QoS, "LS") || strings.EqualFold(p.QoS, "LSR") || strings.EqualFold(p.QoS, "LSE")
}

// SharesGPU reports whether the pod takes part of one GPU: one GPU at less than 1000
// thousandths.
func (p *OpenBPod) SharesGPU() bool { return p.NumGPU == 1 && p.GPUMilli < 1000 }

// TotalGPUMilli returns the GPU the pod requests in all, in thousandths of a GPU:
// NumGPU × GPUMilli.
func (p *OpenBPod) TotalGPUMilli() int64 { return int64(p.NumGPU) * p.GPUMilli }

// The columns of the openb lists, required ones first.
var (
	openBNodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}
	openBPodColumns  = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli",
		"gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}
)

// maxMiB is the largest memory_mib the openb parsers accept: its bytes fit an int64.
const maxMiB = math.MaxInt64 >> 20

const (
	openBNodeRequired = 5
	openBPodRequired  = 5
)

// Indices into openBNodeColumns and openBPodColumns.
const (
	nodeSN = iota
	nodeCPU
	nodeMemory
	nodeGPU
	nodeModel
)

const (
	podName = iota
	podCPU
	podMemory
	podNumGPU
	podGPUMilli
	podSpec
	podQoS
	podPhase
	podCreated
	podDeleted
	podScheduled
)

// csvTable reads a comma-separated file whose first line is a header naming its
// columns: the shared part of the openb parsers.
type csvTable struct {
	name   string
	sc     *bufio.Scanner
	line   int
	cols   []string // wanted column names
	pos    []int    // pos[k]: the field index of column k, or -1 when absent
	width  int      // fields a row must have
	fields [][]byte // the current row's fields
	intern map[string]string
}

func newCSVTable(r io.Reader, name string, cols []string) *csvTable {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	return &csvTable{name: name, sc: sc, cols: cols, intern: map[string]string{}}
}

// next reads the next row into t.fields, reading the header first (the first non-blank
// line, which must name the first required columns of t.cols). It returns false at the
// end of the input, with a nil error, or on an error.
func (t *csvTable) next(required int) (bool, error) {
	for t.sc.Scan() {
		t.line++
		b := trimLine(t.sc.Bytes(), t.pos == nil)
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if t.pos == nil {
			if err := t.readHeader(b, required); err != nil {
				return false, err
			}
			continue
		}
		n := splitFields(t.fields, b, ',')
		for i, f := range t.fields[:min(n, len(t.fields))] {
			if bytes.IndexByte(f, '"') >= 0 {
				return false, colErr(t.name, t.line, i+1, t.columnAt(i), string(f), fmt.Errorf("%w: quoted fields are not supported", ErrSyntax))
			}
		}
		if n < t.width {
			return false, colErr(t.name, t.line, n+1, t.columnAt(n), "", fmt.Errorf("%w: missing (want %d fields, got %d)", ErrSyntax, t.width, n))
		}
		if n > t.width {
			return false, colErr(t.name, t.line, t.width+1, "extra field", string(t.fields[t.width]), fmt.Errorf("%w: want %d fields, got %d", ErrSyntax, t.width, n))
		}
		return true, nil
	}
	if err := t.sc.Err(); err != nil {
		return false, scanErr(t.name, t.line+1, err)
	}
	return false, nil
}

func (t *csvTable) readHeader(b []byte, required int) error {
	t.width = splitFields(nil, b, ',')
	t.fields = make([][]byte, t.width+1)
	splitFields(t.fields, b, ',')
	t.pos = make([]int, len(t.cols))
	for k := range t.pos {
		t.pos[k] = -1
	}
	for i, f := range t.fields[:t.width] {
		for k, c := range t.cols {
			if !bytes.EqualFold(f, []byte(c)) {
				continue
			}
			if t.pos[k] >= 0 {
				return colErr(t.name, t.line, i+1, c, string(f), fmt.Errorf("%w: column given twice (first as column %d)", ErrSyntax, t.pos[k]+1))
			}
			t.pos[k] = i
		}
	}
	for k, c := range t.cols[:required] {
		if t.pos[k] < 0 {
			return lineErr(t.name, t.line, string(b), fmt.Errorf("%w: no column %q (the first line must be a header naming at least %s)",
				ErrSyntax, c, strings.Join(t.cols[:required], ",")))
		}
	}
	return nil
}

// columnAt names the column at field index i, "" when it is not a known one.
func (t *csvTable) columnAt(i int) string {
	for k, p := range t.pos {
		if p == i {
			return t.cols[k]
		}
	}
	return ""
}

// has reports whether column k is in the file.
func (t *csvTable) has(k int) bool { return t.pos[k] >= 0 }

// field returns column k of the current row; has(k) must hold.
func (t *csvTable) field(k int) []byte { return t.fields[t.pos[k]] }

// err returns a *ParseError for column k of the current row.
func (t *csvTable) err(k int, err error) error {
	return colErr(t.name, t.line, t.pos[k]+1, t.cols[k], string(t.field(k)), err)
}

// str returns b as a string, one copy for equal strings: for the few values of qos,
// pod_phase, model and gpu_spec. The table stops growing at 1,024 strings.
func (t *csvTable) str(b []byte) string {
	if s, ok := t.intern[string(b)]; ok {
		return s
	}
	if len(t.intern) >= 1024 {
		return string(b)
	}
	s := string(b)
	t.intern[s] = s
	return s
}

// int reads column k as a non-negative integer of at most hi.
func (t *csvTable) int(k int, hi int64) (int64, error) {
	v, err := parseBytes(t.field(k))
	if err == nil && v > hi {
		err = fmt.Errorf("%w: more than %d", ErrInvalidValue, hi)
	}
	if err != nil {
		return 0, t.err(k, err)
	}
	return v, nil
}

// end reports the end of the input: ErrEmpty when no row was read.
func (t *csvTable) end(rows int, what string) error {
	if rows > 0 {
		return nil
	}
	if t.pos == nil {
		return lineErr(t.name, t.line, "", fmt.Errorf("%w: no header and no %s", ErrEmpty, what))
	}
	return lineErr(t.name, t.line, "", fmt.Errorf("%w: no %s", ErrEmpty, what))
}

// ParseOpenBNodes reads a node list of cluster-trace-gpu-v2023 ("openb"): a CSV file
// whose first line is a header naming the columns sn, cpu_milli, memory_mib, gpu and
// model, in any order (unknown columns are ignored), then one node a line. sn is a
// non-empty name, unique in the file; cpu_milli and memory_mib are non-negative
// integers, memory_mib below 2⁴³ (so that it fits an int64 in bytes); gpu is an
// integer in [0, OpenBMaxGPUs]; model is text, empty when gpu is 0 (a node with GPUs
// and no model is accepted, with Model ""). Spaces, tabs and
// carriage returns around fields (so CRLF line ends), blank lines and a UTF-8
// byte-order mark are ignored; column names match without regard to case; quoted
// fields are not supported (the trace has none). Nodes are returned in file order.
//
// name names the input in errors: a malformed line gives a *ParseError
// "name:line:column: field: ..." wrapping ErrSyntax (a header without a required
// column or with a column twice — on the header's line —, a row with another number of
// fields than the header, not a number, a quote, a line over 1 MiB), ErrInvalidValue
// (out of range, a model on a node without GPUs), ErrEmpty (an empty sn) or
// ErrDuplicateID (an sn seen on an earlier line, which the message names); an input
// without nodes gives one wrapping ErrEmpty.
func ParseOpenBNodes(r io.Reader, name string) ([]OpenBNode, error) {
	t := newCSVTable(r, name, openBNodeColumns)
	nodes := make([]OpenBNode, 0, int(min(sizeHint(r)/32, 1<<16)))
	seen := map[string]int{}
	for {
		ok, err := t.next(openBNodeRequired)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		n, err := t.node(seen)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	if err := t.end(len(nodes), "nodes"); err != nil {
		return nil, err
	}
	return nodes, nil
}

func (t *csvTable) node(seen map[string]int) (OpenBNode, error) {
	n := OpenBNode{Line: t.line}
	sn := t.field(nodeSN)
	if len(sn) == 0 {
		return n, t.err(nodeSN, fmt.Errorf("%w: no node name", ErrEmpty))
	}
	if at, dup := seen[string(sn)]; dup {
		return n, t.err(nodeSN, fmt.Errorf("%w (first on line %d)", ErrDuplicateID, at))
	}
	n.Name = string(sn)
	var err error
	if n.CPUMilli, err = t.int(nodeCPU, math.MaxInt64); err != nil {
		return n, err
	}
	if n.MemoryMiB, err = t.int(nodeMemory, maxMiB); err != nil {
		return n, err
	}
	gpus, err := t.int(nodeGPU, OpenBMaxGPUs)
	if err != nil {
		return n, err
	}
	n.GPUs = int(gpus)
	if m := t.field(nodeModel); len(m) > 0 {
		if n.GPUs == 0 {
			return n, t.err(nodeModel, fmt.Errorf("%w: a GPU model on a node without GPUs", ErrInvalidValue))
		}
		n.Model = t.str(m)
	}
	seen[n.Name] = t.line
	return n, nil
}

// LoadOpenBNodes reads the openb node list at path (see ParseOpenBNodes); errors name
// the path.
func LoadOpenBNodes(path string) ([]OpenBNode, error) { return load(path, ParseOpenBNodes) }

// ParseOpenBPods reads a pod list of cluster-trace-gpu-v2023 ("openb"): a CSV file
// whose first line is a header naming the columns, in any order, then one pod a line.
// name, cpu_milli, memory_mib, num_gpu and gpu_milli are required; gpu_spec, qos,
// pod_phase, creation_time, deletion_time and scheduled_time are optional (the
// multigpu lists have only the first five); unknown columns are ignored, and names
// match without regard to case. Spaces, tabs and carriage returns around fields (so
// CRLF line ends), blank lines and a UTF-8 byte-order mark are ignored; quoted fields
// are not supported (the trace has none). Pods are returned in file order.
//
// A row must satisfy, else the parser refuses it: a non-empty name, unique in the
// file; cpu_milli and memory_mib non-negative integers, memory_mib below 2⁴³ (so
// that it fits an int64 in bytes); num_gpu in [0, OpenBMaxGPUs]; gpu_milli in [0,
// 1000], 0 when num_gpu is 0, at least 1 when num_gpu is 1, and 1000 (whole GPUs) when
// num_gpu is more than 1; a gpu_spec only on a pod with GPUs; qos and pod_phase any
// text; creation_time, when the column exists, present and a
// non-negative number of seconds; deletion_time and scheduled_time empty (a pending
// pod has no scheduled_time) or non-negative seconds, with creation ≤ scheduling ≤
// deletion. Every row of the 24 pod lists published with the trace satisfies these
// rules (checked on the alibaba/clusterdata repository's copies), so a row that does
// not is an error, not something to repair.
//
// name names the input in errors: a malformed line gives a *ParseError
// "name:line:column: field: ..." wrapping ErrSyntax (a header without a required
// column or with a column twice — on the header's line —, a row with another number of
// fields than the header, not a number, a missing creation_time, a quote, a line over
// 1 MiB), ErrInvalidValue (out of range, a rule above broken), ErrEmpty (an empty name)
// or ErrDuplicateID (a name seen on an earlier line, which the message names); an input
// without pods gives one wrapping ErrEmpty.
func ParseOpenBPods(r io.Reader, name string) ([]OpenBPod, error) {
	t := newCSVTable(r, name, openBPodColumns)
	pods := make([]OpenBPod, 0, int(min(sizeHint(r)/64, 1<<16)))
	seen := map[string]int{}
	for {
		ok, err := t.next(openBPodRequired)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		p, err := t.pod(seen)
		if err != nil {
			return nil, err
		}
		pods = append(pods, p)
	}
	if err := t.end(len(pods), "pods"); err != nil {
		return nil, err
	}
	return pods, nil
}

func (t *csvTable) pod(seen map[string]int) (OpenBPod, error) {
	p := OpenBPod{Line: t.line}
	name := t.field(podName)
	if len(name) == 0 {
		return p, t.err(podName, fmt.Errorf("%w: no pod name", ErrEmpty))
	}
	if at, dup := seen[string(name)]; dup {
		return p, t.err(podName, fmt.Errorf("%w (first on line %d)", ErrDuplicateID, at))
	}
	p.Name = string(name)
	var err error
	if p.CPUMilli, err = t.int(podCPU, math.MaxInt64); err != nil {
		return p, err
	}
	if p.MemoryMiB, err = t.int(podMemory, maxMiB); err != nil {
		return p, err
	}
	n, err := t.int(podNumGPU, OpenBMaxGPUs)
	if err != nil {
		return p, err
	}
	p.NumGPU = int(n)
	if p.GPUMilli, err = t.int(podGPUMilli, 1000); err != nil {
		return p, err
	}
	switch {
	case p.NumGPU == 0 && p.GPUMilli != 0:
		return p, t.err(podGPUMilli, fmt.Errorf("%w: a share of a GPU for a pod without GPUs", ErrInvalidValue))
	case p.NumGPU > 0 && p.GPUMilli == 0:
		return p, t.err(podGPUMilli, fmt.Errorf("%w: no share of its %d GPU(s)", ErrInvalidValue, p.NumGPU))
	case p.NumGPU > 1 && p.GPUMilli != 1000:
		return p, t.err(podGPUMilli, fmt.Errorf("%w: a pod with %d GPUs takes them whole (1000)", ErrInvalidValue, p.NumGPU))
	}
	if t.has(podSpec) {
		for rest := t.field(podSpec); len(rest) > 0; {
			m := rest
			if i := bytes.IndexByte(rest, '|'); i >= 0 {
				m, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			if m = trimField(m); len(m) > 0 && !containsBytes(p.GPUSpec, m) {
				p.GPUSpec = append(p.GPUSpec, t.str(m))
			}
		}
		if len(p.GPUSpec) > 0 && p.NumGPU == 0 {
			return p, t.err(podSpec, fmt.Errorf("%w: GPU models for a pod without GPUs", ErrInvalidValue))
		}
	}
	if t.has(podQoS) {
		p.QoS = t.str(t.field(podQoS))
	}
	if t.has(podPhase) {
		p.Phase = t.str(t.field(podPhase))
	}
	for _, c := range []struct {
		k   int
		dst *time.Duration
		has *bool
	}{{podCreated, &p.Created, &p.HasCreated}, {podDeleted, &p.Deleted, &p.HasDeleted}, {podScheduled, &p.Scheduled, &p.HasScheduled}} {
		if !t.has(c.k) {
			continue
		}
		f := t.field(c.k)
		if len(f) == 0 {
			if c.k == podCreated {
				return p, t.err(c.k, fmt.Errorf("%w: missing", ErrSyntax))
			}
			continue
		}
		if *c.dst, err = parseSeconds(f); err != nil {
			return p, t.err(c.k, err)
		}
		*c.has = true
	}
	switch {
	case p.HasCreated && p.HasScheduled && p.Scheduled < p.Created:
		return p, t.err(podScheduled, fmt.Errorf("%w: before the creation (%v)", ErrInvalidValue, p.Created))
	case p.HasCreated && p.HasDeleted && p.Deleted < p.Created:
		return p, t.err(podDeleted, fmt.Errorf("%w: before the creation (%v)", ErrInvalidValue, p.Created))
	case p.HasScheduled && p.HasDeleted && p.Deleted < p.Scheduled:
		return p, t.err(podDeleted, fmt.Errorf("%w: before the scheduling (%v)", ErrInvalidValue, p.Scheduled))
	}
	seen[p.Name] = t.line
	return p, nil
}

func containsBytes(ss []string, b []byte) bool {
	for _, s := range ss {
		if s == string(b) {
			return true
		}
	}
	return false
}

// LoadOpenBPods reads the openb pod list at path (see ParseOpenBPods); errors name the
// path.
func LoadOpenBPods(path string) ([]OpenBPod, error) { return load(path, ParseOpenBPods) }
