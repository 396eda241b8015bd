// GraphSAGE mean aggregation over an ELL block: out[p] = mean of x[nbr_local[p, i]] for i < counts[p]
// (zeros where counts[p] == 0), and its gradient with respect to x.
#include "zerognn_common.cuh"

extern "C" __global__ void sage_mean_forward(
    const float* __restrict__ x, i64 width, const int* __restrict__ nbr_local, const int* __restrict__ counts,
    const int* __restrict__ n_dst, int capacity, int fanout, float* __restrict__ out, i64* overflow) {
    const i64 total = zg_clamp_live(*n_dst, capacity, overflow) * width;
    ZG_GRID_STRIDE(i, total) {
        const i64 p = i / width, c = i - p * width;
        const int cnt = counts[p];
        const int* row = nbr_local + p * fanout;
        float acc = 0.f;
        for (int k = 0; k < cnt; ++k) if (row[k] >= 0) acc += x[(i64)row[k] * width + c];
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
        const float g = grad_out[i] / (float)cnt;
        const int* row = nbr_local + p * fanout;
        for (int k = 0; k < cnt; ++k) if (row[k] >= 0) atomicAdd(&grad_x[(i64)row[k] * width + c], g);
    }
}
