// Per-hop dedupe: put the frontier (ids -> positions 0..n-1) and then every sampled neighbour into the
// node table; each neighbour not seen before sets its bit in `new_bits` (one bit per graph node) and is
// counted in `new_count`. Two kernels, launched in this order, so that frontier nodes are in the table
// before any neighbour looks; dedupe_frontier also zeroes the count. relabel_nodes then gives the new
// nodes their positions in id order, straight from the bitmap: no sort.
#include "zerognn_common.cuh"

extern "C" __global__ void dedupe_frontier(
    const i64* __restrict__ frontier, const int* __restrict__ n_frontier, i64* keys, int* values,
    i64 table_mask, int* new_count, i64* overflow) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *new_count = 0;
    ZG_GRID_STRIDE(p, *n_frontier) {
        bool inserted;
        const i64 slot = zg_table_insert(keys, table_mask, frontier[p], &inserted);
        if (slot < 0) { zg_raise_overflow(overflow, 2 * (table_mask + 1)); continue; }
        values[slot] = (int)p;
    }
}

extern "C" __global__ void dedupe_neighbors(
    const i64* __restrict__ nbr, const int* __restrict__ counts, const int* __restrict__ n_frontier,
    int fanout, i64* keys, i64 table_mask, unsigned* new_bits, int* new_count, i64* overflow) {
    const i64 slots = (i64)(*n_frontier) * fanout;
    ZG_GRID_STRIDE(e, slots) {
        const i64 p = e / fanout;
        if (e - p * fanout >= counts[p]) continue;
        bool inserted;
        const i64 u = nbr[e];
        const i64 slot = zg_table_insert(keys, table_mask, u, &inserted);
        if (slot < 0) { zg_raise_overflow(overflow, 2 * (table_mask + 1)); continue; }
        if (!inserted) continue;
        atomicOr(&new_bits[u >> 5], 1u << (u & 31));
        atomicAdd(new_count, 1);
    }
}
