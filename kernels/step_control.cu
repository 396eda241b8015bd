// The ZeroGNN step's device-resident control (docs/design.md, ZeroGNN): which batch a step trains on and its hop
// keys, a snapshot of the training state, and afterwards whether the step commits or is rolled back
// because a buffer of the envelope overflowed. The host reads none of this in steady state; it watches
// a pinned host mirror that step_end writes through unified addressing.
//
// state (int64[2]): [0] committed steps g (the global step the next replay trains), [1] rolled-back steps.
#include "zerognn_common.cuh"

// Select the batch of global step g = state[0] (the same slice of the epoch's permutation as
// zerognn/sampling/batches.py), derive its hop keys (= hop_key(seed, epoch, step, hop)), clear the
// overflow records and snapshot the training state. `permutations` holds two epochs' orders, epoch
// e in row e % 2; the host fills a row before the first step of its epoch.
extern "C" __global__ void step_begin(
    const i64* __restrict__ state, const i64* __restrict__ permutations, i64 num_train, i64 steps_per_epoch,
    int batch_size, int world_size, int rank, u64 sampling_key, int num_hops, i64* __restrict__ seeds,
    u64* __restrict__ hop_keys, i64* __restrict__ overflow, int num_records, const float* __restrict__ params,
    float* __restrict__ snapshot, i64 num_params) {
    const i64 g = state[0];
    const i64 epoch = g / steps_per_epoch;
    const i64 step = g - epoch * steps_per_epoch;
    const i64* order = permutations + (epoch & 1) * num_train;
    const i64 offset = (step * world_size + rank) * (i64)batch_size;
    ZG_GRID_STRIDE(i, batch_size) { seeds[i] = order[offset + i]; }
    ZG_GRID_STRIDE(i, num_params) { snapshot[i] = params[i]; }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const u64 key = zg_combine(zg_combine(sampling_key, (u64)epoch), (u64)step);
        for (int h = 0; h < num_hops; ++h) hop_keys[h] = zg_combine(key, (u64)h);
        for (int r = 0; r < 2 * num_records; ++r) overflow[r] = 0;
    }
}

// Commit or roll back. Any raised overflow record (or `force_rollback`, used by the capture's
// warm-up pass) restores the training state from the snapshot and leaves g where it was, so the same
// batch runs again after the host grows the envelope; a rollback caused by overflow is counted and
// each record's needed size kept in need_max. A committed step logs its loss and per-hop live sizes.
extern "C" __global__ void step_end(
    i64* __restrict__ state, const i64* __restrict__ overflow, int num_records, i64* __restrict__ need_max,
    float* __restrict__ params, const float* __restrict__ snapshot, i64 num_params, const float* __restrict__ loss,
    float* __restrict__ loss_log, i64 loss_log_size, const int* __restrict__ live, int num_live,
    i64* __restrict__ live_max, i64* __restrict__ live_sum, int force_rollback, volatile i64* host_mirror) {
    bool overflowed = false;
    for (int r = 0; r < num_records; ++r) overflowed |= overflow[2 * r] != 0;
    const bool rollback = overflowed || force_rollback;
    if (rollback) {
        ZG_GRID_STRIDE(i, num_params) { params[i] = snapshot[i]; }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const i64 g = state[0];
        if (!rollback) {
            if (g < loss_log_size) loss_log[g] = *loss;
            for (int h = 0; h < num_live; ++h) {
                live_max[h] = live[h] > live_max[h] ? live[h] : live_max[h];
                live_sum[h] += live[h];
            }
            state[0] = g + 1;
        } else if (overflowed) {
            state[1] += 1;
            for (int r = 0; r < num_records; ++r)
                need_max[r] = overflow[2 * r + 1] > need_max[r] ? overflow[2 * r + 1] : need_max[r];
        }
        host_mirror[0] = state[0];
        host_mirror[1] = state[1];
        __threadfence_system();
    }
}
