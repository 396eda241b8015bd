// The training loss in one launch: the mean cross-entropy of logits [capacity, classes] (fp32) against int64
// labels over the live rows, and its gradient with respect to the logits, (softmax - onehot) / live, written
// for every row of the buffer (zeros past the live ones, so padded rows get no gradient). It replaces
// PyTorch's log_softmax + nll_loss forward and their two backwards.
//
// Launched as ONE block (its threads a multiple of 32, at most 1024: the host launches 1024, CE_THREADS in
// zerognn/cuda/loss.py). Warp w takes rows w, w + warps, ...; its lanes stride over a row's columns, and a
// row's max and sum of exponentials are xor-butterfly warp reductions, which leave every lane the same bits.
// Lane 0 of each warp adds its rows' losses in row order, then thread 0 adds the warps' sums in warp order:
// no atomics, so the loss and the gradient are the same bits in every run, whatever the mode. Which rows a
// warp takes depends on the row index alone, so the same live rows give the same bits at any capacity.
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

extern "C" __global__ void cross_entropy_forward_backward(
    const float* __restrict__ logits, i64 classes, const i64* __restrict__ labels, const int* __restrict__ n_rows,
    int capacity, float* __restrict__ loss, float* __restrict__ grad, i64* overflow) {
    __shared__ float warp_loss[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    i64 live = n_rows != nullptr ? (i64)*n_rows : (i64)capacity;
    if (live < 0) live = 0;
    if (overflow != nullptr) live = zg_clamp_live(live, capacity, overflow);
    else if (live > capacity) live = capacity;
    const float inv_live = 1.f / (float)live;
    float acc = 0.f;  // this warp's rows' losses, in row order (lane 0's copy is the one kept)
    for (i64 r = warp; r < live; r += warps) {
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
    if (grad != nullptr) {  // padded rows: zero, never stale
        for (i64 i = live * classes + threadIdx.x; i < (i64)capacity * classes; i += blockDim.x) grad[i] = 0.f;
    }
    if (lane == 0) warp_loss[warp] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.f;
        for (int w = 0; w < warps; ++w) total += warp_loss[w];
        *loss = total / (float)live;
    }
}
