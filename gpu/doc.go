// Package gpu models GPUs as separate devices on a node, and the scorers that place
// GPU-sharing tasks on them (docs/methods.md §13, the project's method reference).
//
// A node's GPUs are not one pool: "8 GPUs with 0.6 free each" cannot host a task that
// needs one whole GPU, although 4.8 GPUs are free in sum. Devices holds each device's
// free share in thousandths (Milli: 1000 is a whole device), and a Demand asks for
// either a share of one device (Count 1, Milli below 1000) or Count whole devices
// (Milli 1000), optionally of given models (a Kubernetes GPU-sharing pod's
// gpu-milli, gpu count and model constraint, as in Alibaba's GPU-sharing clusters). The
// share is GPU memory and compute handed out together, and it is not compressible:
// no device is ever allocated beyond Milli, and a whole-device task never shares its
// devices (the properties the tests check).
//
// The scorers rank the nodes a task fits for push placement, each with the device
// choice that goes with it:
//
//	DeviceBestFit  the node left with the least free resources (its dimensions and
//	               the GPU) after placement
//	DotProduct     the smallest dot product of the task's demand with the node's
//	               free resources, both normalised by the node's capacity (Tetris's
//	               alignment, read as packing, as the ATC'23 GPU-sharing study runs it)
//	Packing        shared devices first, then partly used nodes, then empty ones
//	FGD            Fragmentation Gradient Descent (Weng et al., USENIX ATC 2023): the
//	               node and device whose use grows the expected GPU fragmentation
//	               least, given the workload's distribution of task shapes (Frag)
//
// Package finegrain wires them in (finegrain.Node.GPU, finegrain.Task.GPU,
// finegrain.WithGPUScorer); the scheduler's state holds each node's Devices and each
// placed task's Allocation. The "gpu" dimension of resource.Standard is a plain
// amount of whole GPUs, pooled like CPU; a scheduler that shares GPUs device by
// device declares them here instead and leaves that dimension at zero.
//
// Devices has one owner and is not safe for concurrent use; Demand, Spec and
// Allocation are values, and the scorers never change after construction: all are
// safe to share.
package gpu
