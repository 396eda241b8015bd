// Per-hop dedupe: each sampled neighbour that is not in the frontier (its bit in `seen_bits`, set by
// sample_neighbors for every live frontier node, is clear) sets its bit in `new_bits` (one bit per graph
// node); the thread whose atomicOr sets the bit counts the node in `new_count` (zeroed by sample_neighbors),
// so a neighbour sampled several times counts once. No table of ids: the two bitmaps are the set. relabel_nodes
// then gives the new nodes their positions in id order, straight from `new_bits` (no sort), writes their
// local ids, and clears both bitmaps for the next hop.
#include "zerognn_common.cuh"

extern "C" __global__ void dedupe_neighbors(
    const i64* __restrict__ nbr, const int* __restrict__ counts, const int* __restrict__ n_frontier,
    int fanout, const unsigned* __restrict__ seen_bits, unsigned* new_bits, int* new_count) {
    const i64 slots = (i64)(*n_frontier) * fanout;
    ZG_GRID_STRIDE(e, slots) {
        const i64 p = e / fanout;
        if (e - p * fanout >= counts[p]) continue;
        const i64 u = nbr[e];
        const unsigned bit = 1u << (u & 31);
        if (seen_bits[u >> 5] & bit) continue;
        if ((atomicOr(&new_bits[u >> 5], bit) & bit) == 0u) atomicAdd(new_count, 1);
    }
}
