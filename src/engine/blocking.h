/* The sizes at which the engines change code path, declared in one place for the checker's
 * shapes (src/check/layouts.c) and the tests. A shape derived from them reaches every path: a sum
 * over several reduction blocks (block sums combined across threads), several ranges per thread
 * in the elementwise and row tilings, rows and strips wider than every vector unroll with a tail
 * that is not a multiple of any vector width.
 *
 * An engine or kernel family that adds a block size, an unroll or a step declares it here (and
 * static-asserts its own constant against it), so that the checker's shapes grow with it: see
 * docs/architecture.md, "Checking the checker". */
#ifndef OG_BLOCKING_H
#define OG_BLOCKING_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/reduce.h" // OG_RED_CHUNK, OG_RED_BLOCK, OG_RED_STRIP, OG_RED_STRIP_WIDE
#include "engine/tiling.h" // OG_MIN_CORE_BYTES, OG_CORES_PER_THREAD

/// fp32 lanes of the widest vector any kernel uses (AVX-512).
#define OG_BLOCK_MAX_VLEN 16
/// The widest step a row kernel takes along a row at once, including its partial-sum flush
/// groups (softmax backward: 16 groups of 16 lanes).
#define OG_BLOCK_MAX_ROW_STEP 256
/// Summands of one reduction block (a block's sum is a pairwise tree over its chunks; block sums
/// are combined in a second pass when cores share one output).
#define OG_BLOCK_REDUCE_TERMS ((int64_t)OG_RED_CHUNK * OG_RED_BLOCK)
/// The shortest innermost run for which the elementwise engine reads a broadcast fp32 row (unit
/// innermost stride, e.g. a bias [W] against [R, W]) in place, one Compute call per run, instead
/// of copying it into a tile buffer (og_ew_operand.rowwise). The checker's bcast_wide rows are
/// longer (static assert in src/check/layouts.c).
#define OG_BLOCK_EW_ROWWISE_MIN 128
/// Elements of one unit of the foreach walks (src/ops/amp/foreach.c): a tensor larger than this
/// is cut into units whose partial results are combined in order. The checker's `large` layout,
/// split into three list entries, gives entries of more than one unit.
#define OG_BLOCK_FOREACH_UNIT ((int64_t)16384)
/// Thread counts the checker compares results on (with the default count): the tilings of 1, 2
/// and 3 threads cut the same work into different ranges.
#define OG_BLOCK_CHECK_THREADS 3

/// GEMM (engine/gemm.h): the checker forces tiny blocks on its engine-sized layouts (large, wide,
/// bcast_wide; og_gemm_blocking_set around the case, as it lowers the size gates): MC 1 (one MR
/// row block per unit), KC 3 (a K slice of 3: many slices and a tail), NC 1 (one NR panel per
/// unit), and a pack budget small enough that B is packed in several N chunks (large,
/// bcast_wide: 8 KiB, one to a few panels per chunk at every NR) or that batches of a non-shared
/// B form several groups of 2 (wide: 44 KiB: 2 of the 3 forward B's of 71 x 53 at NR 4, 24 and
/// 32). Its engine-sized products are M x K @ K x N = 37 x 71 @ 71 x 53: no multiple of any MR
/// (4, 12) or NR (4, 24, 32), so every K-slice tail, partial micro-tile and chunk edge is
/// crossed, in the forward and in both backward products (inner lengths 71, 53 and 37). MC and NC
/// only choose the code that runs (the same bits); KC 3 also sums K in slices of 3 instead of
/// OG_GEMM_KC (a different, equally fixed order, judged against float64 like the default).
/// The thread minimum is lowered to one flop, so these small products run on 1, 2, 3 and N
/// threads for the determinism check (by default a thread takes 1 MFLOP at least).
#define OG_BLOCK_GEMM_MC 1
#define OG_BLOCK_GEMM_KC 3
#define OG_BLOCK_GEMM_NC 1
#define OG_BLOCK_GEMM_PACK_CHUNKS ((int64_t)8 << 10)
#define OG_BLOCK_GEMM_PACK_GROUPS ((int64_t)44 << 10)
#define OG_BLOCK_GEMM_M 37
#define OG_BLOCK_GEMM_N 53
#define OG_BLOCK_GEMM_K 71
#define OG_BLOCK_GEMM_THREAD_FLOPS 1.0

/// Paths an engine takes only from a total size on: large-tensor optimisations whose results are
/// the same bits either way. Non-temporal CopyOut from `nt_out_bytes` of output (OPGRAD_NT_BYTES,
/// default 16 MiB), streamed CopyIn (side-by-side conversion, next tile prefetched) from
/// `stream_in_bytes` per thread (4 MiB), next-row prefetch from `row_prefetch_bytes` of input
/// (16 MiB), and the fresh-output path from `prefault_out_bytes` of one dense output
/// (OPGRAD_PREFAULT_BYTES, default 4 MiB, 0 off; engine/prefault.h), and the 256-bit kernels for
/// a light fp32 map from `ymm_stream_bytes` of operands per thread below the NT size
/// (OPGRAD_YMM_STREAM_BYTES; default 4 MiB where og_cpu_halves_512, else 0: off; elementwise.h).
/// Sizes that large cost the checker seconds per case in float64 work, so it lowers the gates to
/// 1 byte for its `large` layout (every gated path runs there, but the 256-bit choice, which
/// gives way to the NT one: its kernels are the AVX2 level's, checked at that level) and restores
/// them. Set them only while no other thread plans an executor.
typedef struct og_size_gates {
    int64_t nt_out_bytes, stream_in_bytes, row_prefetch_bytes, prefault_out_bytes, ymm_stream_bytes;
} og_size_gates;
og_size_gates og_size_gates_get(void);
/// Whether a light fp32 kernel moving `thread_bytes` of operands per thread takes the 256-bit
/// kernels (ymm_stream_bytes > 0 and reached): the one rule of both engines' ymm_stream.
bool og_ymm_stream(int64_t thread_bytes);
/// Sets the gates; NULL restores the defaults.
void og_size_gates_set(const og_size_gates *gates);

#endif
