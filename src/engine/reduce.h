/* The shared reduction engine: sums, means, maxima and minima over any set of dims, with fp32
 * accumulation and results that do not depend on the thread count or the ISA.
 *
 * A reduction sums a value v(i) over the reduced dims of an index space `dims` (the "shape being
 * reduced"). v is in[0] itself, or an elementwise map of up to OG_RED_MAX_IN inputs that
 * broadcast to `dims` (a compute function of the elementwise engine, e.g. g * scale), optionally
 * rounded through a 16-bit dtype. One output element is written per kept index; the output
 * tensor may have any strides and any dtype of fp32/fp16/bf16 (rounded to nearest even once).
 *
 * The summation order is fixed by the data's shape alone. For one output element, number the K
 * summands r = 0..K-1 in row-major order over the reduced dims. Then
 *   chunk:  r in [256 c, 256 c + 256): 16 lane accumulators, summand r goes to lane r % 16 and
 *           each lane adds its summands in increasing r (starting from -0.0, the additive
 *           identity that keeps the sign of an all -0 sum); the 16 lanes are combined as a
 *           balanced pairwise tree ((l0 + l1) + (l2 + l3)) + ...;
 *   block:  64 consecutive chunk sums combined pairwise (binary-counter order: a full binary
 *           tree for 64 chunks, the same rule for a shorter last block);
 *   total:  the block sums combined pairwise in the same binary-counter order.
 * Every kernel (scalar, AVX2, AVX-512) and every thread split computes exactly these fp32
 * operations, so results are bitwise identical across thread counts and ISAs.
 * Error bound: a summand passes through at most D = 15 (its lane) + 4 (lane tree) +
 * ceil(log2 min(chunks, 64)) + ceil(log2 blocks) roundings, so for K summands whose absolute
 * values sum to S, |fp32 sum - exact sum| <= D * 2^-24 * S (first order), D <= 20 + ceil(log2
 * chunks); the result is then rounded once to the output dtype. Integer data whose absolute sum
 * stays within 2^24 is summed exactly (every partial sum is an integer of at most 2^24).
 *
 * Max and min use the same order with their own operation in place of the add (and -inf / +inf
 * in place of -0): they are exact, and the fixed order only decides which NaN or which signed zero
 * wins. A mean is the sum divided by K once, in fp32, before the output rounding. Over nothing
 * (K = 0) a sum is +0, a mean NaN, a max -inf and a min +inf.
 *
 * Threads: the work is cut into units (one output element, or a strip of neighbouring outputs
 * along the innermost kept dim: up to OG_RED_STRIP for fp32 rows read in place, else up to
 * OG_RED_STRIP_WIDE, and narrower when that leaves fewer strips than cores and each output sums
 * one block or less; strips are used when that dim is contiguous in memory, or when each output
 * sums fewer than 32 values). With enough units each core takes a contiguous range of units;
 * otherwise cores take (unit, block) items, store the block sums in the workspace, and a second
 * pass combines them in the fixed order. Fewer strips than cores over one block whose chunk count
 * is a power of two cut that block into 2, 4, ... equal power-of-two shares (block_chunks)
 * instead of narrowing the strips: the pairwise combination of the shares is the same tree. The
 * kernels never allocate, validate or thread.
 *
 * float64 (some input is float64: the operator's promoted dtype) is summed in double by its own
 * loop, for sums and means: per output, the summands in the same row-major order, gathered 256 at
 * a time (every input converted to double) and mapped by the float64 map (map64), each chunk
 * added left to right and the chunk sums combined pairwise in binary-counter order (first-order
 * error <= (256 + log2 chunks) 2^-53 S), each output by one thread, so the result is again
 * independent of the thread count and the ISA.
 *
 * Summands that are an input's own contiguous values (no map, no rounding) are read in place:
 * fp32 as they are (`direct`), bf16/fp16 widened in registers by the rows_/chunks_bf16/f16 kernels
 * (`direct16`). Widening is exact, so the sums are bitwise those of the widened fp32 values. */
#ifndef OG_REDUCE_H
#define OG_REDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/elementwise.h"
#include "engine/executor.h"
#include "opgrad/opgrad.h"
#include "tensor/tensor.h"

#define OG_RED_MAX_IN 3
#define OG_RED_LANES 16
#define OG_RED_CHUNK 256 // summands per chunk (a multiple of OG_RED_LANES)
#define OG_RED_BLOCK 64  // chunks per block
#define OG_RED_STRIP 512 // outputs per unit along the innermost kept dim (strips read in place)
#define OG_RED_STRIP_WIDE 1024 // the same for strips whose rows are gathered or mapped

typedef enum { OG_RED_SUM, OG_RED_MEAN, OG_RED_MAX, OG_RED_MIN } og_reduce_kind;

/// One reduction, as an operator describes it after checking its arguments.
typedef struct og_reduce_op {
    og_reduce_kind kind;                  // OG_RED_SUM (0) unless set
    int nin;                              // 1..OG_RED_MAX_IN
    const aclTensor *in[OG_RED_MAX_IN];   // each broadcasts to dims (NumPy, right-aligned)
    int in_slot[OG_RED_MAX_IN];           // executor io slot of each input
    const og_ew_compute_fn *map;          // [OPGRAD_ISA_COUNT]: v = map(in...); NULL: v = in[0]
    const og_ew_compute64_fn *map64;      // the same map in float64 (a float64 reduction)
    const og_ew_compute16_fn (*map16)[2]; // optional: the map's fused 16-bit kernels (a map-only
                                          // plan of one 16-bit dtype runs on the 16-bit data)
    const og_ew_compute_fn *map_nt;       // optional: its non-temporal fp32 kernels (a map-only
                                          // plan past the NT size writes in place with them)
    const void *params;                   // map parameters (copied)
    size_t params_size;
    int ndim; // the shape being reduced (0..8 dims)
    int64_t dims[OG_MAX_DIMS];
    unsigned reduce_mask; // bit d set: dim d is summed over
    const aclTensor *out; // one element per kept index
    int out_slot;
    int out_dim[OG_MAX_DIMS]; // output dim of each kept dim of size > 1 (must
                              // have the same size); ignored for other dims
    aclDataType round_in;     // ACL_FLOAT, or each v rounded to fp16/bf16 first
} og_reduce_op;

/// The kernels of one ISA. They only add, in the order the header describes.
typedef struct og_reduce_kernels {
    /// acc[i % 16] += x[i] for i in [0, n) in increasing i (a call starts at a chunk boundary).
    void (*lanes)(const float *x, size_t n, float *acc);
    /// acc[(i % 16) * w + j] += rows[i][j] for i in [0, n), j in [0, w), increasing i per lane.
    void (*rows)(const float *const *rows, size_t n, size_t w, float *acc);
    /// dst[j] = a[j] + b[j], j in [0, w) (dst may alias a or b).
    void (*add)(const float *a, const float *b, float *dst, size_t w);
    /// sums[c] = the sum of chunk c of x[0..n) (256 values; the last may be shorter): 16 lanes
    /// from -0 as `lanes` does, then the pairwise lane tree.
    void (*chunks)(const float *x, size_t n, float *sums);
    /// rows and chunks over bf16 / fp16 values, widened to fp32 in registers (exact): the same
    /// adds in the same order as on the widened values.
    void (*rows_bf16)(const uint16_t *const *rows, size_t n, size_t w, float *acc);
    void (*rows_f16)(const uint16_t *const *rows, size_t n, size_t w, float *acc);
    void (*chunks_bf16)(const uint16_t *x, size_t n, float *sums);
    void (*chunks_f16)(const uint16_t *x, size_t n, float *sums);
} og_reduce_kernels;

/// The sum kernels per ISA level.
extern const og_reduce_kernels og_reduce_kernel_table[OPGRAD_ISA_COUNT];
/// The kernels of any kind (a mean uses the sum's).
const og_reduce_kernels *og_reduce_kernels_of(og_reduce_kind kind, opgrad_isa isa);

/// A reduction planned over coalesced dims (plain data: no tensors, no pointers to them).
typedef struct og_reduce_plan {
    og_reduce_kind kind;
    int nin;
    aclDataType in_dtype[OG_RED_MAX_IN];
    int in_slot[OG_RED_MAX_IN];
    aclDataType out_dtype;
    int out_slot;
    aclDataType round_in;
    // kept dims (output index space, row-major) and reduced dims (summation index, row-major),
    // after dropping size-1 dims and merging neighbours that are contiguous for every operand
    int nkept, nred;
    int64_t kept[OG_MAX_DIMS], red[OG_MAX_DIMS];
    int64_t kept_in[OG_RED_MAX_IN][OG_MAX_DIMS], red_in[OG_RED_MAX_IN][OG_MAX_DIMS];
    int64_t kept_out[OG_MAX_DIMS];
    int64_t M;              // output elements
    int64_t K;              // summands per output element (0: outputs are +0)
    bool strips;            // units are strips along the innermost kept dim (else: 1 output)
    int64_t W;              // strips: extent of the innermost kept dim; else 1
    int64_t strip;          // strips: outputs per full strip (<= OG_RED_STRIP(_WIDE)); else 1
    int64_t strips_per_row; // strips: ceil(W / strip); else 1
    int64_t units;          // strips: (M / W) * strips_per_row; else M
    int64_t nchunks, nblocks;
    int64_t block_chunks;   // chunks per block: OG_RED_BLOCK, or a share of one block (above)
    bool f64;               // float64 (some input or the output is): gathered, mapped by map64,
                            // summed in double
    bool direct;            // fp32 summands read in place (no gather, no map, no rounding)
    bool direct16;          // the same for bf16/fp16 summands, widened in registers
    bool split_blocks;      // cores take (unit, block) items, then a combine pass
    int64_t items;          // units, or units * nblocks
    int core_num;           // ranges ("cores") of the (first) pass, claimed dynamically
    int slots;              // threads that may run them (each has core_bytes of scratch)
    int combine_cores;      // cores of the combine pass (split_blocks)
    int64_t core_bytes;     // workspace per slot (thread)
    int64_t partial_offset; // split_blocks: block sums (items x strip floats) at this offset
    int64_t workspace;      // bytes
    opgrad_isa isa;
    og_ew_compute_fn map; // NULL: identity
    og_ew_compute64_fn map64;
    unsigned char params[OG_EW_MAX_PARAMS];
} og_reduce_plan;

/// The pure planner (exposed for the tiling tests): fills *plan for max_cores threads.
void og_reduce_make_plan(const og_reduce_op *op, int max_cores, og_reduce_plan *plan);

/// Items [*start, *start + *count) of core `core` in the first pass (units, or unit * nblocks +
/// block items when split_blocks); and units of the combine pass (pass 2).
void og_reduce_core_range(const og_reduce_plan *p, int pass, int core, int64_t *start,
                          int64_t *count);

/// The output elements of unit u: for strips, *first is the flat output index (row-major over the
/// kept dims) of the strip's first element and *count its width; else one element.
void og_reduce_unit_outputs(const og_reduce_plan *p, int64_t u, int64_t *first, int64_t *count);

/// The summand range [*r0, *r0 + *n) of block b.
void og_reduce_block_range(const og_reduce_plan *p, int64_t b, int64_t *r0, int64_t *n);

/// The plan of one reduction for the current threads and ISA (a REDUCE step of a program); its
/// scratch is plan->workspace bytes.
void og_reduce_prepare(const og_reduce_op *op, og_reduce_plan *plan);
/// Runs a plan (phase 2) with executor e's addresses.
void og_reduce_run(const aclOpExecutor *e, const og_reduce_plan *plan, char *scratch);

/// Plans an executor running nplans reductions in order (e.g. several gradients of one
/// backward); a reduction with nothing to sum becomes an elementwise step. `io` are the
/// operator's tensors in slot order (inputs, then outputs; nin_slots inputs): data pointers are
/// checked (161001), outputs must not overlap any input or each other nor write one address
/// twice (161002). Reductions whose output is empty are dropped.
aclnnStatus og_reduce_plan_op(const og_opdesc *op, int nplans, const og_reduce_op *ops, int nio,
                              int nin_slots, const aclTensor *const *io, uint64_t *workspaceSize,
                              aclOpExecutor **executor);

/// Reduce-to-shape: fills the dims/reduce_mask/out_dim of *r so that the broadcast shape `from`
/// (ndim dims) is summed down to `to`, which must broadcast to `from` (NumPy rules: leading dims
/// missing in `to` and dims where `to` is 1 are summed).
void og_reduce_to_shape(og_reduce_op *r, const int64_t *from, int ndim, const aclTensor *to);

#endif
