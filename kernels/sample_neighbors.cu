// Neighbour sampling for one hop (docs/design.md, Sampling semantics), bit-identical to zerognn/sampling/reference.py.
// Output is ELL: frontier position p owns slots [p*fanout, p*fanout + counts[p]) of `nbr`; slots past
// counts[p] are left untouched. Degrees <= fanout keep every neighbour in CSR order, larger ones take
// Floyd's fanout distinct positions keyed by combine(hop_key, node id).
// Side job, in a hop (non-null `seen_bits`, `local_ids` and `new_count`): each live frontier node sets its
// bit in `seen_bits` (one bit per graph node: the frontier, which dedupe_neighbors skips) and writes its
// position as its local id, and block 0 zeroes the hop's new-node count; a grid >= 1 always has block 0,
// so the count is zeroed whatever the live count (0 included). The draws and the output are as without it.
// relabel_nodes clears the frontier's bits at the end of the hop (kernels/relabel_nodes.cu). A plain sample
// (null pointers) does neither.
//
// A group of lanes samples each node (zg_sample_lanes: the fanout rounded up to a power of two, at most a
// warp; slot i is lane i % lanes' in round i / lanes): Floyd's draws are independent of each other, so every
// lane draws its slots at once, and only the collision rule runs in slot order, one warp vote per slot (a
// slot keeps its draw t unless an earlier slot's final pick is t, and then takes j); the neighbours' reads
// are then all in flight together, where one thread per node made them one after the other.
#include "zerognn_common.cuh"

#define ZG_SAMPLE_ROUNDS ((ZG_MAX_FANOUT + 31) / 32)  // slots per lane at most

extern "C" __global__ void sample_neighbors(
    const i64* __restrict__ rowptr, const int* __restrict__ col, const i64* __restrict__ frontier,
    const int* __restrict__ n_frontier, int capacity, int fanout, const u64* __restrict__ hop_key,
    i64* __restrict__ nbr, int* __restrict__ counts, unsigned* seen_bits, int* __restrict__ local_ids,
    int* new_count, i64* overflow) {
    const bool hop = seen_bits != nullptr;
    if (hop && blockIdx.x == 0 && threadIdx.x == 0) *new_count = 0;
    const i64 n = *n_frontier;
    if (n > capacity) {
        if (blockIdx.x == 0 && threadIdx.x == 0) zg_raise_overflow(overflow, n);
    }
    const i64 live = n < capacity ? n : capacity;
    const u64 key = *hop_key;
    const int lanes = zg_sample_lanes(fanout), lane = threadIdx.x & (lanes - 1);
    const int warp_lane = threadIdx.x & 31;
    const unsigned group = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u) << (warp_lane & ~(lanes - 1));
    // grid-stride over nodes, a group each (blockDim is a multiple of 32, so a group never spans two warps)
    const i64 stride = (i64)gridDim.x * blockDim.x / lanes;
    for (i64 p = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / lanes; p < live; p += stride) {
        const i64 v = frontier[p];
        if (hop && lane == 0) {
            atomicOr(&seen_bits[v >> 5], 1u << (v & 31));
            local_ids[v] = (int)p;
        }
        const i64 start = rowptr[v];
        const i64 degree = rowptr[v + 1] - start;
        i64* out = nbr + p * fanout;
        if (degree <= fanout) {
            for (i64 i = lane; i < degree; i += lanes) out[i] = col[start + i];
            if (lane == 0) counts[p] = (int)degree;
            continue;
        }
        const u64 node_key = zg_combine(key, (u64)v);
        i64 pick[ZG_SAMPLE_ROUNDS];
#pragma unroll
        for (int r = 0; r < ZG_SAMPLE_ROUNDS; ++r) {
            const int i = lane + r * lanes;
            pick[r] = i < fanout ? zg_uniform_below(zg_draw(node_key, (u64)i), degree - fanout + i + 1) : -1;
        }
        for (int i = 1; i < fanout; ++i) {
            const int owner = i & (lanes - 1), round = i / lanes;
            i64 mine = pick[0];
#pragma unroll
            for (int r = 1; r < ZG_SAMPLE_ROUNDS; ++r) if (r == round) mine = pick[r];
            const i64 t = __shfl_sync(group, mine, owner, lanes);
            bool taken = false;
#pragma unroll
            for (int r = 0; r < ZG_SAMPLE_ROUNDS; ++r) taken |= lane + r * lanes < i && pick[r] == t;
            if (__ballot_sync(group, taken) != 0u && lane == owner) {
#pragma unroll
                for (int r = 0; r < ZG_SAMPLE_ROUNDS; ++r) if (r == round) pick[r] = degree - fanout + i;
            }
        }
#pragma unroll
        for (int r = 0; r < ZG_SAMPLE_ROUNDS; ++r) {
            const int i = lane + r * lanes;
            if (i < fanout) out[i] = col[start + pick[r]];
        }
        if (lane == 0) counts[p] = fanout;
    }
}
