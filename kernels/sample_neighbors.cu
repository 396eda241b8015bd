// Neighbour sampling for one hop (docs/design.md, Sampling semantics), bit-identical to zerognn/sampling/reference.py.
// Output is ELL: frontier position p owns slots [p*fanout, p*fanout + counts[p]) of `nbr`; slots past
// counts[p] are left untouched. Degrees <= fanout keep every neighbour in CSR order, larger ones take
// Floyd's fanout distinct positions keyed by combine(hop_key, node id).
// Side job: with a non-null `table_keys` the kernel also clears the hop's node table (table_size int64
// keys set to ZG_EMPTY) for dedupe_nodes, which runs after it on the same stream, so no separate fill
// kernel runs per hop. The clearing is a grid-stride loop of its own, so any grid >= 1 clears the whole
// table, whatever the live count (0 included); the sampling loop, its draws and its output are as without
// it. A null `table_keys` (a caller that builds no table) clears nothing.
#include "zerognn_common.cuh"

extern "C" __global__ void sample_neighbors(
    const i64* __restrict__ rowptr, const int* __restrict__ col, const i64* __restrict__ frontier,
    const int* __restrict__ n_frontier, int capacity, int fanout, const u64* __restrict__ hop_key,
    i64* __restrict__ nbr, int* __restrict__ counts, i64* __restrict__ table_keys, i64 table_size, i64* overflow) {
    if (table_keys != nullptr) {
        ZG_GRID_STRIDE(i, table_size) { table_keys[i] = ZG_EMPTY; }
    }
    const i64 n = *n_frontier;
    if (n > capacity) {
        if (blockIdx.x == 0 && threadIdx.x == 0) zg_raise_overflow(overflow, n);
    }
    const i64 live = n < capacity ? n : capacity;
    const u64 key = *hop_key;
    ZG_GRID_STRIDE(p, live) {
        const i64 v = frontier[p];
        const i64 start = rowptr[v];
        const i64 degree = rowptr[v + 1] - start;
        i64* out = nbr + p * fanout;
        if (degree <= fanout) {
            for (i64 i = 0; i < degree; ++i) out[i] = col[start + i];
            counts[p] = (int)degree;
            continue;
        }
        const u64 node_key = zg_combine(key, (u64)v);
        i64 picks[ZG_MAX_FANOUT];
        for (int i = 0; i < fanout; ++i) {
            const i64 j = degree - fanout + i;
            i64 t = zg_uniform_below(zg_draw(node_key, (u64)i), j + 1);
            for (int k = 0; k < i; ++k) {
                if (picks[k] == t) { t = j; break; }
            }
            picks[i] = t;
            out[i] = col[start + t];
        }
        counts[p] = fanout;
    }
}
