// Per-hop dedupe, first half: put the frontier (ids -> positions 0..n-1) and then every sampled
// neighbour into the node table; each neighbour not seen before is appended once to `new_nodes`
// (unordered, as int32: node ids fit int32, and sorting 32-bit keys takes half the radix passes). The caller sorts new_nodes[0:new_count] and runs relabel_nodes. Two kernels, launched
// in this order, so that frontier nodes are in the table before any neighbour looks. More new nodes
// than new_capacity are counted, not stored; the overflow's need is then the size the next frontier
// would have had (frontier + new nodes), the quantity an envelope provisions.
#include "zerognn_common.cuh"

extern "C" __global__ void dedupe_frontier(
    const i64* __restrict__ frontier, const int* __restrict__ n_frontier, i64* keys, int* values,
    i64 table_mask, i64* overflow) {
    ZG_GRID_STRIDE(p, *n_frontier) {
        bool inserted;
        const i64 slot = zg_table_insert(keys, table_mask, frontier[p], &inserted);
        if (slot < 0) { zg_raise_overflow(overflow, 2 * (table_mask + 1)); continue; }
        values[slot] = (int)p;
    }
}

extern "C" __global__ void dedupe_neighbors(
    const i64* __restrict__ nbr, const int* __restrict__ counts, const int* __restrict__ n_frontier,
    int fanout, i64* keys, i64 table_mask, int* __restrict__ new_nodes, int* new_count, int new_capacity,
    i64* overflow) {
    const i64 slots = (i64)(*n_frontier) * fanout;
    ZG_GRID_STRIDE(e, slots) {
        const i64 p = e / fanout;
        if (e - p * fanout >= counts[p]) continue;
        bool inserted;
        const i64 u = nbr[e];
        const i64 slot = zg_table_insert(keys, table_mask, u, &inserted);
        if (slot < 0) { zg_raise_overflow(overflow, 2 * (table_mask + 1)); continue; }
        if (!inserted) continue;
        const int idx = atomicAdd(new_count, 1);
        if (idx < new_capacity) new_nodes[idx] = (int)u;
        else zg_raise_overflow(overflow, (i64)(*n_frontier) + idx + 1);
    }
}
