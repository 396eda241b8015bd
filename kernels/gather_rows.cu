// Gather rows of a float32 matrix (input features) and entries of an int64 vector (labels) by node id,
// for the live number of ids read from device memory, into buffers of `capacity` rows. Feature rows past
// the live count are zeroed, so a fixed-size layer over the buffer computes only finite values there.
#include "zerognn_common.cuh"

extern "C" __global__ void gather_rows(
    const float* __restrict__ table, i64 row_width, const i64* __restrict__ ids, const int* __restrict__ n_ids,
    int capacity, float* __restrict__ out, i64* overflow) {
    const i64 live = zg_clamp_live(*n_ids, capacity, overflow);
    if ((row_width & 3) == 0) {  // float4 path: 16-byte loads and stores
        const i64 q = row_width >> 2;
        const float4* table4 = reinterpret_cast<const float4*>(table);
        float4* out4 = reinterpret_cast<float4*>(out);
        ZG_GRID_STRIDE(i, (i64)capacity * q) {
            const i64 r = i / q;
            out4[i] = r < live ? table4[ids[r] * q + (i - r * q)] : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        return;
    }
    ZG_GRID_STRIDE(i, (i64)capacity * row_width) {
        const i64 r = i / row_width;
        out[i] = r < live ? table[ids[r] * row_width + (i - r * row_width)] : 0.f;
    }
}

extern "C" __global__ void gather_labels(
    const i64* __restrict__ labels, const i64* __restrict__ ids, const int* __restrict__ n_ids, int capacity,
    i64* __restrict__ out, i64* overflow) {
    ZG_GRID_STRIDE(i, zg_clamp_live(*n_ids, capacity, overflow)) { out[i] = labels[ids[i]]; }
}
