// Device-side launch (CDP2) of the sampling, gather and aggregation kernels, for the
// dynamic-parallelism variant: each `dl_<kernel>` parent runs as one thread, reads the live element
// count its child needs from device memory and launches the child with an exactly sized grid into
// cudaStreamTailLaunch. The children are the operators' own kernels, compiled into this module; the
// build compiles it as relocatable device code and links it with cudadevrt (zerognn/cuda/build.py).
// zerognn: device-runtime
#include "sample_neighbors.cu"
#include "dedupe_nodes.cu"
#include "relabel_nodes.cu"
#include "gather_rows.cu"
#include "sage_concat.cu"
#include "gcn_aggregate.cu"
#include "gat_attention.cu"
#include "ell_transpose.cu"

__device__ __forceinline__ unsigned zg_exact_grid(i64 items, int per_block) {
    const i64 blocks = (items + per_block - 1) / per_block;
    return (unsigned)(blocks < 1 ? 1 : (blocks > 0x7fffffff ? 0x7fffffff : blocks));
}

__device__ __forceinline__ i64 zg_min(i64 a, i64 b) { return a < b ? a : b; }

#define ZG_TAIL(kernel, items, threads) kernel<<<zg_exact_grid((items), (threads)), (threads), 0, cudaStreamTailLaunch>>>

// The grid covers the live frontier; zg_exact_grid launches at least one block, so a hop with no live node
// still has block 0 zero its new-node count.
extern "C" __global__ void dl_sample_neighbors(
    const i64* rowptr, const int* col, const i64* frontier, const int* n_frontier, int capacity, int fanout,
    const u64* hop_key, i64* nbr, int* counts, unsigned* seen_bits, int* local_ids, int* new_count, i64* overflow,
    int threads) {
    ZG_TAIL(sample_neighbors, zg_min(*n_frontier, capacity) * zg_sample_lanes(fanout), threads)(
        rowptr, col, frontier, n_frontier, capacity, fanout, hop_key, nbr, counts, seen_bits, local_ids, new_count,
        overflow);
}

extern "C" __global__ void dl_dedupe_neighbors(
    const i64* nbr, const int* counts, const int* n_frontier, int fanout, const unsigned* seen_bits,
    unsigned* new_bits, int* new_count, int threads) {
    ZG_TAIL(dedupe_neighbors, (i64)(*n_frontier) * fanout, threads)(
        nbr, counts, n_frontier, fanout, seen_bits, new_bits, new_count);
}

// The bitmap's size is the graph's, not a live count: one block per tile of bitmap words (or per THREADS
// frontier slots to copy, if more), as the host would; relabel_nodes ranks every tile under any grid.
extern "C" __global__ void dl_relabel_nodes(
    const i64* frontier, const int* n_frontier, unsigned* new_bits, unsigned* seen_bits, i64 words,
    u64* tile_status, unsigned* tile_ticket, const int* new_count, int* local_ids, i64* next_frontier,
    int* next_count, int next_capacity, i64* overflow, int threads) {
    const i64 tiles = (words + ZG_RANK_WORDS - 1) / ZG_RANK_WORDS;
    const i64 copy_blocks = (zg_min(*n_frontier, next_capacity) + threads - 1) / threads;
    ZG_TAIL(relabel_nodes, (tiles > copy_blocks ? tiles : copy_blocks) * threads, threads)(
        frontier, n_frontier, new_bits, seen_bits, words, tile_status, tile_ticket, new_count, local_ids,
        next_frontier, next_count, next_capacity, overflow);
}

extern "C" __global__ void dl_relabel_neighbors(
    const i64* nbr, const int* counts, const int* n_frontier, int fanout, const int* local_ids, int* nbr_local,
    int threads) {
    ZG_TAIL(relabel_neighbors, (i64)(*n_frontier) * fanout, threads)(nbr, counts, n_frontier, fanout, local_ids,
                                                                     nbr_local);
}

extern "C" __global__ void dl_gather_rows(
    const float* table, i64 row_width, const i64* ids, const int* n_ids, int capacity, float* out, i64* overflow,
    int threads) {
    // Grid-stride children cover every slot (they also zero rows past the live count) under any grid.
    ZG_TAIL(gather_rows, zg_min(*n_ids, capacity) * zg_vec_width(row_width), threads)(
        table, row_width, ids, n_ids, capacity, out, overflow);
}

extern "C" __global__ void dl_gather_labels(
    const i64* labels, const i64* ids, const int* n_ids, int capacity, i64* out, i64* overflow, int threads) {
    ZG_TAIL(gather_labels, zg_min(*n_ids, capacity), threads)(labels, ids, n_ids, capacity, out, overflow);
}

extern "C" __global__ void dl_sage_concat_forward(
    const float* x, i64 width, const int* nbr_local, const int* counts, const int* n_dst, int capacity, int fanout,
    const i64* rows, float* out, i64* overflow, int threads) {
    ZG_TAIL(sage_concat_forward, zg_min(*n_dst, capacity) * 2 * zg_vec_width(width), threads)(
        x, width, nbr_local, counts, n_dst, capacity, fanout, rows, out, overflow);
}

extern "C" __global__ void dl_sage_concat_backward(
    const float* grad_out, i64 width, const int* nbr_local, const int* counts, const int* n_dst, int capacity,
    int fanout, const float* relu_out, float* grad_x, float* column_sums, i64* overflow, int threads) {
    ZG_TAIL(sage_concat_backward, zg_min(*n_dst, capacity) * 2 * zg_vec_width(width), threads)(
        grad_out, width, nbr_local, counts, n_dst, capacity, fanout, relu_out, grad_x, column_sums, overflow);
}

extern "C" __global__ void dl_gcn_aggregate_forward(
    const float* x, i64 width, const int* nbr_local, const int* counts, const int* n_dst, int capacity, int fanout,
    const i64* rows, float* out, i64* overflow, int threads) {
    ZG_TAIL(gcn_aggregate_forward, zg_min(*n_dst, capacity) * zg_vec_width(width), threads)(
        x, width, nbr_local, counts, n_dst, capacity, fanout, rows, out, overflow);
}

extern "C" __global__ void dl_gcn_aggregate_backward(
    const float* grad_out, i64 width, const int* nbr_local, const int* counts, const int* n_dst, int capacity,
    int fanout, const float* relu_out, float* grad_x, float* column_sums, i64* overflow, int threads) {
    ZG_TAIL(gcn_aggregate_backward, zg_min(*n_dst, capacity) * zg_vec_width(width), threads)(
        grad_out, width, nbr_local, counts, n_dst, capacity, fanout, relu_out, grad_x, column_sums, overflow);
}

extern "C" __global__ void dl_gat_attention_forward(
    const float* z, const float* score_src, const float* score_dst, const int* nbr_local, const int* counts,
    const int* n_dst, int capacity, int fanout, int heads, int channels, float negative_slope, float* alpha,
    float* out, i64* overflow, int threads) {
    ZG_TAIL(gat_attention_forward, zg_min(*n_dst, capacity) * heads * 32, threads)(
        z, score_src, score_dst, nbr_local, counts, n_dst, capacity, fanout, heads, channels, negative_slope, alpha,
        out, overflow);
}

extern "C" __global__ void dl_gat_attention_backward(
    const float* grad_out, const float* z, const float* score_src, const float* score_dst, const float* alpha,
    const int* nbr_local, const int* counts, const int* n_dst, int capacity, int fanout, int heads, int channels,
    float negative_slope, float* grad_z, float* grad_score_src, float* grad_score_dst, float* grad_logit, i64* overflow,
    int threads) {
    ZG_TAIL(gat_attention_backward, zg_min(*n_dst, capacity) * heads * 32, threads)(
        grad_out, z, score_src, score_dst, alpha, nbr_local, counts, n_dst, capacity, fanout, heads, channels,
        negative_slope, grad_z, grad_score_src, grad_score_dst, grad_logit, overflow);
}

// The transpose and the pulling backwards. The pulls write every source row (num_src, a size the host
// knows), so only the transpose's kernels size their grids from a live count.
extern "C" __global__ void dl_ell_transpose_count(
    const int* nbr_local, const int* counts, const int* n_dst, int capacity, int fanout, int* degree, i64* overflow,
    int threads) {
    ZG_TAIL(ell_transpose_count, zg_min(*n_dst, capacity) * fanout, threads)(
        nbr_local, counts, n_dst, capacity, fanout, degree, overflow);
}

extern "C" __global__ void dl_ell_transpose_place(
    const int* nbr_local, const int* counts, const int* n_dst, int capacity, int fanout, int* cursor, int* unordered,
    i64* overflow, int threads) {
    ZG_TAIL(ell_transpose_place, zg_min(*n_dst, capacity) * fanout, threads)(
        nbr_local, counts, n_dst, capacity, fanout, cursor, unordered, overflow);
}

extern "C" __global__ void dl_ell_transpose_order(
    const int* nbr_local, const int* counts, const int* n_dst, int capacity, int fanout, const int* ends,
    const int* degree, const int* unordered, int* order, i64* overflow, int threads) {
    ZG_TAIL(ell_transpose_order, zg_min(*n_dst, capacity) * fanout, threads)(
        nbr_local, counts, n_dst, capacity, fanout, ends, degree, unordered, order, overflow);
}

extern "C" __global__ void dl_sage_concat_backward_transposed(
    const float* grad_out, i64 width, const int* counts, const int* n_dst, int capacity, int fanout, const int* ends,
    const int* degree, const int* order, int num_src, const float* relu_out, float* grad_x, i64* overflow,
    int threads) {
    ZG_TAIL(sage_concat_backward_transposed, (i64)num_src * zg_vec_width(width), threads)(
        grad_out, width, counts, n_dst, capacity, fanout, ends, degree, order, num_src, relu_out, grad_x, overflow);
}

extern "C" __global__ void dl_gcn_aggregate_backward_transposed(
    const float* grad_out, i64 width, const int* counts, const int* n_dst, int capacity, int fanout, const int* ends,
    const int* degree, const int* order, int num_src, const float* relu_out, float* grad_x, i64* overflow,
    int threads) {
    ZG_TAIL(gcn_aggregate_backward_transposed, (i64)num_src * zg_vec_width(width), threads)(
        grad_out, width, counts, n_dst, capacity, fanout, ends, degree, order, num_src, relu_out, grad_x, overflow);
}

extern "C" __global__ void dl_gat_attention_backward_transposed(
    const float* grad_out, const float* alpha, const float* grad_logit, const int* n_dst, int capacity, int fanout,
    int heads, int channels, const int* ends, const int* degree, const int* order, int num_src, float* grad_z,
    float* grad_score_src, i64* overflow, int threads) {
    ZG_TAIL(gat_attention_backward_transposed, (i64)num_src * heads * channels, threads)(
        grad_out, alpha, grad_logit, n_dst, capacity, fanout, heads, channels, ends, degree, order, num_src, grad_z,
        grad_score_src, overflow);
}
