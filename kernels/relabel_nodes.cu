// Per-hop dedupe, second half: the next frontier is the frontier followed by the sorted new nodes;
// record each new node's position in the node table, then map every sampled neighbour to its local id.
#include "zerognn_common.cuh"

extern "C" __global__ void relabel_nodes(
    const i64* __restrict__ frontier, const int* __restrict__ n_frontier, const int* __restrict__ sorted_new,
    const int* __restrict__ new_count, int new_capacity, const i64* keys, int* values, i64 table_mask,
    i64* __restrict__ next_frontier, int* next_count, int next_capacity, i64* overflow) {
    const i64 n = *n_frontier;
    const i64 fresh = *new_count < new_capacity ? *new_count : new_capacity;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (n + fresh > next_capacity) zg_raise_overflow(overflow, n + fresh);
        *next_count = (int)(n + fresh < next_capacity ? n + fresh : next_capacity);
    }
    ZG_GRID_STRIDE(i, n + fresh) {
        if (i >= next_capacity) continue;
        if (i < n) {
            next_frontier[i] = frontier[i];
        } else {
            const i64 u = sorted_new[i - n];
            next_frontier[i] = u;
            const i64 slot = zg_table_find(keys, table_mask, u);
            if (slot >= 0) values[slot] = (int)i;
        }
    }
}

extern "C" __global__ void relabel_neighbors(
    const i64* __restrict__ nbr, const int* __restrict__ counts, const int* __restrict__ n_frontier,
    int fanout, const i64* keys, const int* values, i64 table_mask, int* __restrict__ nbr_local) {
    const i64 slots = (i64)(*n_frontier) * fanout;
    ZG_GRID_STRIDE(e, slots) {
        const i64 p = e / fanout;
        if (e - p * fanout >= counts[p]) continue;
        const i64 slot = zg_table_find(keys, table_mask, nbr[e]);
        nbr_local[e] = slot >= 0 ? values[slot] : -1;
    }
}
