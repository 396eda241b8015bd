// The bucket a captured step's dense work runs at (zerognn/cuda/live_rows.py): a SWITCH node in the step's
// CUDA Graph holds one body per bucket, GEMMs over `edge_b` rows, and this kernel, captured just before the
// node, sets the node's handle to the smallest bucket whose edge holds the live row count. Edges: edge_b =
// first + b * step for b < buckets - 1, and the capacity for the last; a count above every edge (an
// overflowing hop, which the step rolls back) takes the last, the capacity, the rows the step provisioned.
// zerognn: device-runtime
#include "zerognn_common.cuh"

extern "C" __global__ void live_rows_select(u64 handle, const int* __restrict__ live, int first, int step,
                                            int buckets) {
    const int n = *live;
    int bucket = n <= first ? 0 : (n - first + step - 1) / step;
    if (bucket > buckets - 1) bucket = buckets - 1;
    cudaGraphSetConditional((cudaGraphConditionalHandle)handle, (unsigned)bucket);
}
