// The dense layers' GEMMs in a fixed order of additions, for deterministic runs: every output element is
// one thread's sequential fmaf chain over its reduction index, so its bits depend on its own inputs alone,
// never on the matrices' row counts or on the tile shape (cuBLAS picks its kernel, and for some shapes a
// split of the reduction, by the row count: two variants whose row counts differ get different bits).
//
//   C(i, j) = sum over r in [r_begin, r_end) of A(i, r) * B(j, r),  A(i, r) = a[i * a_i + r * a_r],
//                                                                   B(j, r) = b[j * b_j + r * b_r],
// optionally plus bias[j] and through ReLU, stored at c[chunk * c_chunk + i * c_i + j]. One block computes
// a TM x TN tile of C for one chunk of the reduction: the whole reduction for the row-wise GEMMs (the
// output, the input gradient: the reduction is the feature dimension), and fixed chunks of `chunk_rows`
// rows for the weight gradient (the reduction is over rows), whose partials dense_chunk_sums adds in
// chunk order. Rows of zeros past the live ones change no sum (the one exception: a partial sum of
// exactly -0.0, which +0.0 * x turns into +0.0; a float sum reaches -0.0 only by underflow).
//
// Blocks of 256 threads, each owning a (TM / 16) x (TN / 16) patch; stages of DG_ROWS reduction indices
// go through shared memory, the next stage's loads in flight (in registers) while this one is computed.
// Blocks are flattened into blockIdx.x: j tile fastest, then i tile, then chunk.
#include "zerognn_common.cuh"

#define DG_THREADS 256
#define DG_ROWS 16

template <int TM, int TN>
__device__ __forceinline__ void dg_gemm(const float* __restrict__ a, i64 a_i, i64 a_r, const float* __restrict__ b,
                                       i64 b_j, i64 b_r, i64 rows_i, i64 cols_j, i64 reduce, i64 chunk_rows,
                                       const float* __restrict__ bias, int relu, float* __restrict__ c, i64 c_i,
                                       i64 c_chunk) {
    constexpr int PM = TM / 16, PN = TN / 16;                  // each thread's patch
    constexpr int LA = DG_ROWS * TM / DG_THREADS, LB = DG_ROWS * TN / DG_THREADS;  // loads per stage
    __shared__ __align__(16) float as[DG_ROWS][TM + 4];
    __shared__ __align__(16) float bs[DG_ROWS][TN + 4];
    const i64 j_tiles = (cols_j + TN - 1) / TN, i_tiles = (rows_i + TM - 1) / TM;
    const i64 blk = blockIdx.x;
    const i64 j0 = blk % j_tiles * TN, i0 = blk / j_tiles % i_tiles * TM, chunk = blk / (j_tiles * i_tiles);
    const i64 r_begin = chunk * chunk_rows, r_end = min(r_begin + chunk_rows, reduce);
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    // Which index walks consecutive threads when loading: the one that is contiguous in memory.
    const bool a_along_r = a_r == 1, b_along_r = b_r == 1;
    float ra[LA], rb[LB];
    auto load = [&](i64 r0) {
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            const int e = threadIdx.x + l * DG_THREADS;
            const int rr = a_along_r ? e % DG_ROWS : e / TM, ii = a_along_r ? e / DG_ROWS : e % TM;
            const i64 r = r0 + rr, i = i0 + ii;
            ra[l] = r < r_end && i < rows_i ? a[i * a_i + r * a_r] : 0.f;
        }
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            const int e = threadIdx.x + l * DG_THREADS;
            const int rr = b_along_r ? e % DG_ROWS : e / TN, jj = b_along_r ? e / DG_ROWS : e % TN;
            const i64 r = r0 + rr, j = j0 + jj;
            rb[l] = r < r_end && j < cols_j ? b[j * b_j + r * b_r] : 0.f;
        }
    };
    auto store = [&]() {
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            const int e = threadIdx.x + l * DG_THREADS;
            as[a_along_r ? e % DG_ROWS : e / TM][a_along_r ? e / DG_ROWS : e % TM] = ra[l];
        }
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            const int e = threadIdx.x + l * DG_THREADS;
            bs[b_along_r ? e % DG_ROWS : e / TN][b_along_r ? e / DG_ROWS : e % TN] = rb[l];
        }
    };
    float acc[PM][PN];
#pragma unroll
    for (int p = 0; p < PM; ++p)
#pragma unroll
        for (int q = 0; q < PN; ++q) acc[p][q] = 0.f;
    if (r_begin < r_end) load(r_begin);
    for (i64 r0 = r_begin; r0 < r_end; r0 += DG_ROWS) {
        store();
        __syncthreads();
        if (r0 + DG_ROWS < r_end) load(r0 + DG_ROWS);  // in flight while this stage is computed
#pragma unroll
        for (int rr = 0; rr < DG_ROWS; ++rr) {  // reduction indices in order: each sum is sequential
            float x[PM], y[PN];
#pragma unroll
            for (int p = 0; p < PM; p += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&as[rr][(p / 4) * 64 + ty * 4]);
                x[p] = v.x, x[p + 1] = v.y, x[p + 2] = v.z, x[p + 3] = v.w;
            }
#pragma unroll
            for (int q = 0; q < PN; q += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&bs[rr][(q / 4) * 64 + tx * 4]);
                y[q] = v.x, y[q + 1] = v.y, y[q + 2] = v.z, y[q + 3] = v.w;
            }
#pragma unroll
            for (int p = 0; p < PM; ++p)
#pragma unroll
                for (int q = 0; q < PN; ++q) acc[p][q] = fmaf(x[p], y[q], acc[p][q]);
        }
        __syncthreads();
    }
    float* out = c + chunk * c_chunk;
#pragma unroll
    for (int p = 0; p < PM; ++p) {
        const i64 i = i0 + (p / 4) * 64 + ty * 4 + p % 4;
        if (i >= rows_i) continue;
#pragma unroll
        for (int q = 0; q < PN; ++q) {
            const i64 j = j0 + (q / 4) * 64 + tx * 4 + q % 4;
            if (j >= cols_j) continue;
            float v = acc[p][q];
            if (bias != nullptr) v += bias[j];
            if (relu) v = fmaxf(v, 0.f);
            out[i * c_i + j] = v;
        }
    }
}

// Tiles of 128 x 128 (8 x 8 per thread) for large problems, 64 x 64 (4 x 4) where they would leave SMs idle;
// the tile changes which thread computes an element, not the order of its sum.
extern "C" __global__ void dense_gemm_128(
    const float* __restrict__ a, i64 a_i, i64 a_r, const float* __restrict__ b, i64 b_j, i64 b_r, i64 rows_i,
    i64 cols_j, i64 reduce, i64 chunk_rows, const float* __restrict__ bias, int relu, float* __restrict__ c, i64 c_i,
    i64 c_chunk) {
    dg_gemm<128, 128>(a, a_i, a_r, b, b_j, b_r, rows_i, cols_j, reduce, chunk_rows, bias, relu, c, c_i, c_chunk);
}

extern "C" __global__ void dense_gemm_64(
    const float* __restrict__ a, i64 a_i, i64 a_r, const float* __restrict__ b, i64 b_j, i64 b_r, i64 rows_i,
    i64 cols_j, i64 reduce, i64 chunk_rows, const float* __restrict__ bias, int relu, float* __restrict__ c, i64 c_i,
    i64 c_chunk) {
    dg_gemm<64, 64>(a, a_i, a_r, b, b_j, b_r, rows_i, cols_j, reduce, chunk_rows, bias, relu, c, c_i, c_chunk);
}

// partial[chunk][j] = the sum of g[r][j] over the chunk's rows, in row order (a bias gradient's chunks).
extern "C" __global__ void dense_column_sums(
    const float* __restrict__ g, i64 rows, i64 cols, i64 chunk_rows, float* __restrict__ partial, i64 c_chunk) {
    const i64 chunks = (rows + chunk_rows - 1) / chunk_rows;
    ZG_GRID_STRIDE(t, chunks * cols) {
        const i64 chunk = t / cols, j = t - chunk * cols;
        const i64 end = min((chunk + 1) * chunk_rows, rows);
        float acc = 0.f;
        for (i64 r = chunk * chunk_rows; r < end; ++r) acc += g[r * cols + j];
        partial[chunk * c_chunk + j] = acc;
    }
}

// out[i] = the sum of partial[chunk * count + i] over the chunks, in chunk order.
extern "C" __global__ void dense_chunk_sums(
    const float* __restrict__ partial, i64 chunks, i64 count, float* __restrict__ out) {
    ZG_GRID_STRIDE(i, count) {
        float acc = 0.f;
        for (i64 chunk = 0; chunk < chunks; ++chunk) acc += partial[chunk * count + i];
        out[i] = acc;
    }
}
