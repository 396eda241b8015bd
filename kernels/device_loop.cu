// The device-driven loop of the zerognn-epoch variant (docs/design.md, The device-driven epoch): one
// graph launch runs loop_begin, then a WHILE conditional node whose body is the captured training step
// followed by loop_continue. The committed-step counter (state[0], kept by step_control.cu) drives it:
// the body runs again while fewer than `*request` steps of this launch have been committed and no step
// has been rolled back since the launch began (an overflow ends the loop; the host grows the envelope
// and launches again from the counter). Each loop writes %globaltimer into stamps[g] when step g
// begins, so a step's time is stamps[g + 1] - stamps[g] on the GPU's own clock.
//
// request: pinned host memory, read once per launch by loop_begin: how many steps this launch trains (the
// host writes it only while no launch is in flight). bounds (int64[2]): [0] the step the loop stops
// before, [1] the rollback count when it began.
// zerognn: device-runtime
#include "zerognn_common.cuh"

__device__ __forceinline__ u64 zg_globaltimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void zg_stamp(u64* stamps, i64 num_stamps, i64 g) {
    if (g < num_stamps) stamps[g] = zg_globaltimer();
}

extern "C" __global__ void loop_begin(u64 handle, const i64* __restrict__ state, const volatile i64* request,
                                      i64* __restrict__ bounds, u64* __restrict__ stamps, i64 num_stamps) {
    const i64 g = state[0];
    const i64 length = *request;
    bounds[0] = g + length;
    bounds[1] = state[1];
    zg_stamp(stamps, num_stamps, g);
    cudaGraphSetConditional((cudaGraphConditionalHandle)handle, length > 0 ? 1u : 0u);
}

extern "C" __global__ void loop_continue(u64 handle, const i64* __restrict__ state, const i64* __restrict__ bounds,
                                         u64* __restrict__ stamps, i64 num_stamps) {
    const i64 g = state[0];
    const bool rolled_back = state[1] != bounds[1];
    if (!rolled_back) zg_stamp(stamps, num_stamps, g);
    cudaGraphSetConditional((cudaGraphConditionalHandle)handle, (!rolled_back && g < bounds[0]) ? 1u : 0u);
}
