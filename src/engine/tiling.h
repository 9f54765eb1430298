/* Host tiling for elementwise work: a pure function from (element count, operand sizes, cores,
 * cache budget) to a plain-data plan, in the shape of ops-nn's elementwise tiling.
 *
 * The N elements are cut into blocks of `block` elements (the alignment unit: every core starts
 * on a block boundary). The first `big_core_num` cores take one block more than the others
 * (ops-nn's tailBlockNum); counts are exact: the last core ends at N, never past it. Each core
 * walks its range in tiles of `tile_elems`; its last tile is the remainder. */
#ifndef OG_TILING_H
#define OG_TILING_H

#include <stdint.h>

typedef struct og_tiling {
    int64_t total;            // N
    int64_t block;            // elements per block
    int core_num;             // cores used (1 when N fits one tile)
    int big_core_num;         // cores with one extra block
    int64_t small_core_blocks;
    int64_t tile_elems;       // elements per full tile (a multiple of block)
    int64_t buffer_bytes;     // workspace bytes per core (tile buffers), 64-byte multiple
} og_tiling;

typedef struct og_tiling_request {
    int64_t total;            // elements
    int max_cores;            // threads available
    int64_t cache_budget;     // bytes of tile buffers per core (L1-sized)
    int buffered_operands;    // operands that need a tile buffer (CopyIn/CopyOut in fp32)
    int operands;             // all inputs + outputs, for the tile size
    int64_t block;            // alignment unit in elements (e.g. 64 bytes / smallest elem size)
} og_tiling_request;

/// Plans the split; never fails for total >= 0 (total 0 gives core_num 0).
og_tiling og_tiling_plan(og_tiling_request req);

/// Element range [*start, *start + *count) of core `core` (0 <= core < core_num).
void og_tiling_core_range(const og_tiling *t, int core, int64_t *start, int64_t *count);

#endif
