// The training loss in one launch: the mean cross-entropy of logits [capacity, classes] (fp32) against int64
// labels over the live rows, and its gradient with respect to the logits, (softmax - onehot) / live, written
// for every row of the buffer (zeros past the live ones, so padded rows get no gradient). It replaces
// PyTorch's log_softmax + nll_loss forward and their two backwards.
//
// Launched over a FIXED grid, whatever the capacity and the live count (the host launches CE_BLOCKS blocks
// of CE_THREADS threads, both in zerognn/cuda/loss.py; any grid works, blockDim a multiple of 32, at most
// 1024, and block_loss must hold gridDim.x floats). Global warp g = blockIdx.x * warps_per_block + warp
// takes rows g, g + total_warps, ...; its lanes stride over a row's columns, and a row's max and sum of
// exponentials are xor-butterfly warp reductions, which leave every lane the same bits. Each warp adds its
// rows' losses in row order, thread 0 of each block adds its warps' sums in warp order into block_loss
// [blockIdx.x], and the last block to finish (a __threadfence, then a ticket from atomicAdd on blocks_done)
// adds the blocks' sums in block order, writes loss = total / live and resets blocks_done to 0 for the next
// launch or graph replay. No float atomics: the loss and the gradient are the same bits in every run,
// whatever the mode. Which warp takes a row, and so every order of additions, depends on the row index and
// the fixed grid alone, so the same live rows give the same bits at any capacity. The gradient's zero fill
// of the padded rows is a grid-stride loop over every block's threads (float4 stores where aligned).
//
// block_loss and blocks_done are scratch kept per device by the host (blocks_done zero between launches):
// two launches at once on one device, on two streams, would share them; the suite runs one step stream per
// device.
//
// n_rows: the live row count in device memory (null: every row of the buffer, `capacity`); a count above
// the capacity raises the overflow record (when one is given) and is clamped. A label outside [0, classes)
// makes its row's loss NaN (PyTorch would stop with a device-side assert); its gradient is softmax / live.
// grad may be null when no gradient is wanted. With no live row the loss is NaN, as PyTorch's mean of none.
#include "zerognn_common.cuh"

__device__ __forceinline__ float ce_warp_max(float v) {
    for (int d = 16; d > 0; d >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d));
    return v;
}

__device__ __forceinline__ float ce_warp_sum(float v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

// Zero grad[begin, end) with every thread of the grid: scalar stores up to the first 16-byte boundary and
// past the last, float4 stores between (when grad itself is 16-byte aligned, as a fresh allocation is).
__device__ __forceinline__ void ce_zero_fill(float* grad, i64 begin, i64 end) {
    const i64 thread = (i64)blockIdx.x * blockDim.x + threadIdx.x, threads = (i64)gridDim.x * blockDim.x;
    i64 lo = end, hi = end;  // the float4 run [lo, hi), empty unless grad is aligned
    if ((reinterpret_cast<u64>(grad) & 15ull) == 0) {
        lo = min((begin + 3) & ~3ll, end);
        hi = max(lo, end & ~3ll);
    }
    for (i64 i = begin + thread; i < lo; i += threads) grad[i] = 0.f;
    float4* grad4 = reinterpret_cast<float4*>(grad);
    for (i64 i = (lo >> 2) + thread; i < (hi >> 2); i += threads) grad4[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    for (i64 i = hi + thread; i < end; i += threads) grad[i] = 0.f;
}

extern "C" __global__ void cross_entropy_forward_backward(
    const float* __restrict__ logits, i64 classes, const i64* __restrict__ labels, const int* __restrict__ n_rows,
    int capacity, float* __restrict__ loss, float* __restrict__ grad, i64* overflow, float* block_loss,
    unsigned* blocks_done) {
    __shared__ float warp_loss[32];
    __shared__ bool last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const i64 first_row = (i64)blockIdx.x * warps + warp, row_stride = (i64)gridDim.x * warps;
    i64 live = n_rows != nullptr ? (i64)*n_rows : (i64)capacity;
    if (live < 0) live = 0;
    if (overflow != nullptr) live = zg_clamp_live(live, capacity, overflow);
    else if (live > capacity) live = capacity;
    const float inv_live = 1.f / (float)live;
    float acc = 0.f;  // this warp's rows' losses, in row order (every lane holds the same bits)
    for (i64 r = first_row; r < live; r += row_stride) {
        const float* row = logits + r * classes;
        float m = __int_as_float(0xff800000);  // -inf
        for (i64 c = lane; c < classes; c += 32) m = fmaxf(m, row[c]);
        m = ce_warp_max(m);
        float s = 0.f;
        for (i64 c = lane; c < classes; c += 32) s += expf(row[c] - m);
        s = ce_warp_sum(s);
        const i64 label = labels[r];
        const bool valid = label >= 0 && label < classes;
        acc += valid ? (m + logf(s)) - row[label] : __int_as_float(0x7fffffff);
        if (grad != nullptr) {
            float* g = grad + r * classes;
            for (i64 c = lane; c < classes; c += 32)
                g[c] = (expf(row[c] - m) / s - (c == label ? 1.f : 0.f)) * inv_live;
        }
    }
    if (grad != nullptr) ce_zero_fill(grad, live * classes, (i64)capacity * classes);  // padded rows: never stale
    if (lane == 0) warp_loss[warp] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float sum = 0.f;
        for (int w = 0; w < warps; ++w) sum += warp_loss[w];
        block_loss[blockIdx.x] = sum;
        __threadfence();  // this block's sum is visible to every block before its ticket is
        last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0) return;
    __threadfence();  // every block's sum, published before its ticket, is read after ours
    const volatile float* sums = block_loss;
    float total = 0.f;
    for (unsigned b = 0; b < gridDim.x; ++b) total += sums[b];
    *loss = total / (float)live;
    *blocks_done = 0u;  // zero again for the next launch (or replay), which follows this one in stream order
}
