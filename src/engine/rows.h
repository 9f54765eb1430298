/* The row engine: operators that work along one axis of a tensor (softmax, log-softmax, norms,
 * losses), one "row" at a time.
 *
 * The shape is viewed as rows x R: R = the extent of the row axis, the rows indexed by every other
 * dim. A row kernel (og_row_fn) sees each row of each operand as R contiguous fp32 values and
 * writes whole output rows, plus, optionally, per-row statistics (a mean, an rstd) that an
 * operator saves for its backward.
 *
 *   phase 1 (og_rows_make_plan): coalesce the dims around the axis, per operand strides (0 where
 *     it broadcasts: e.g. a weight [R] is the same for every row and is read once per range), the
 *     range split over threads, the scratch per thread;
 *   phase 2 (per range of rows, per row): CopyIn the row of each operand that is not fp32 and
 *     contiguous along the axis (gather with its stride, widen 16-bit values) -> the kernel ->
 *     CopyOut (round to the output dtype, scatter). fp32 rows that are contiguous are used in
 *     place, so a row is read from memory once and stays in cache for the kernel's passes.
 *
 * Threads take contiguous ranges of rows; each row is computed by one kernel call, so results do
 * not depend on the thread count. Kernels keep one summation order on every ISA, so they do not
 * depend on the ISA either. A row is one unit of work: a tensor with one very long row runs on one
 * thread.
 *
 * float64 (compute_dtype ACL_DOUBLE: some operand is float64) runs the float64 row kernel
 * (kernels64, or acc_kernels64 with float64 accumulator temporaries) on float64 row buffers,
 * every operand gathered / converted per row and every output rounded once to its dtype,
 * statistics in double. An INT32 / INT64 input (a class index per row) is not converted: its
 * row's first element reaches the kernel as the int64 bits of in[k][0] (read with memcpy).
 *
 * Statistics are written after the kernel (a forward's mean / rstd), or, with stats_in, read
 * before it (a backward's saved mean / rstd): the kernel gets them in `stats`.
 *
 * Row-group column accumulators (a backward's dgamma / dbeta: sums over every row of a per-element
 * contribution). The rows are cut into groups of OG_ROWS_GROUP consecutive rows (the last may be
 * shorter), a number fixed by the shape alone; ranges of rows are whole groups. Each accumulator is
 * a contiguous fp32 temporary [groups, R]: the engine zeroes a group's row when the group starts,
 * and the kernel (og_row_acc_fn) adds its row's contribution into it, the rows of a group in
 * increasing order by one thread. A later step (a REDUCE over the groups, in its fixed order)
 * sums the group rows into the result. So column k's sum is: within each group, a sequential fp32
 * sum of its <= OG_ROWS_GROUP rows in row order, then the reduction engine's fixed order over the
 * groups: bitwise the same for every thread count and ISA, within (OG_ROWS_GROUP - 1 + the
 * REDUCE's D) 2^-24 of the sum of the contributions' magnitudes (first order). */
#ifndef OG_ROWS_H
#define OG_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/executor.h"
#include "engine/isa_table.h"
#include "engine/row_kernel.h"
#include "opgrad/opgrad.h"
#include "tensor/tensor.h"

#define OG_ROWS_MAX_IN 6
#define OG_ROWS_MAX_OUT 3
#define OG_ROWS_MAX_STATS 4 // BatchNorm's dx pass reads 4 per-channel values per row
#define OG_ROWS_MAX_ACC 2
#define OG_ROWS_GROUP 32 // rows per group of the column accumulators

/// The number of row groups of `rows` rows (the first dim of an accumulator temporary).
static inline int64_t og_rows_groups(int64_t rows) {
    return (rows + OG_ROWS_GROUP - 1) / OG_ROWS_GROUP;
}
#define OG_ROWS_MAX_PARAMS 64

/// A row operator, as an operator describes it after checking its arguments.
typedef struct og_rows_op {
    const og_row_fn *kernels;          // [OPGRAD_ISA_COUNT]
    const og_row16_fn (*kernels16)[2]; // optional [OPGRAD_ISA_COUNT][bf16, fp16]
    const og_row64_fn *kernels64;      // [OPGRAD_ISA_COUNT] when compute_dtype is ACL_DOUBLE
    int nin, nout, nstats;
    const aclTensor *in[OG_ROWS_MAX_IN];       // each broadcasts to `dims`
    const aclTensor *out[OG_ROWS_MAX_OUT];     // exactly `dims`
    const aclTensor *stats[OG_ROWS_MAX_STATS]; // one element per row, rows in row-major order
    int in_slot[OG_ROWS_MAX_IN], out_slot[OG_ROWS_MAX_OUT], stats_slot[OG_ROWS_MAX_STATS];
    int ndim; // 0..8 (a 0-d tensor is one row of one element)
    int64_t dims[OG_MAX_DIMS];
    int axis; // 0 <= axis < max(ndim, 1)
    const void *params;
    size_t params_size;
    // The kernel computes long enough on a row (several passes, exps) for the next row's inputs
    // to arrive meanwhile: prefetch them (from og_size_gates' row_prefetch_bytes of input on). A
    // light memory-bound kernel does better with the hardware prefetcher alone (SoftmaxBackward
    // fp32 at 2^24: 13% slower with it).
    bool prefetch;
    // A few operations per element on two input rows (SoftmaxBackward): in fp32 past
    // og_size_gates' ymm_stream_bytes per thread, the 256-bit kernels (og_rows_plan.ymm_stream).
    bool light;
    aclDataType compute_dtype; // a 16-bit type: inputs and outputs of another dtype are rounded
                               // through it (aclnn casts the inputs to it, the result from it)
    bool stats_in;             // the stats are inputs, read before the kernel
    // column accumulators: nacc > 0 runs acc_kernels (not kernels / kernels16) with acc[k] the
    // row's group row of temporary acc_slot[k] (fp32, contiguous, [og_rows_groups(rows), R])
    const og_row_acc_fn *acc_kernels;     // [OPGRAD_ISA_COUNT]
    const og_row_acc64_fn *acc_kernels64; // [OPGRAD_ISA_COUNT], float64 (double temporaries)
    int nacc;
    int acc_slot[OG_ROWS_MAX_ACC];
} og_rows_op;

typedef struct og_rows_operand {
    aclDataType dtype;
    int slot;
    int64_t axis_stride;          // elements between neighbours in a row
    int64_t strides[OG_MAX_DIMS]; // over the coalesced row dims (0: broadcast)
    bool invariant;               // the same row for every row (all strides 0)
    bool direct;                  // fp32, contiguous along the axis: used in place
    aclDataType round_via;        // round through this dtype after CopyIn (inputs) or before
                                  // CopyOut (outputs); ACL_FLOAT = no
} og_rows_operand;

/// A row plan (plain data).
typedef struct og_rows_plan {
    int64_t R;    // row length
    int64_t rows; // number of rows
    int nrdims;   // the row index space, coalesced (row-major)
    int64_t rdims[OG_MAX_DIMS];
    int nin, nout, nstats;
    og_rows_operand in[OG_ROWS_MAX_IN], out[OG_ROWS_MAX_OUT], stats[OG_ROWS_MAX_STATS];
    bool prefetch;       // inputs past the row-prefetch size gate: prefetch a row ahead
    bool ymm_stream;     // a light fp32 kernel past ymm_stream_bytes per thread (set where the
                         // CPU halves 512-bit operations): planned at the AVX2 level at most
                         // (the row kernels give the same bits on every ISA; measured in
                         // docs/architecture.md, "Light maps take 256-bit kernels on Zen 4")
    bool fused16;        // every row operand contiguous along the axis, of the 16-bit compute
                         // dtype: kernel16 on the data in place (no CopyIn / CopyOut)
    int core_num, slots; // ranges of rows and the threads that run them
    int64_t slot_bytes;  // scratch per thread: one fp32 row per buffered operand (fused16: one
                         // scratch row) + stats
    opgrad_isa isa;
    og_row_fn kernel;
    og_row16_fn kernel16; // when fused16
    bool f64;             // float64 rows (kernel64)
    og_row64_fn kernel64;
    og_row_acc64_fn acc_kernel64;
    bool stats_in;
    int nacc; // column accumulators (ranges are whole groups of rows)
    int acc_slot[OG_ROWS_MAX_ACC];
    int64_t groups;           // og_rows_groups(rows) when nacc > 0
    og_row_acc_fn acc_kernel; // when nacc > 0
    unsigned char params[OG_ROWS_MAX_PARAMS];
} og_rows_plan;

/// The pure planner (no data touched): fills *plan for max_cores threads at ISA level `isa`.
void og_rows_make_plan(const og_rows_op *op, int max_cores, opgrad_isa isa, og_rows_plan *plan);
/// Rows [*start, *start + *count) of range `core`.
void og_rows_core_range(const og_rows_plan *p, int core, int64_t *start, int64_t *count);
/// Runs a plan (phase 2) with executor e's addresses; `scratch` holds slots * slot_bytes.
void og_rows_run(const aclOpExecutor *e, const og_rows_plan *p, char *scratch);

#endif
