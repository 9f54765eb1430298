/* The shared elementwise driver. An operator supplies one fp32 compute function per ISA and
 * its parameters; the driver does broadcasting, strides, dtype conversion, tiling and threads:
 *
 *   phase 1 (og_ew_plan): coalesce dims, derive per-operand strides over the output shape
 *     (0 on broadcast dims), decide per operand whether it can be used in place (fp32 and laid
 *     out linearly) or needs a tile buffer, tile the index space across cores, size the
 *     workspace;
 *   phase 2 (per core, per tile): CopyIn (load + convert to fp32, gathering strided/broadcast
 *     operands) -> compute -> CopyOut (round to nearest even + store, non-temporal for very
 *     large outputs).
 * An operand is a view of its io slot: the tensor's strides, from an element offset relative to
 * the slot's address (og_ew_op.in_offset / out_offset), so one slot can feed several operands.
 * The compute function sees contiguous fp32 arrays of n elements, nothing else.
 *
 * A float64 operation (compute_dtype ACL_DOUBLE: some input is float64) runs the same phases on
 * float64 tile buffers with the operator's float64 kernel (kernels64): linear float64 operands
 * are used in place, others are gathered / converted per element (an integer input exactly
 * where it fits in 53 bits; an fp32 / 16-bit output rounded once from the double result). */
#ifndef OG_ELEMENTWISE_H
#define OG_ELEMENTWISE_H

#include <stddef.h>

#include "engine/executor.h"
#include "engine/isa_table.h"
#include "engine/tiling.h"
#include "opgrad/opgrad.h"
#include "tensor/tensor.h"

#define OG_EW_MAX_IN 6 // 6: BatchNorm / GroupNorm dx = a dy + b (x - mean) + c
#define OG_EW_MAX_OUT 2
#define OG_EW_MAX_PARAMS 64
/// Bytes of fp32 tile buffers per thread. A tile is processed as CopyIn -> Compute -> CopyOut, so
/// its buffers, and the lines of the operands streaming through, should stay in L1: 16 KiB leaves
/// room for both in a 32-48 KiB L1d (32 KiB made bf16 ops ~1.3x slower on a 48 KiB L1d). A plan
/// without buffers (every operand fp32 and used in place) tiles as if it had 2x this budget.
#define OG_EW_TILE_BUDGET (16 * 1024)
// From og_size_gates' stream_in_bytes per thread (all operands; 4 MiB, engine/blocking.h) the
// inputs come from beyond L2: 16-bit inputs are then converted side by side and the next tile is
// prefetched (1.05-1.3x); below it that costs ~20%.

/// in[k] / out[k] point at n contiguous fp32 values; out may alias in.
typedef void (*og_ew_compute_fn)(size_t n, const float *const *in, float *const *out,
                                 const void *params);

/// in[k] / out[k] point at n contiguous float64 values; out may alias in.
typedef void (*og_ew_compute64_fn)(size_t n, const double *const *in, double *const *out,
                                   const void *params);

/// A fused 16-bit kernel (engine/simd/vec16.h, OG_EW_KERNEL3): in[k] / out[k] point at n
/// contiguous values of one 16-bit dtype; widen, compute, round once; `stream`: non-temporal
/// stores.
typedef void (*og_ew_compute16_fn)(size_t n, const uint16_t *const *in, uint16_t *const *out,
                                   const void *params, bool stream);

/// Declares og_<name>_kernels[] (indexed by ISA level) and its per-build functions, for a kernel
/// with an fp32 body only.
#define OG_EW_DECLARE_KERNEL(name)                                                                 \
    void og_##name##__scalar(size_t n, const float *const *in, float *const *out, const void *p);  \
    void og_##name##__avx2(size_t n, const float *const *in, float *const *out, const void *p);    \
    void og_##name##__avx512(size_t n, const float *const *in, float *const *out, const void *p);  \
    extern const og_ew_compute_fn og_##name##_kernels[OPGRAD_ISA_COUNT];

/// Defines og_<name>_kernels[] (in one host source).
#define OG_EW_DEFINE_KERNEL_TABLE(name)                                                            \
    const og_ew_compute_fn og_##name##_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_##name)

/// Declares og_<name>_kernels64[] and its per-build functions og_<name>_f64__<isa> (made with
/// OG_EW_KERNEL64, engine/simd/map64.h).
#define OG_EW_DECLARE_KERNEL64(name)                                                               \
    void og_##name##_f64__scalar(size_t, const double *const *, double *const *, const void *);    \
    void og_##name##_f64__avx2(size_t, const double *const *, double *const *, const void *);      \
    void og_##name##_f64__avx512(size_t, const double *const *, double *const *, const void *);    \
    extern const og_ew_compute64_fn og_##name##_kernels64[OPGRAD_ISA_COUNT];

#define OG_EW_DEFINE_KERNEL64_TABLE(name)                                                          \
    const og_ew_compute64_fn og_##name##_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_##name##_f64)

#define OG_EW_DECLARE_COMPUTE16(fn)                                                                \
    void fn(size_t, const uint16_t *const *, uint16_t *const *, const void *, bool);

/// Declares og_<name>_kernels[] and, for kernels made with OG_EW_KERNEL3, og_<name>_kernels16[]
/// ([isa][0] bf16, [isa][1] fp16), and their per-build functions; and the float64 kernel every
/// OG_EW_KERNEL3 operation also has (og_<name>_kernels64, made with OG_EW_KERNEL64).
#define OG_EW_DECLARE_KERNEL3(name)                                                                \
    OG_EW_DECLARE_KERNEL(name)                                                                     \
    OG_EW_DECLARE_KERNEL(name##_nt)                                                                \
    OG_EW_DECLARE_KERNEL64(name)                                                                   \
    OG_EW_DECLARE_COMPUTE16(og_##name##_bf16__scalar)                                              \
    OG_EW_DECLARE_COMPUTE16(og_##name##_bf16__avx2)                                                \
    OG_EW_DECLARE_COMPUTE16(og_##name##_bf16__avx512)                                              \
    OG_EW_DECLARE_COMPUTE16(og_##name##_bf16i__avx512)                                             \
    OG_EW_DECLARE_COMPUTE16(og_##name##_f16__scalar)                                               \
    OG_EW_DECLARE_COMPUTE16(og_##name##_f16__avx2)                                                 \
    OG_EW_DECLARE_COMPUTE16(og_##name##_f16__avx512)                                               \
    extern const og_ew_compute16_fn og_##name##_kernels16[OPGRAD_ISA_COUNT][2];

/// Defines both tables of an OG_EW_KERNEL3 kernel: from AVX512-BF16 up, bf16 results are rounded
/// by the _bf16i variant (vcvtneps2bf16).
#define OG_EW_DEFINE_KERNEL3_TABLES(name)                                                          \
    OG_EW_DEFINE_KERNEL_TABLE(name);                                                               \
    OG_EW_DEFINE_KERNEL_TABLE(name##_nt);                                                          \
    OG_EW_DEFINE_KERNEL64_TABLE(name);                                                             \
    const og_ew_compute16_fn og_##name##_kernels16[OPGRAD_ISA_COUNT][2] = {                        \
        [OPGRAD_ISA_SCALAR] = {og_##name##_bf16__scalar, og_##name##_f16__scalar},                 \
        [OPGRAD_ISA_AVX2] = {og_##name##_bf16__avx2, og_##name##_f16__avx2},                       \
        [OPGRAD_ISA_AVX512] = {og_##name##_bf16__avx512, og_##name##_f16__avx512},                 \
        [OPGRAD_ISA_AVX512_BF16] = {og_##name##_bf16i__avx512, og_##name##_f16__avx512},           \
        [OPGRAD_ISA_AVX512_FP16] = {og_##name##_bf16i__avx512, og_##name##_f16__avx512},           \
        [OPGRAD_ISA_AMX] = {og_##name##_bf16i__avx512, og_##name##_f16__avx512}}

typedef struct og_ew_op {
    const og_opdesc *op;                      // the operator being planned
    const og_ew_compute_fn *kernels;          // [OPGRAD_ISA_COUNT]
    const og_ew_compute16_fn (*kernels16)[2]; // optional [OPGRAD_ISA_COUNT][bf16, fp16]
    const og_ew_compute64_fn *kernels64;      // [OPGRAD_ISA_COUNT] when compute_dtype is double
    const og_ew_compute_fn *kernels_nt;       // optional: the fp32 kernels with non-temporal stores
                                              // (OG_EW_KERNEL3's _nt), for outputs past the NT size
    bool compute_bound; // the body costs more per element than its bytes take to move (the
                        // transcendental forwards): outputs are never streamed (og_ew_make_plan)
    bool light;         // one rounded operation per element on two input streams (Add, Mul,
                        // the threshold, leaky_relu and hardsigmoid backwards): in fp32 past
                        // ymm_stream_bytes per thread, the 256-bit kernels (ymm_stream), which
                        // give the same bits
    int nin, nout;
    const aclTensor *in[OG_EW_MAX_IN];
    const aclTensor *out[OG_EW_MAX_OUT];             // all of the output shape
    const char *names[OG_EW_MAX_IN + OG_EW_MAX_OUT]; // argument names (inputs, then outputs)
    bool slots;                // in_slot / out_slot are given (a step of a larger program);
    int in_slot[OG_EW_MAX_IN]; // else input k is slot k and output k slot nin + k
    int out_slot[OG_EW_MAX_OUT];
    // Where each operand's element 0 is, in elements from its io slot's address (default 0): a
    // view of part of a slot's tensor, e.g. the two halves of one tensor as two operands. Relative
    // to the slot, so re-pointing the slot (aclSetInputTensorAddr) moves the view with it.
    int64_t in_offset[OG_EW_MAX_IN];
    int64_t out_offset[OG_EW_MAX_OUT];
    const void *params;        // copied into the plan
    aclDataType compute_dtype; // promoted input type: an output of another dtype is rounded
                               // to it first (aclnn casts the op's result to the output dtype)
    size_t params_size;
} og_ew_op;

typedef struct og_ew_operand {
    aclDataType dtype;
    int slot;                     // executor io slot
    int64_t offset;               // element 0 is this many elements from the slot's address
    bool linear;                  // element i of the output space is at base + i
    bool direct;                  // linear fp32 used in place (no buffer)
    bool rowwise;                 // an input of the compute dtype (fp32, or bf16 / fp16 on the
                                  // fused 16-bit path) with a unit innermost stride that is not
                                  // linear (a bias row broadcast over the outer dims): read in
                                  // place, one innermost run at a time (no buffer)
    bool splat;                   // an input that is one value for the whole output (every stride
                                  // 0: a 0-d gradOutput after a mean or sum loss, a scalar
                                  // tensor): its buffer is filled once per launch, and on the
                                  // fused 16-bit path it is a short run of that value
    aclDataType round_via;        // outputs, integer inputs: round through this dtype first
                                  // (the promoted type), ACL_FLOAT = no
    int64_t strides[OG_MAX_DIMS]; // over the coalesced output dims
} og_ew_operand;

typedef struct og_ew_plan {
    int ndim;
    int64_t dims[OG_MAX_DIMS]; // coalesced output shape (ndim >= 1)
    int nin, nout;
    og_ew_operand in[OG_EW_MAX_IN], out[OG_EW_MAX_OUT];
    bool stream_out;  // non-temporal CopyOut
    bool nt_in_place; // stream_out with every output linear fp32, written in place by
                      // the operation's non-temporal kernel (compute)
    bool fused16;     // every operand of one dtype (bf16 / fp16: dtype16),
                      // the compute dtype or computed in fp32, linear or
                      // a rowwise or splat input: compute16 runs on the
                      // data, no CopyIn / CopyOut
    aclDataType dtype16;
    const uint16_t *lut16; // fused16, one input, one output, compute-bound: the kernel's result
                           // for each of the 65,536 encodings (og_ew_prepare), read per element
    bool f64;              // computed in float64 (compute64 on float64 buffers)
    bool rowwise;          // some input is rowwise: Compute runs once per innermost run
    bool ymm_stream;       // a light fp32 map (not fused16, not float64, not stream_out) past
                           // og_size_gates' ymm_stream_bytes per thread (set where the CPU
                           // halves 512-bit operations, og_cpu_halves_512): og_ew_prepare
                           // takes the AVX2 kernels, which stream L3-resident operands 3-20%
                           // faster there (bench/README.md, "Zen 4, later that night")
    bool stream_in;        // past the stream-in size gate per thread:
                           // 16-bit inputs converted side by side and
                           // the next tile prefetched
    opgrad_isa isa;
    og_ew_compute_fn compute;
    og_ew_compute16_fn compute16;
    og_ew_compute64_fn compute64;
    og_tiling tiling;
    unsigned char params[OG_EW_MAX_PARAMS];
} og_ew_plan;

/// Plans an elementwise operator whose arguments the operator has already checked (dtypes,
/// shapes: every input broadcasts to the output shape, ranks <= 8). Checks data pointers and
/// memory overlap, then publishes the executor.
aclnnStatus og_ew_plan_op(const og_ew_op *op, uint64_t *workspaceSize, aclOpExecutor **executor);

/// The pure part of planning (no tensors' data touched): exposed for the tiling tests.
/// `in_dims`/`out` shapes follow og_ew_op; fills *plan.
void og_ew_make_plan(const og_ew_op *op, int max_cores, int64_t nt_threshold_bytes,
                     og_ew_plan *plan);

/// Output-byte threshold above which CopyOut uses non-temporal stores (OPGRAD_NT_BYTES, default
/// 16 MiB).
int64_t og_ew_nt_threshold(void);

/// The plan og_ew_plan_op would make, for the current threads and ISA (the operator's memory
/// checks are the caller's); its operands read the op's slots. Its scratch is
/// tiling.slots * tiling.buffer_bytes.
void og_ew_prepare(const og_ew_op *op, og_ew_plan *plan);

/// Runs a plan (phase 2) with executor e's addresses; `scratch` holds the tile buffers.
void og_ew_run(const aclOpExecutor *e, const og_ew_plan *plan, char *scratch);

#endif
