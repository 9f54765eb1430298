/* Host tiling for elementwise work: a pure function from (element count, operand sizes, cores,
 * cache budget) to a plain-data plan, in the shape of ops-nn's elementwise tiling.
 *
 * The N elements are cut into blocks of `block` elements (the alignment unit: every core starts
 * on a block boundary). The first `big_core_num` cores take one block more than the others
 * (ops-nn's tailBlockNum); counts are exact: the last core ends at N, never past it. Each core
 * walks its range in tiles of `tile_elems`; its last tile is the remainder.
 *
 * A "core" is a contiguous range that one thread claims and runs (the pool hands them out
 * dynamically). ops-nn uses every core; here a large job gets up to OG_CORES_PER_THREAD ranges per
 * thread, each moving at least OG_MIN_CORE_BYTES: a thread that starts late (its vCPU busy with
 * another process) then costs the others one short range, not half the work. Tile buffers belong
 * to the thread (its slot), not to the range: `slots` sets of them. */
#ifndef OG_TILING_H
#define OG_TILING_H

#include <stdint.h>

#define OG_CORES_PER_THREAD 8
#define OG_MIN_CORE_BYTES ((int64_t)256 << 10)

typedef struct og_tiling {
    int64_t total;    // N
    int64_t block;    // elements per block
    int core_num;     // ranges ("cores") the work is cut into (1 when N fits one tile)
    int slots;        // threads that may run them: min(max_cores, core_num)
    int big_core_num; // cores with one extra block
    int64_t small_core_blocks;
    int64_t tile_elems;   // elements per full tile (a multiple of block)
    int64_t buffer_bytes; // workspace bytes per slot (tile buffers), 64-byte multiple
} og_tiling;

typedef struct og_tiling_request {
    int64_t total;          // elements
    int max_cores;          // threads available
    int64_t cache_budget;   // bytes of tile buffers per thread (L1-sized)
    int buffered_operands;  // operands that need a tile buffer (CopyIn/CopyOut in fp32/fp64)
    int operands;           // all inputs + outputs, for the tile size
    int64_t block;          // alignment unit in elements (e.g. 64 bytes / smallest elem size)
    int64_t bytes_per_elem; // bytes all operands move per element; 0: one range per thread
    int64_t buffer_elem;    // bytes per element of a tile buffer: 4 (fp32, the default when 0)
                            // or 8 (a float64 plan)
} og_tiling_request;

/// Plans the split; never fails for total >= 0 (total 0 gives core_num 0).
og_tiling og_tiling_plan(og_tiling_request req);

/// Element range [*start, *start + *count) of core `core` (0 <= core < core_num).
void og_tiling_core_range(const og_tiling *t, int core, int64_t *start, int64_t *count);

#endif
