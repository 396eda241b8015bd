// How many new nodes come before each block of ZG_RANK_WORDS bitmap words: after dedupe_neighbors has
// set one bit per new node, block_offsets[b] becomes the number of set bits in words before block b
// (an exclusive prefix sum, finished by the last block to arrive, which also resets `blocks_done`).
// relabel_nodes adds the rank within the block, so new nodes take positions in ascending id order, the
// order a sort would give (zerognn/sampling/reference.py), with work proportional to N / 32 words.
#include "zerognn_common.cuh"

extern "C" __global__ void rank_new_nodes(
    const unsigned* __restrict__ bits, i64 words, int* block_offsets, unsigned* blocks_done) {
    const i64 word_blocks = (words + ZG_RANK_WORDS - 1) / ZG_RANK_WORDS;
    for (i64 b = blockIdx.x; b < word_blocks; b += gridDim.x) {
        const i64 end = min((b + 1) * ZG_RANK_WORDS, words);
        int count = 0;
        for (i64 w = b * ZG_RANK_WORDS + threadIdx.x; w < end; w += blockDim.x) count += __popc(bits[w]);
        int total;
        zg_block_exclusive_scan(count, &total);
        if (threadIdx.x == 0) block_offsets[b] = total;
    }
    __threadfence();
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    // The last block: counts -> exclusive offsets, each thread taking a contiguous run of blocks.
    volatile int* offsets = block_offsets;
    const i64 per = (word_blocks + blockDim.x - 1) / blockDim.x;
    const i64 lo = min((i64)threadIdx.x * per, word_blocks), hi = min(lo + per, word_blocks);
    int sum = 0;
    for (i64 b = lo; b < hi; ++b) sum += offsets[b];
    int total;
    int run = zg_block_exclusive_scan(sum, &total);
    for (i64 b = lo; b < hi; ++b) {
        const int count = offsets[b];
        offsets[b] = run;
        run += count;
    }
    if (threadIdx.x == 0) *blocks_done = 0u;
}
