#include "engine/tiling.h"

og_tiling og_tiling_plan(og_tiling_request req) {
    og_tiling t = {0};
    t.total = req.total;
    t.block = req.block > 0 ? req.block : 1;
    int operands = req.operands > 0 ? req.operands : 1;
    // Tile: the buffers of every operand fit the cache budget, rounded down to whole blocks.
    int64_t elem = req.buffer_elem > 0 ? req.buffer_elem : 4;
    int64_t tile = req.cache_budget / (elem * operands);
    tile = tile / t.block * t.block;
    if (tile < t.block) tile = t.block;
    t.tile_elems = tile;
    if (req.total <= 0) return t;

    int64_t blocks = (req.total + t.block - 1) / t.block;
    // ops-nn: one core when a single tile holds everything, else every core (thread), each cut
    // into up to OG_CORES_PER_THREAD ranges of at least OG_MIN_CORE_BYTES.
    int64_t threads = req.max_cores > 0 ? req.max_cores : 1;
    int64_t cores = req.total <= tile ? 1 : threads;
    if (cores > 1 && req.bytes_per_elem > 0) {
        int64_t per_thread = OG_CORES_PER_THREAD; // (total stays small enough to multiply below it)
        if (req.total / threads < OG_CORES_PER_THREAD * OG_MIN_CORE_BYTES)
            per_thread = req.total * req.bytes_per_elem / (threads * OG_MIN_CORE_BYTES);
        if (per_thread > OG_CORES_PER_THREAD) per_thread = OG_CORES_PER_THREAD;
        if (per_thread > 1) cores = threads * per_thread;
    }
    if (cores > blocks) cores = blocks;
    t.core_num = (int)cores;
    t.slots = (int)(cores < threads ? cores : threads);
    t.small_core_blocks = blocks / cores;
    t.big_core_num = (int)(blocks % cores);
    int64_t per_buffer = (tile * elem + 63) / 64 * 64;
    t.buffer_bytes = per_buffer * req.buffered_operands;
    return t;
}

void og_tiling_core_range(const og_tiling *t, int core, int64_t *start, int64_t *count) {
    int64_t small = t->small_core_blocks * t->block, big = small + t->block;
    int64_t s = core < t->big_core_num
                    ? core * big
                    : t->big_core_num * big + (int64_t)(core - t->big_core_num) * small;
    int64_t n = core < t->big_core_num ? big : small;
    if (s > t->total) s = t->total;
    if (n > t->total - s) n = t->total - s; // the last block may be partial
    *start = s;
    *count = n;
}
