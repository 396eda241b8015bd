// Per-hop relabel: the next frontier is the frontier followed by the new nodes in ascending id order.
// relabel_nodes copies the frontier, walks the new-node bitmap (block b of ZG_RANK_WORDS words starts at
// rank block_offsets[b], from rank_new_nodes), writes each new node at its position, records the position
// in the node table and clears the bitmap for the next hop; relabel_neighbors then maps every sampled
// neighbour to its local id. New nodes past next_capacity are not written (the overflow record is raised
// with the size the next frontier needed) and get local id -1, so no later kernel reads past a buffer.
#include "zerognn_common.cuh"

extern "C" __global__ void relabel_nodes(
    const i64* __restrict__ frontier, const int* __restrict__ n_frontier, unsigned* new_bits, i64 words,
    const int* __restrict__ block_offsets, const int* __restrict__ new_count, const i64* keys, int* values,
    i64 table_mask, i64* __restrict__ next_frontier, int* next_count, int next_capacity, i64* overflow) {
    const i64 n = *n_frontier;
    const i64 needed = n + *new_count;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (needed > next_capacity) zg_raise_overflow(overflow, needed);
        *next_count = (int)(needed < next_capacity ? needed : next_capacity);
    }
    ZG_GRID_STRIDE(i, n < next_capacity ? n : next_capacity) { next_frontier[i] = frontier[i]; }
    const i64 word_blocks = (words + ZG_RANK_WORDS - 1) / ZG_RANK_WORDS;
    const i64 per = (ZG_RANK_WORDS + blockDim.x - 1) / blockDim.x;  // a contiguous run per thread: id order
    for (i64 b = blockIdx.x; b < word_blocks; b += gridDim.x) {
        const i64 begin = b * ZG_RANK_WORDS, end = min(begin + ZG_RANK_WORDS, words);
        const i64 lo = min(begin + (i64)threadIdx.x * per, end), hi = min(lo + per, end);
        int count = 0;
        for (i64 w = lo; w < hi; ++w) count += __popc(new_bits[w]);
        int total;
        i64 position = n + block_offsets[b] + zg_block_exclusive_scan(count, &total);
        for (i64 w = lo; w < hi; ++w) {
            unsigned word = new_bits[w];
            if (word == 0u) continue;
            new_bits[w] = 0u;
            for (; word != 0u; word &= word - 1u, ++position) {
                const i64 u = w * 32 + (__ffs(word) - 1);
                const i64 slot = zg_table_find(keys, table_mask, u);
                if (position < next_capacity) next_frontier[position] = u;
                if (slot >= 0) values[slot] = position < next_capacity ? (int)position : -1;
            }
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
