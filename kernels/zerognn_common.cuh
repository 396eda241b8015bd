// Shared device helpers for every ZeroGNN operator: the counter-based RNG (bit-identical to
// zerognn/rng.py), grid-stride loops and the overflow record.
//
// Conventions every kernel follows:
//  * live element counts are read from device memory (const int* n), never passed by value, so one
//    kernel serves exact grids (host-mediated) and fixed grids sized from an envelope (zerognn);
//  * loops are grid-stride, so any grid >= 1 is correct;
//  * a kernel never writes past a buffer's capacity: it raises the overflow record instead
//    (flag = 1, need = the size it would have needed, via atomicMax).
#pragma once

typedef unsigned long long u64;
typedef long long i64;

#define ZG_GOLDEN 0x9E3779B97F4A7C15ull
#define ZG_MUL1 0xBF58476D1CE4E5B9ull
#define ZG_MUL2 0x94D049BB133111EBull
#define ZG_MAX_FANOUT 64
#define ZG_RANK_WORDS 1024  // bitmap words per tile of relabel_nodes' scan (RANK_WORDS in zerognn/cuda/sampling.py)

#define ZG_GRID_STRIDE(i, n) \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (i64)(n); i += (i64)gridDim.x * blockDim.x)

__device__ __forceinline__ u64 zg_mix64(u64 z) {
    z = (z ^ (z >> 30)) * ZG_MUL1;
    z = (z ^ (z >> 27)) * ZG_MUL2;
    return z ^ (z >> 31);
}

__device__ __forceinline__ u64 zg_combine(u64 h, u64 x) { return zg_mix64(h ^ zg_mix64(x + ZG_GOLDEN)); }

__device__ __forceinline__ u64 zg_draw(u64 key, u64 i) { return zg_mix64(key + (i + 1) * ZG_GOLDEN); }

// Uniform integer in [0, n) for 0 < n < 2^31 (multiply-shift on the top 32 bits).
__device__ __forceinline__ i64 zg_uniform_below(u64 r, i64 n) { return (i64)(((r >> 32) * (u64)n) >> 32); }

// Lanes that sample one node (sample_neighbors.cu): the fanout rounded up to a power of two, at most a warp
// (sample_lanes in zerognn/cuda/sampling.py sizes the host's grids by the same rule).
__device__ __forceinline__ int zg_sample_lanes(int fanout) {
    int lanes = 1;
    while (lanes < fanout && lanes < 32) lanes <<= 1;
    return lanes;
}

// overflow[0] = flag, overflow[1] = largest size needed (both int64).
__device__ __forceinline__ void zg_raise_overflow(i64* overflow, i64 needed) {
    atomicExch((u64*)&overflow[0], 1ull);
    atomicMax(&overflow[1], needed);
}

// The live count a kernel may touch: min(live, capacity); a live count above the capacity of the
// buffer being written raises the overflow record (once, from thread 0 of block 0).
__device__ __forceinline__ i64 zg_clamp_live(i64 live, i64 capacity, i64* overflow) {
    if (live > capacity) {
        if (blockIdx.x == 0 && threadIdx.x == 0) zg_raise_overflow(overflow, live);
        return capacity;
    }
    return live;
}

// Row j of an aggregation's input x: row rows[j] of x when a row map is given (x is then a table, e.g.
// the input features, whose rows the ids in `rows` name: the rows are read where they are, with no
// gathered copy), else row j. The map changes which row is read, never the order of the additions.
__device__ __forceinline__ i64 zg_row(const i64* rows, i64 j) { return rows == nullptr ? j : rows[j]; }

// Sum of column c over the sampled neighbours of one ELL row (slots with local id -1 are skipped); x's
// rows are read through `rows` (zg_row; null: row j is x's row j).
__device__ __forceinline__ float zg_ell_row_sum(const float* x, const i64* rows, i64 width, const int* row, int cnt,
                                                i64 c) {
    float acc = 0.f;
    for (int k = 0; k < cnt; ++k) if (row[k] >= 0) acc += x[zg_row(rows, row[k]) * width + c];
    return acc;
}

// Rows of a float matrix whose width is a multiple of 4 are read as float4 (16-byte loads): a gather
// moves four columns per thread and per index read. zg_vec_width(width) is the row width in the units a
// thread moves (width / 4 float4s, else width floats); the host sizes grids by the same rule
// (vector_width in zerognn/cuda/launch.py).
__device__ __forceinline__ i64 zg_vec_width(i64 width) { return (width & 3) == 0 ? width >> 2 : width; }

__device__ __forceinline__ float4 zg_add4(float4 a, float4 b) {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

__device__ __forceinline__ float4 zg_div4(float4 a, float d) { return make_float4(a.x / d, a.y / d, a.z / d, a.w / d); }

// zg_ell_row_sum over float4 column group c of rows of width q float4s (same order of additions).
__device__ __forceinline__ float4 zg_ell_row_sum4(const float4* x, const i64* rows, i64 q, const int* row, int cnt,
                                                  i64 c) {
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int k = 0; k < cnt; ++k) if (row[k] >= 0) acc = zg_add4(acc, x[zg_row(rows, row[k]) * q + c]);
    return acc;
}

// The ReLU's backward folded into the backward of an aggregation whose input x is a ReLU's output: element
// i of x's gradient is g where relu_out[i] (that output, x itself) is positive and 0 elsewhere, exactly
// what PyTorch's threshold_backward(g, relu_out, 0) would give afterwards (relu_out <= 0 ? 0 : g), without
// a kernel that reads and writes the whole gradient again. A null relu_out (an input that is no ReLU's
// output) leaves g as it is. The mask is per element of x, so it commutes with the sums that form g.
__device__ __forceinline__ bool zg_relu_blocks(const float* relu_out, i64 i) {
    return relu_out != nullptr && relu_out[i] <= 0.f;
}

__device__ __forceinline__ float zg_relu_grad(float g, const float* relu_out, i64 i) {
    return zg_relu_blocks(relu_out, i) ? 0.f : g;
}

// zg_relu_grad over float4 column group i (relu_out read as float4s, like the gradient).
__device__ __forceinline__ float4 zg_relu_grad4(float4 g, const float* relu_out, i64 i) {
    if (relu_out == nullptr) return g;
    const float4 r = reinterpret_cast<const float4*>(relu_out)[i];
    return make_float4(r.x <= 0.f ? 0.f : g.x, r.y <= 0.f ? 0.f : g.y, r.z <= 0.f ? 0.f : g.z, r.w <= 0.f ? 0.f : g.w);
}

// Add g to column c of every sampled neighbour's row of grad_x (the transpose of zg_ell_row_sum); an
// element the ReLU mask blocks (zg_relu_blocks) keeps the zero the caller wrote. Returns the sum it added.
__device__ __forceinline__ float zg_ell_row_scatter(float* grad_x, i64 width, const int* row, int cnt, i64 c, float g,
                                                    const float* relu_out) {
    float added = 0.f;
    for (int k = 0; k < cnt; ++k) {
        if (row[k] < 0) continue;
        const i64 j = (i64)row[k] * width + c;
        if (!zg_relu_blocks(relu_out, j)) {
            atomicAdd(&grad_x[j], g);
            added += g;
        }
    }
    return added;
}

// Add g to float4 element j of grad_x4 where the ReLU mask lets it through (zg_relu_grad4: blocked lanes
// add +0.0 to the caller's zero, which leaves it +0.0, as never adding would); returns what it added. One
// 16-byte vector atomic on compute capability 9.0 and later (a quarter of the L2 atomic operations of four
// float ones), four float atomics before it.
__device__ __forceinline__ float4 zg_atomic_add4(float4* grad_x4, i64 j, float4 g, const float* relu_out) {
    g = zg_relu_grad4(g, relu_out, j);
#if __CUDA_ARCH__ >= 900
    atomicAdd(grad_x4 + j, g);
#else
    float* e = reinterpret_cast<float*>(grad_x4 + j);
    atomicAdd(e, g.x);
    atomicAdd(e + 1, g.y);
    atomicAdd(e + 2, g.z);
    atomicAdd(e + 3, g.w);
#endif
    return g;
}

// zg_ell_row_scatter over float4 column group c of rows of width q float4s; returns the sum of what it added.
__device__ __forceinline__ float4 zg_ell_row_scatter4(float4* grad_x4, i64 q, const int* row, int cnt, i64 c,
                                                      float4 g, const float* relu_out) {
    float4 added = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int k = 0; k < cnt; ++k)
        if (row[k] >= 0) added = zg_add4(added, zg_atomic_add4(grad_x4, (i64)row[k] * q + c, g, relu_out));
    return added;
}

// The column sums of the gradient a scatter backward writes, gathered as it writes it: the bias gradient of
// the layer whose output x is, when the aggregation is that output's only reader (zerognn.column_sums; the
// dense layer then sums no rows of its own). Each block adds its contributions into `shared` (ZG_SUM_COLUMNS
// floats of shared memory) and then once per column into column_sums, which the caller zeroes; wider rows
// add into column_sums directly. Float atomics: the order of the additions, and so the last bits, vary from
// run to run, as the scatter's own do. `sums` from zg_column_sums_begin is null when no sums are wanted;
// every thread of the block calls begin and end (they synchronise the block).
#define ZG_SUM_COLUMNS 1024

__device__ __forceinline__ float* zg_column_sums_begin(float* shared, float* column_sums, i64 width) {
    if (column_sums == nullptr || width > ZG_SUM_COLUMNS) return column_sums;
    for (i64 c = threadIdx.x; c < width; c += blockDim.x) shared[c] = 0.f;
    __syncthreads();
    return shared;
}

__device__ __forceinline__ void zg_column_sums_add(float* sums, i64 c, float v) {
    if (sums != nullptr) atomicAdd(sums + c, v);
}

__device__ __forceinline__ void zg_column_sums_add4(float* sums, i64 c4, float4 v) {
    if (sums == nullptr) return;
    float* s = sums + 4 * c4;
    atomicAdd(s, v.x);
    atomicAdd(s + 1, v.y);
    atomicAdd(s + 2, v.z);
    atomicAdd(s + 3, v.w);
}

__device__ __forceinline__ void zg_column_sums_end(const float* shared, float* column_sums, i64 width) {
    if (column_sums == nullptr || width > ZG_SUM_COLUMNS) return;
    __syncthreads();
    for (i64 c = threadIdx.x; c < width; c += blockDim.x)
        if (shared[c] != 0.f) atomicAdd(column_sums + c, shared[c]);
}

// The transpose of zg_ell_row_sum, deterministically: acc plus column c of the destination rows of g
// (row stride `stride`) over the slots order[start..end) that read one source (ell_transpose.cu), each
// divided by its destination's counts[p] + extra, in slot order. float4 variant below.
__device__ __forceinline__ float zg_transposed_sum(float acc, const float* g, i64 stride, const int* counts, int extra,
                                                  int fanout, const int* order, int start, int end, i64 c) {
    for (int j = start; j < end; ++j) {
        const int p = order[j] / fanout;
        acc += g[(i64)p * stride + c] / (float)(counts[p] + extra);
    }
    return acc;
}

__device__ __forceinline__ float4 zg_transposed_sum4(float4 acc, const float4* g, i64 stride, const int* counts,
                                                    int extra, int fanout, const int* order, int start, int end, i64 c) {
    for (int j = start; j < end; ++j) {
        const int p = order[j] / fanout;
        acc = zg_add4(acc, zg_div4(g[(i64)p * stride + c], (float)(counts[p] + extra)));
    }
    return acc;
}

// Exclusive prefix sum across the block of one int per thread; *total receives the block's sum. Every
// thread of the block must call it (blockDim.x a multiple of 32, at most 1024).
__device__ __forceinline__ int zg_block_exclusive_scan(int value, int* total) {
    __shared__ int warp_sums[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    int x = value;
    for (int d = 1; d < 32; d <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        int s = lane < warps ? warp_sums[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            const int y = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= d) s += y;
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    const int before = (warp > 0 ? warp_sums[warp - 1] : 0) + x - value;
    *total = warp_sums[warps - 1];
    __syncthreads();  // warp_sums may be reused by the next call
    return before;
}
