// GCN aggregation over an ELL block with the self loop: out[p] = (x[p] + sum of x[nbr]) / (counts[p] + 1),
// and its gradient with respect to x (destination p is also row p of x: frontiers are prefixes).
//
// The forward takes rows: null, or the ids of x's rows in a table x (zg_row), so that the first layer
// reads the input features where they are, x[rows[j]] for x[j] in the self loop and the sum alike, and
// no gather kernel writes them out first. The input features need no gradient, so no backward takes it.
//
// Both backwards take relu_out: x itself where x is a ReLU's output (null otherwise), so that the
// gradient they write is already the ReLU input's (zg_relu_grad). Every use of x is here, the self loop
// included, so the mask covers every path by which the gradient reaches x.
#include "zerognn_common.cuh"

extern "C" __global__ void gcn_aggregate_forward(
    const float* __restrict__ x, i64 width, const int* __restrict__ nbr_local, const int* __restrict__ counts,
    const int* __restrict__ n_dst, int capacity, int fanout, const i64* __restrict__ rows, float* __restrict__ out,
    i64* overflow) {
    const i64 live = zg_clamp_live(*n_dst, capacity, overflow);
    if ((width & 3) == 0) {  // float4 path: the same sums in the same order, four columns at a time
        const i64 q = width >> 2;
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* out4 = reinterpret_cast<float4*>(out);
        ZG_GRID_STRIDE(i, (i64)capacity * q) {
            const i64 p = i / q, c = i - p * q;
            if (p >= live) { out4[i] = make_float4(0.f, 0.f, 0.f, 0.f); continue; }
            const int cnt = counts[p];
            const float4 self = x4[zg_row(rows, p) * q + c];
            const float4 sum = zg_ell_row_sum4(x4, rows, q, nbr_local + p * fanout, cnt, c);
            out4[i] = zg_div4(zg_add4(self, sum), (float)(cnt + 1));
        }
        return;
    }
    ZG_GRID_STRIDE(i, (i64)capacity * width) {
        const i64 p = i / width, c = i - p * width;
        if (p >= live) { out[i] = 0.f; continue; }  // padded rows: zero, never stale
        const int cnt = counts[p];
        const float self = x[zg_row(rows, p) * width + c];
        out[i] = (self + zg_ell_row_sum(x, rows, width, nbr_local + p * fanout, cnt, c)) / (float)(cnt + 1);
    }
}

// The scatter backward: grad_x must be zeroed by the caller; shared rows accumulate atomically. Elements
// the ReLU mask blocks are never added to (or, four columns at a time, add +0.0), so they keep the caller's
// zero. column_sums (null, or width floats the caller zeroes) receives the column sums of grad_x
// (zg_column_sums_begin).
extern "C" __global__ void gcn_aggregate_backward(
    const float* __restrict__ grad_out, i64 width, const int* __restrict__ nbr_local, const int* __restrict__ counts,
    const int* __restrict__ n_dst, int capacity, int fanout, const float* __restrict__ relu_out,
    float* __restrict__ grad_x, float* __restrict__ column_sums, i64* overflow) {
    __shared__ float shared_sums[ZG_SUM_COLUMNS];
    float* sums = zg_column_sums_begin(shared_sums, column_sums, width);
    const i64 live = zg_clamp_live(*n_dst, capacity, overflow);
    if ((width & 3) == 0) {  // float4 path: four columns per thread and per vector atomic
        const i64 q = width >> 2;
        const float4* g4 = reinterpret_cast<const float4*>(grad_out);
        float4* grad_x4 = reinterpret_cast<float4*>(grad_x);
        ZG_GRID_STRIDE(i, live * q) {
            const i64 p = i / q, c = i - p * q;
            const int cnt = counts[p];
            const float4 g = zg_div4(g4[i], (float)(cnt + 1));
            const float4 self = zg_atomic_add4(grad_x4, i, g, relu_out);
            zg_column_sums_add4(sums, c, zg_add4(self, zg_ell_row_scatter4(grad_x4, q, nbr_local + p * fanout, cnt,
                                                                           c, g, relu_out)));
        }
    } else {
        ZG_GRID_STRIDE(i, live * width) {
            const i64 p = i / width, c = i - p * width;
            const int cnt = counts[p];
            const float g = grad_out[i] / (float)(cnt + 1);
            float added = 0.f;
            if (!zg_relu_blocks(relu_out, i)) {
                atomicAdd(&grad_x[i], g);
                added = g;
            }
            zg_column_sums_add(sums, c, added + zg_ell_row_scatter(grad_x, width, nbr_local + p * fanout, cnt, c, g,
                                                                   relu_out));
        }
    }
    zg_column_sums_end(shared_sums, column_sums, width);
}

// The deterministic backward: every row of grad_x (num_src rows) pulls its self-loop share, then its
// readers' shares in slot order, through the block's transpose (ell_transpose.cu); the ReLU mask applies
// to the finished sum, as threshold_backward after it would.
extern "C" __global__ void gcn_aggregate_backward_transposed(
    const float* __restrict__ grad_out, i64 width, const int* __restrict__ counts, const int* __restrict__ n_dst,
    int capacity, int fanout, const int* __restrict__ ends, const int* __restrict__ degree,
    const int* __restrict__ order, int num_src, const float* __restrict__ relu_out, float* __restrict__ grad_x,
    i64* overflow) {
    const i64 live = zg_clamp_live(*n_dst, capacity, overflow);
    if ((width & 3) == 0) {
        const i64 q = width >> 2;
        const float4* g4 = reinterpret_cast<const float4*>(grad_out);
        float4* grad_x4 = reinterpret_cast<float4*>(grad_x);
        ZG_GRID_STRIDE(i, (i64)num_src * q) {
            const i64 s = i / q, c = i - s * q;
            const float4 self = s < live ? zg_div4(g4[i], (float)(counts[s] + 1)) : make_float4(0.f, 0.f, 0.f, 0.f);
            grad_x4[i] = zg_relu_grad4(
                zg_transposed_sum4(self, g4, q, counts, 1, fanout, order, ends[s] - degree[s], ends[s], c), relu_out,
                i);
        }
        return;
    }
    ZG_GRID_STRIDE(i, (i64)num_src * width) {
        const i64 s = i / width, c = i - s * width;
        const float self = s < live ? grad_out[i] / (float)(counts[s] + 1) : 0.f;
        grad_x[i] = zg_relu_grad(
            zg_transposed_sum(self, grad_out, width, counts, 1, fanout, order, ends[s] - degree[s], ends[s], c),
            relu_out, i);
    }
}
