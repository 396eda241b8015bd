// Per-hop relabel: the next frontier is the frontier followed by the new nodes in ascending id order.
// relabel_nodes copies the frontier, ranks the new nodes straight from the new-node bitmap (one bit per
// graph node, set by dedupe_neighbors), writes each new node at its position, records the position as the
// node's local id (`local_ids`, one int per graph node: a plain store) and clears the bitmap for the next
// hop; relabel_neighbors then maps every sampled neighbour to its local id with one load (sample_neighbors
// wrote the frontier's). New nodes past next_capacity are not written (the overflow record is raised with
// the size the next frontier needed) and get local id -1, so no later kernel reads past a buffer.
// relabel_nodes also clears the frontier's bitmap (`seen_bits`, set by sample_neighbors): every word of
// both bitmaps is zero when the hop ends.
//
// `local_ids` is never cleared: relabel_neighbors reads it only for the hop's sampled neighbours, and each
// of those is a frontier node or a new node of the hop, whose entries this hop wrote.
//
// The ranking is a single-pass scan with decoupled look-back (Merrill & Garland, "Single-pass Parallel
// Prefix Scan with Decoupled Look-back", 2016; what CUB's DeviceScan does). The bitmap is cut into tiles of
// ZG_RANK_WORDS words. A block takes tiles in increasing order from a ticket counter (atomicAdd on
// tile_ticket) until they run out, so any grid >= 1 ranks every tile. For tile t it counts the tile's set
// bits (each thread a contiguous run of words), publishes that aggregate in tile_status[t], looks back over
// tiles t-1, t-2, ... adding aggregates until it meets an inclusive prefix, publishes its own inclusive
// prefix, and writes the tile's new nodes at n + (new nodes in tiles before t) + (in-tile rank): the
// positions a sort by id would give (zerognn/sampling/reference.py), with work proportional to N / 32 words.
//
// Status words: tile_status[t] = flag << 32 | value, flag ZG_TILE_NONE (0, not yet published),
// ZG_TILE_AGGREGATE (value = the tile's count) or ZG_TILE_PREFIX (value = the count of tiles 0..t). Values
// are at most the graph's node count (< 2^31). Flag and value travel in one 64-bit word, written by one
// atomicExch and read by one volatile 64-bit load, so a reader that sees a flag sees the value it carries:
// no other data passes between blocks, and no fence is needed for it.
//
// Progress: a block draws a ticket only while it runs, so tile t waits only on tiles < t, which blocks that
// are already running hold. Publishing an aggregate waits on nothing, and the look-back waits only for
// aggregates (it never needs a prefix), so every wait ends whatever the grid and the order blocks are
// scheduled in: no deadlock, also with fewer blocks than tiles (a block's earlier tiles are all published
// before it draws again) and under dynamic parallelism (dl_relabel_nodes sizes the grid from live counts).
//
// Scratch reset, for the next launch (back-to-back launches, CUDA Graph replays, device-launched children;
// no host involvement): blocks with blockIdx.x < drawers = min(gridDim.x, tiles) draw tickets, each until it
// draws one >= tiles, so a launch draws exactly tiles + drawers tickets and the one that draws the last,
// tiles + drawers - 1, draws after every other draw of the launch. Every block's tile work (its status reads
// and writes) comes before its failing draw in program order, with a __threadfence() between them, and the
// last drawer fences after its draw (then a __syncthreads hands that on to its block); the ticket's chain of
// read-modify-writes links the two fences, so every status access of the launch happens before the last
// drawer's block resets: it sets every status word to ZG_TILE_NONE and the ticket to 0, and no look-back of
// this launch can read a reset word. The next launch follows in stream order (a kernel boundary, also for
// a graph replay or a tail-launched child) and finds them clean. Launches that share this scratch must not
// overlap: every hop's follow each other on one stream. SamplerScratch (zerognn/cuda/sampling.py) allocates
// both zeroed once per graph.
#include "zerognn_common.cuh"

#define ZG_TILE_NONE 0ull
#define ZG_TILE_AGGREGATE 1ull
#define ZG_TILE_PREFIX 2ull
#define ZG_TILE_STATUS(flag, value) (((flag) << 32) | (u64)(unsigned)(value))

// Warp 0 (every lane) of the block holding tile `tile` > 0: the new nodes in tiles 0..tile-1. Lane k reads
// the status of tile end-1-k in a window of 32 predecessors; the warp waits until each of them has
// published, then adds the values up to and including the nearest inclusive prefix, or, with none in the
// window, all 32 aggregates and moves the window back. Tiles before 0 read as a prefix of 0.
__device__ __forceinline__ int zg_look_back(const u64* tile_status, i64 tile) {
    const int lane = threadIdx.x & 31;
    int before = 0;
    for (i64 end = tile;; end -= 32) {
        const i64 j = end - 1 - lane;
        u64 status = j < 0 ? ZG_TILE_STATUS(ZG_TILE_PREFIX, 0) : ZG_TILE_NONE;
        while (__any_sync(0xffffffffu, (status >> 32) == ZG_TILE_NONE)) {
            if ((status >> 32) == ZG_TILE_NONE) status = *(const volatile u64*)&tile_status[j];
        }
        const unsigned prefixes = __ballot_sync(0xffffffffu, (status >> 32) == ZG_TILE_PREFIX);
        const int stop = prefixes != 0u ? __ffs(prefixes) - 1 : 31;
        int sum = lane <= stop ? (int)(unsigned)status : 0;
        for (int d = 16; d > 0; d >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, d);
        before += sum;
        if (prefixes != 0u) return before;
    }
}

extern "C" __global__ void relabel_nodes(
    const i64* __restrict__ frontier, const int* __restrict__ n_frontier, unsigned* new_bits,
    unsigned* __restrict__ seen_bits, i64 words, u64* tile_status, unsigned* tile_ticket,
    const int* __restrict__ new_count, int* __restrict__ local_ids, i64* __restrict__ next_frontier,
    int* next_count, int next_capacity, i64* overflow) {
    const i64 n = *n_frontier;
    const i64 needed = n + *new_count;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (needed > next_capacity) zg_raise_overflow(overflow, needed);
        *next_count = (int)(needed < next_capacity ? needed : next_capacity);
    }
    ZG_GRID_STRIDE(i, n < next_capacity ? n : next_capacity) { next_frontier[i] = frontier[i]; }
    const i64 tiles = (words + ZG_RANK_WORDS - 1) / ZG_RANK_WORDS;
    const i64 drawers = min((i64)gridDim.x, tiles);
    if ((i64)blockIdx.x >= drawers) return;  // takes no ticket: the count of draws stays tiles + drawers
    const i64 per = (ZG_RANK_WORDS + blockDim.x - 1) / blockDim.x;  // a contiguous run per thread: id order
    __shared__ i64 drawn;
    __shared__ int before_tile;
    for (;;) {
        if (threadIdx.x == 0) {
            __threadfence();  // this block's status accesses so far come before its draw...
            drawn = (i64)atomicAdd(tile_ticket, 1u);
            __threadfence();  // ...and what follows the draw comes after every earlier draw's
        }
        __syncthreads();
        const i64 tile = drawn;
        if (tile >= tiles) {
            if (tile == tiles + drawers - 1) {  // the launch's last draw: reset the scratch for the next launch
                for (i64 t = threadIdx.x; t < tiles; t += blockDim.x) tile_status[t] = ZG_TILE_NONE;
                if (threadIdx.x == 0) *tile_ticket = 0u;
            }
            return;
        }
        const i64 begin = tile * ZG_RANK_WORDS, end = min(begin + ZG_RANK_WORDS, words);
        const i64 lo = min(begin + (i64)threadIdx.x * per, end), hi = min(lo + per, end);
        int count = 0;
        for (i64 w = lo; w < hi; ++w) count += __popc(new_bits[w]);
        int total;
        const int in_tile = zg_block_exclusive_scan(count, &total);
        if (threadIdx.x < 32) {
            int before = 0;
            if (tile > 0) {
                if (threadIdx.x == 0) atomicExch(&tile_status[tile], ZG_TILE_STATUS(ZG_TILE_AGGREGATE, total));
                before = zg_look_back(tile_status, tile);
            }
            if (threadIdx.x == 0) {
                atomicExch(&tile_status[tile], ZG_TILE_STATUS(ZG_TILE_PREFIX, before + total));
                before_tile = before;
            }
        }
        __syncthreads();
        i64 position = n + before_tile + in_tile;
        for (i64 w = lo; w < hi; ++w) {
            seen_bits[w] = 0u;
            unsigned word = new_bits[w];
            if (word == 0u) continue;
            new_bits[w] = 0u;
            for (; word != 0u; word &= word - 1u, ++position) {
                const i64 u = w * 32 + (__ffs(word) - 1);
                if (position < next_capacity) next_frontier[position] = u;
                local_ids[u] = position < next_capacity ? (int)position : -1;
            }
        }
    }
}

extern "C" __global__ void relabel_neighbors(
    const i64* __restrict__ nbr, const int* __restrict__ counts, const int* __restrict__ n_frontier,
    int fanout, const int* __restrict__ local_ids, int* __restrict__ nbr_local) {
    const i64 slots = (i64)(*n_frontier) * fanout;
    ZG_GRID_STRIDE(e, slots) {
        const i64 p = e / fanout;
        if (e - p * fanout >= counts[p]) continue;
        nbr_local[e] = local_ids[nbr[e]];
    }
}
