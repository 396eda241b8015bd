// GraphSAGE's layer input over an ELL block, ready for one GEMM: out[p] = [mean of x[nbr_local[p, i]] for
// i < counts[p] (zeros where counts[p] == 0) | x[p]] (frontiers are prefixes, so destination p is row p of
// x), and its gradient with respect to x. One kernel each way: the self half needs no copy kernel, and
// the layer's two linears become one GEMM over [aggregate | self] with K = 2 * width.
//
// The forward takes rows: null, or the ids of x's rows in a table x (zg_row), so that the first layer
// reads the input features where they are, x[rows[j]] for x[j] in the self half and the sums alike, and
// no gather kernel writes them out first. The input features need no gradient, so no backward takes it.
//
// Both backwards take relu_out: x itself where x is a ReLU's output (null otherwise), so that the
// gradient they write is already the ReLU input's (zg_relu_grad). Every use of x is here, the self half
// included, so the mask covers every path by which the gradient reaches x.
#include "zerognn_common.cuh"

extern "C" __global__ void sage_concat_forward(
    const float* __restrict__ x, i64 width, const int* __restrict__ nbr_local, const int* __restrict__ counts,
    const int* __restrict__ n_dst, int capacity, int fanout, const i64* __restrict__ rows, float* __restrict__ out,
    i64* overflow) {
    const i64 live = zg_clamp_live(*n_dst, capacity, overflow);
    if ((width & 3) == 0) {  // float4 path: the same sums in the same order, four columns at a time
        const i64 q = width >> 2, out_q = 2 * q;
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* out4 = reinterpret_cast<float4*>(out);
        ZG_GRID_STRIDE(i, (i64)capacity * out_q) {
            const i64 p = i / out_q, c = i - p * out_q;
            if (p >= live) { out4[i] = make_float4(0.f, 0.f, 0.f, 0.f); continue; }
            if (c >= q) { out4[i] = x4[zg_row(rows, p) * q + (c - q)]; continue; }
            const int cnt = counts[p];
            const float4 acc = zg_ell_row_sum4(x4, rows, q, nbr_local + p * fanout, cnt, c);
            out4[i] = cnt > 0 ? zg_div4(acc, (float)cnt) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        return;
    }
    const i64 out_width = 2 * width;
    ZG_GRID_STRIDE(i, (i64)capacity * out_width) {
        const i64 p = i / out_width, c = i - p * out_width;
        if (p >= live) { out[i] = 0.f; continue; }  // padded rows: zero, never stale
        if (c >= width) { out[i] = x[zg_row(rows, p) * width + (c - width)]; continue; }
        const int cnt = counts[p];
        const float acc = zg_ell_row_sum(x, rows, width, nbr_local + p * fanout, cnt, c);
        out[i] = cnt > 0 ? acc / (float)cnt : 0.f;
    }
}

// The scatter backward: grad_x must be zeroed by the caller; rows shared by several destinations (and by a
// destination's own self half) accumulate atomically, in whatever order the threads arrive. Elements the
// ReLU mask blocks are never added to (or, four columns at a time, add +0.0), so they keep the caller's
// zero. column_sums (null, or width floats the caller zeroes) receives the column sums of grad_x
// (zg_column_sums_begin).
extern "C" __global__ void sage_concat_backward(
    const float* __restrict__ grad_out, i64 width, const int* __restrict__ nbr_local, const int* __restrict__ counts,
    const int* __restrict__ n_dst, int capacity, int fanout, const float* __restrict__ relu_out,
    float* __restrict__ grad_x, float* __restrict__ column_sums, i64* overflow) {
    __shared__ float shared_sums[ZG_SUM_COLUMNS];
    float* sums = zg_column_sums_begin(shared_sums, column_sums, width);
    const i64 live = zg_clamp_live(*n_dst, capacity, overflow);
    if ((width & 3) == 0) {  // float4 path: four columns per thread and per vector atomic
        const i64 q = width >> 2, out_q = 2 * q;
        const float4* g4 = reinterpret_cast<const float4*>(grad_out);
        float4* grad_x4 = reinterpret_cast<float4*>(grad_x);
        ZG_GRID_STRIDE(i, live * out_q) {
            const i64 p = i / out_q, c = i - p * out_q;
            if (c >= q) {
                zg_column_sums_add4(sums, c - q, zg_atomic_add4(grad_x4, p * q + (c - q), g4[i], relu_out));
                continue;
            }
            const int cnt = counts[p];
            if (cnt == 0) continue;
            zg_column_sums_add4(sums, c, zg_ell_row_scatter4(grad_x4, q, nbr_local + p * fanout, cnt, c,
                                                             zg_div4(g4[i], (float)cnt), relu_out));
        }
    } else {
        const i64 out_width = 2 * width;
        ZG_GRID_STRIDE(i, live * out_width) {
            const i64 p = i / out_width, c = i - p * out_width;
            if (c >= width) {
                const i64 j = p * width + (c - width);
                if (!zg_relu_blocks(relu_out, j)) {
                    atomicAdd(&grad_x[j], grad_out[i]);
                    zg_column_sums_add(sums, c - width, grad_out[i]);
                }
                continue;
            }
            const int cnt = counts[p];
            if (cnt == 0) continue;
            zg_column_sums_add(sums, c, zg_ell_row_scatter(grad_x, width, nbr_local + p * fanout, cnt, c,
                                                           grad_out[i] / (float)cnt, relu_out));
        }
    }
    zg_column_sums_end(shared_sums, column_sums, width);
}

// The deterministic backward: every row of grad_x (num_src rows, none left unwritten) pulls its self half,
// then its readers' shares in slot order, through the block's transpose (ell_transpose.cu); the ReLU mask
// applies to the finished sum, as threshold_backward after it would.
extern "C" __global__ void sage_concat_backward_transposed(
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
            const float4 self = s < live ? g4[s * 2 * q + q + c] : make_float4(0.f, 0.f, 0.f, 0.f);
            grad_x4[i] = zg_relu_grad4(
                zg_transposed_sum4(self, g4, 2 * q, counts, 0, fanout, order, ends[s] - degree[s], ends[s], c),
                relu_out, i);
        }
        return;
    }
    ZG_GRID_STRIDE(i, (i64)num_src * width) {
        const i64 s = i / width, c = i - s * width;
        const float self = s < live ? grad_out[s * 2 * width + width + c] : 0.f;
        grad_x[i] = zg_relu_grad(zg_transposed_sum(self, grad_out, 2 * width, counts, 0, fanout, order,
                                                   ends[s] - degree[s], ends[s], c),
                                 relu_out, i);
    }
}
