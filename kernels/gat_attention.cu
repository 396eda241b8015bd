// GAT attention over an ELL block plus the self loop, one warp per (destination, head):
//   e_k = leaky_relu(score_src[src_k, h] + score_dst[p, h]),  alpha = softmax_k(e),
//   out[p, h, :] = sum_k alpha_k z[src_k, h, :]          with src_k = nbr_local[p, k] (k < counts[p]) or p.
// The forward pass stores alpha ([capacity, fanout + 1, heads], the self loop last) for the backward
// pass and zeroes the output rows past the live count. Neighbours without a local id (-1, dropped by an
// overflow upstream) get no weight.
#include "zerognn_common.cuh"

#define ZG_WARP 32

__device__ __forceinline__ float zg_warp_sum(float v) {
    for (int o = ZG_WARP / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float zg_warp_max(float v) {
    for (int o = ZG_WARP / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Source of slot k (the self loop is slot `cnt`), or -1 for a dropped neighbour.
__device__ __forceinline__ i64 zg_gat_source(const int* row, int k, int cnt, i64 p) { return k < cnt ? (i64)row[k] : p; }

__device__ __forceinline__ float zg_gat_logit(float pre, float negative_slope) { return pre > 0.f ? pre : pre * negative_slope; }

extern "C" __global__ void gat_attention_forward(
    const float* __restrict__ z, const float* __restrict__ score_src, const float* __restrict__ score_dst,
    const int* __restrict__ nbr_local, const int* __restrict__ counts, const int* __restrict__ n_dst, int capacity,
    int fanout, int heads, int channels, float negative_slope, float* __restrict__ alpha, float* __restrict__ out,
    i64* overflow) {
    const int lane = threadIdx.x % ZG_WARP;
    const i64 live = zg_clamp_live(*n_dst, capacity, overflow);
    const i64 stride = (i64)gridDim.x * blockDim.x / ZG_WARP;
    for (i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / ZG_WARP; w < (i64)capacity * heads; w += stride) {
        const i64 p = w / heads;
        const int h = (int)(w - p * heads);
        if (p >= live) {  // padded rows: zero output, never stale
            for (int c = lane; c < channels; c += ZG_WARP) out[(p * heads + h) * channels + c] = 0.f;
            continue;
        }
        const int cnt = counts[p];
        const int* row = nbr_local + p * fanout;
        const float sd = score_dst[p * heads + h];
        float* a = alpha + p * (fanout + 1) * heads;
        float m = __int_as_float(0xff800000);  // -inf
        for (int k = lane; k <= cnt; k += ZG_WARP) {
            const i64 src = zg_gat_source(row, k, cnt, p);
            if (src >= 0) m = fmaxf(m, zg_gat_logit(score_src[src * heads + h] + sd, negative_slope));
        }
        m = zg_warp_max(m);
        float s = 0.f;
        for (int k = lane; k <= cnt; k += ZG_WARP) {
            const i64 src = zg_gat_source(row, k, cnt, p);
            if (src >= 0) s += __expf(zg_gat_logit(score_src[src * heads + h] + sd, negative_slope) - m);
        }
        s = zg_warp_sum(s);
        for (int k = lane; k <= cnt; k += ZG_WARP) {
            const i64 src = zg_gat_source(row, k, cnt, p);
            const float e = src >= 0 ? __expf(zg_gat_logit(score_src[src * heads + h] + sd, negative_slope) - m) : 0.f;
            a[(k < cnt ? k : fanout) * heads + h] = e / s;
        }
        __syncwarp();
        for (int c = lane; c < channels; c += ZG_WARP) {
            float acc = 0.f;
            for (int k = 0; k <= cnt; ++k) {
                const i64 src = zg_gat_source(row, k, cnt, p);
                if (src >= 0) acc += a[(k < cnt ? k : fanout) * heads + h] * z[(src * heads + h) * channels + c];
            }
            out[(p * heads + h) * channels + c] = acc;
        }
    }
}

// grad_score_dst is written. The scatter backward (grad_logit null): grad_z and grad_score_src, zeroed by
// the caller, accumulate atomically here, in whatever order the threads arrive. The deterministic one:
// each slot's logit gradient goes to grad_logit ([capacity, fanout + 1, heads], alpha's layout) and
// gat_attention_backward_transposed pulls grad_z and grad_score_src in slot order.
extern "C" __global__ void gat_attention_backward(
    const float* __restrict__ grad_out, const float* __restrict__ z, const float* __restrict__ score_src,
    const float* __restrict__ score_dst, const float* __restrict__ alpha, const int* __restrict__ nbr_local,
    const int* __restrict__ counts, const int* __restrict__ n_dst, int capacity, int fanout, int heads, int channels,
    float negative_slope, float* __restrict__ grad_z, float* __restrict__ grad_score_src,
    float* __restrict__ grad_score_dst, float* __restrict__ grad_logit, i64* overflow) {
    const bool scatter = grad_logit == nullptr;
    const int lane = threadIdx.x % ZG_WARP;
    const i64 warps = zg_clamp_live(*n_dst, capacity, overflow) * heads;
    const i64 stride = (i64)gridDim.x * blockDim.x / ZG_WARP;
    for (i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / ZG_WARP; w < warps; w += stride) {
        const i64 p = w / heads;
        const int h = (int)(w - p * heads);
        const int cnt = counts[p];
        const int* row = nbr_local + p * fanout;
        const float* a = alpha + p * (fanout + 1) * heads;
        const float* g = grad_out + (p * heads + h) * channels;
        // s = sum_k alpha_k * (g . z_k): the softmax Jacobian's shared term.
        float s = 0.f;
        for (int k = 0; k <= cnt; ++k) {
            const i64 src = zg_gat_source(row, k, cnt, p);
            if (src < 0) continue;
            float dot = 0.f;
            for (int c = lane; c < channels; c += ZG_WARP) dot += g[c] * z[(src * heads + h) * channels + c];
            s += a[(k < cnt ? k : fanout) * heads + h] * zg_warp_sum(dot);
        }
        float grad_dst = 0.f;
        const float sd = score_dst[p * heads + h];
        for (int k = 0; k <= cnt; ++k) {
            const i64 src = zg_gat_source(row, k, cnt, p);
            if (src < 0) continue;
            const float ak = a[(k < cnt ? k : fanout) * heads + h];
            float dot = 0.f;
            for (int c = lane; c < channels; c += ZG_WARP) {
                dot += g[c] * z[(src * heads + h) * channels + c];
                if (scatter) atomicAdd(&grad_z[(src * heads + h) * channels + c], ak * g[c]);
            }
            dot = zg_warp_sum(dot);
            const float pre = score_src[src * heads + h] + sd;
            const float de = ak * (dot - s) * (pre > 0.f ? 1.f : negative_slope);
            if (lane == 0) {
                if (scatter) atomicAdd(&grad_score_src[src * heads + h], de);
                else grad_logit[(p * (fanout + 1) + (k < cnt ? k : fanout)) * heads + h] = de;
            }
            grad_dst += de;
        }
        if (lane == 0) grad_score_dst[p * heads + h] = grad_dst;
    }
}

// The deterministic backward's second half: every source row (num_src rows, none left unwritten) pulls
// its self loop's share, then its readers' in slot order, through the block's transpose (ell_transpose.cu):
// grad_z[s, h, :] from alpha and grad_out, grad_score_src[s, h] from grad_logit.
extern "C" __global__ void gat_attention_backward_transposed(
    const float* __restrict__ grad_out, const float* __restrict__ alpha, const float* __restrict__ grad_logit,
    const int* __restrict__ n_dst, int capacity, int fanout, int heads, int channels, const int* __restrict__ ends,
    const int* __restrict__ degree, const int* __restrict__ order, int num_src, float* __restrict__ grad_z,
    float* __restrict__ grad_score_src, i64* overflow) {
    const i64 live = zg_clamp_live(*n_dst, capacity, overflow);
    const i64 slots = (i64)(fanout + 1) * heads;  // alpha's and grad_logit's row per destination
    const i64 row = (i64)heads * channels;
    ZG_GRID_STRIDE(i, (i64)num_src * row) {
        const i64 s = i / row, r = i - s * row, h = r / channels;
        float acc = s < live ? alpha[s * slots + (i64)fanout * heads + h] * grad_out[i] : 0.f;
        for (int j = ends[s] - degree[s]; j < ends[s]; ++j) {
            const i64 p = order[j] / fanout, k = order[j] - p * fanout;
            acc += alpha[p * slots + k * heads + h] * grad_out[p * row + r];
        }
        grad_z[i] = acc;
    }
    ZG_GRID_STRIDE(i, (i64)num_src * heads) {
        const i64 s = i / heads, h = i - s * heads;
        float acc = s < live ? grad_logit[s * slots + (i64)fanout * heads + h] : 0.f;
        for (int j = ends[s] - degree[s]; j < ends[s]; ++j) {
            const i64 p = order[j] / fanout, k = order[j] - p * fanout;
            acc += grad_logit[p * slots + k * heads + h];
        }
        grad_score_src[i] = acc;
    }
}
