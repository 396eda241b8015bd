// Per-hop dedupe: put the frontier and then every sampled neighbour into the node table (its keys: a set
// of node ids); each neighbour not seen before sets its bit in `new_bits` (one bit per graph node) and is
// counted in `new_count`. Two kernels, launched in this order, so that frontier nodes are in the table
// before any neighbour looks; dedupe_frontier also zeroes the count and writes each frontier node's local
// id (its position) into `local_ids` (one int per graph node). relabel_nodes then gives the new nodes their
// positions in id order, straight from the bitmap (no sort), and writes theirs.
//
// `local_ids` is never cleared: relabel_neighbors reads it only for the hop's sampled neighbours, and each
// of those is a frontier node or a new node of the hop, whose entries this hop wrote. A neighbour the full
// table could not take (an overflow: the table is sized at twice its entries, so never in practice) is
// neither: its entry is set to -1 here, so that no later kernel reads a stale row.
#include "zerognn_common.cuh"

extern "C" __global__ void dedupe_frontier(
    const i64* __restrict__ frontier, const int* __restrict__ n_frontier, i64* keys, i64 table_mask,
    int* __restrict__ local_ids, int* new_count, i64* overflow) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *new_count = 0;
    ZG_GRID_STRIDE(p, *n_frontier) {
        bool inserted;
        const i64 u = frontier[p];
        if (zg_table_insert(keys, table_mask, u, &inserted) < 0) zg_raise_overflow(overflow, 2 * (table_mask + 1));
        local_ids[u] = (int)p;
    }
}

extern "C" __global__ void dedupe_neighbors(
    const i64* __restrict__ nbr, const int* __restrict__ counts, const int* __restrict__ n_frontier,
    int fanout, i64* keys, i64 table_mask, unsigned* new_bits, int* __restrict__ local_ids, int* new_count,
    i64* overflow) {
    const i64 slots = (i64)(*n_frontier) * fanout;
    ZG_GRID_STRIDE(e, slots) {
        const i64 p = e / fanout;
        if (e - p * fanout >= counts[p]) continue;
        bool inserted;
        const i64 u = nbr[e];
        const i64 slot = zg_table_insert(keys, table_mask, u, &inserted);
        if (slot < 0) {
            zg_raise_overflow(overflow, 2 * (table_mask + 1));
            local_ids[u] = -1;
            continue;
        }
        if (!inserted) continue;
        atomicOr(&new_bits[u >> 5], 1u << (u & 31));
        atomicAdd(new_count, 1);
    }
}
