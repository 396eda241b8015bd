// GraphSAGE mean aggregation over an ELL block: out[p] = mean of x[nbr_local[p, i]] for i < counts[p]
// (zeros where counts[p] == 0), and its gradient with respect to x.
#include "zerognn_common.cuh"

extern "C" __global__ void sage_mean_forward(
    const float* __restrict__ x, i64 width, const int* __restrict__ nbr_local, const int* __restrict__ counts,
    const int* __restrict__ n_dst, int capacity, int fanout, float* __restrict__ out, i64* overflow) {
    const i64 live = zg_clamp_live(*n_dst, capacity, overflow);
    ZG_GRID_STRIDE(i, (i64)capacity * width) {
        const i64 p = i / width, c = i - p * width;
        if (p >= live) { out[i] = 0.f; continue; }  // padded rows: zero, never stale
        const int cnt = counts[p];
        const float acc = zg_ell_row_sum(x, width, nbr_local + p * fanout, cnt, c);
        out[i] = cnt > 0 ? acc / (float)cnt : 0.f;
    }
}

// grad_x must be zeroed by the caller; neighbours shared by several destinations accumulate atomically.
extern "C" __global__ void sage_mean_backward(
    const float* __restrict__ grad_out, i64 width, const int* __restrict__ nbr_local, const int* __restrict__ counts,
    const int* __restrict__ n_dst, int capacity, int fanout, float* __restrict__ grad_x, i64* overflow) {
    const i64 total = zg_clamp_live(*n_dst, capacity, overflow) * width;
    ZG_GRID_STRIDE(i, total) {
        const i64 p = i / width, c = i - p * width;
        const int cnt = counts[p];
        if (cnt == 0) continue;
        zg_ell_row_scatter(grad_x, width, nbr_local + p * fanout, cnt, c, grad_out[i] / (float)cnt);
    }
}
