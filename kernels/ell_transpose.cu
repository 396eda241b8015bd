// The transpose of an ELL block, for backward passes that pull instead of scatter: for every source row
// s, the slots e = p * fanout + k that read it (p < live, k < counts[p], nbr_local[e] == s), in
// increasing e, at order[ends[s] - degree[s] .. ends[s]). A sum over a source's slots in this order is
// a function of the block alone, so a backward that pulls through it gives the same bits every run,
// where a scatter with float atomicAdd gives the order in which the threads happened to arrive.
//
// Three kernels at capacity, with an inclusive prefix sum of `degree` into `ends` between the first and
// the second (zerognn/cuda/aggregate.py), so the transpose is built inside a captured step as well:
//  1. ell_transpose_count: degree[s] = the number of slots reading s (`degree` zeroed by the caller);
//  2. ell_transpose_place: each slot takes a position in its source's segment (`cursor` starts as a
//     copy of `ends`), in whatever order the threads arrive;
//  3. ell_transpose_order: each slot's rank in its segment is the number of smaller slots there, and it
//     moves to that position: the segment ends up sorted, whatever order step 2 left it in.
// Step 3 reads a whole segment per slot (quadratic in a source's degree): sampled in-degrees are small,
// and the few large ones (hubs) are read by whole warps at once from cache.
#include "zerognn_common.cuh"

// The source a slot reads, or -1 for an empty slot or one whose neighbour has no local id.
__device__ __forceinline__ int zg_slot_source(const int* nbr_local, const int* counts, i64 e, int fanout) {
    const i64 p = e / fanout;
    return e - p * fanout < counts[p] ? nbr_local[e] : -1;
}

extern "C" __global__ void ell_transpose_count(
    const int* __restrict__ nbr_local, const int* __restrict__ counts, const int* __restrict__ n_dst, int capacity,
    int fanout, int* __restrict__ degree, i64* overflow) {
    ZG_GRID_STRIDE(e, zg_clamp_live(*n_dst, capacity, overflow) * fanout) {
        const int s = zg_slot_source(nbr_local, counts, e, fanout);
        if (s >= 0) atomicAdd(&degree[s], 1);
    }
}

extern "C" __global__ void ell_transpose_place(
    const int* __restrict__ nbr_local, const int* __restrict__ counts, const int* __restrict__ n_dst, int capacity,
    int fanout, int* __restrict__ cursor, int* __restrict__ unordered, i64* overflow) {
    ZG_GRID_STRIDE(e, zg_clamp_live(*n_dst, capacity, overflow) * fanout) {
        const int s = zg_slot_source(nbr_local, counts, e, fanout);
        if (s >= 0) unordered[atomicSub(&cursor[s], 1) - 1] = (int)e;
    }
}

extern "C" __global__ void ell_transpose_order(
    const int* __restrict__ nbr_local, const int* __restrict__ counts, const int* __restrict__ n_dst, int capacity,
    int fanout, const int* __restrict__ ends, const int* __restrict__ degree, const int* __restrict__ unordered,
    int* __restrict__ order, i64* overflow) {
    ZG_GRID_STRIDE(e, zg_clamp_live(*n_dst, capacity, overflow) * fanout) {
        const int s = zg_slot_source(nbr_local, counts, e, fanout);
        if (s < 0) continue;
        const int end = ends[s], start = end - degree[s];
        int rank = 0;
        for (int j = start; j < end; ++j) rank += unordered[j] < (int)e;
        order[start + rank] = (int)e;
    }
}
