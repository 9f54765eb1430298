/* The GEMM engine: C = epilogue(alpha * A @ B + beta * D) over a batch, for matmul, linear,
 * convolution (implicit GEMM) and attention. Built the BLIS / GotoBLAS way:
 *
 *   phase 1 (og_gemm_make_plan): block sizes (KC = OG_GEMM_KC; MC: an A block fills half of L2;
 *     NC 512), the N chunks and batch groups whose packed B fits the pack budget, the units of
 *     work (batch x MC rows x NC columns), the threads (a quarter MFLOP each at least), and
 *     whether B is packed once for all units or by each unit (a single row block);
 *   phase 2 (og_gemm_run), per chunk of N and group of batches:
 *     CopyIn B: every thread packs rows of B into the NR-column panels (any strides, any float
 *       dtype, widened to fp32, optionally rounded through a 16-bit dtype) of the shared pack
 *       area (or, for a single row block, each unit its own KC x NC block per slice);
 *     per unit: for each KC slice of K, CopyIn A (MR-row panels of the unit's MC rows) into the
 *       thread's scratch, then the micro-kernel (MR x NR, fp32 FMA) on every micro-tile of the
 *       unit, adding into the thread's fp32 C tile;
 *     CopyOut: the epilogue on each finished row of the tile (alpha, beta * D, an activation or
 *       its derivative, a product or a sum with E) and the store to C's dtype and strides.
 *
 * Determinism and accuracy. K is summed in slices of KC (OG_GEMM_KC = 256, a constant, not a
 * cache size): within a slice every element of C is one FMA chain p = fma(a_k, b_k, p) in k order
 * from 0, and the slices' sums are added in order, c = p_0, c = c + p_1, ... The block sizes of
 * M and N, the micro-tile shape, the ISA and the thread count change which code computes an
 * element, never the order of its operations, so C is bitwise the same for all of them
 * (tests/kernel/test_gemm.c proves it against the plain loops). The slices keep the worst-case
 * error at (KC + K/KC) * 2^-24 * sum |a_k b_k| instead of K * 2^-24 * ..., as blocked BLAS sums
 * are. Units partition C, so threads never combine partial sums.
 *
 * float64 (og_gemm_op.f64: the operator's promoted dtype is float64) runs a plain loop instead, in
 * units of up to 16 C rows: each row's K sum in the same order (slices of KC, an fma chain from 0
 * in each, the slices added in order), in double; operands of any float dtype are read converted
 * (exactly), generated ones by their gen64, each B row once for a unit's rows of one batch (a
 * panel); the epilogue runs on the double row (the activations by their float64 kernels,
 * act_kernels64) and C (and C2) is rounded once to its dtype. It is the precision of gradient
 * checks, not a fast path (5-20 GFLOP/s).
 *
 * Operands are described as matrices: a batch offset per batch dim (0 where it broadcasts), a row
 * stride and a column stride, in elements. A transposed view is a matrix with swapped strides and
 * is read in place by the packing; a bias [N] is a matrix with row stride 0. */
#ifndef OG_GEMM_H
#define OG_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/convert.h"
#include "engine/elementwise.h"
#include "engine/executor.h"
#include "opgrad/opgrad.h"
#include "tensor/tensor.h"

/// A generated operand (implicit GEMM: convolution's im2col matrix, never stored): writes n
/// values of the operand's row `row`, columns [col, col + n), as fp32 to out. base is the
/// operand's slot address plus its batch offset (bstride); params the op's gen_params. It reads
/// only its slot, so the packing runs it on any thread.
typedef void (*og_gemm_gen_fn)(const void *params, const og_convert_table *cv, const char *base,
                               int64_t row, int64_t col, int64_t n, float *out);
/// The same for the float64 loop (og_gemm_op.f64): the n values in double, converted exactly.
typedef void (*og_gemm_gen64_fn)(const void *params, const char *base, int64_t row, int64_t col,
                                 int64_t n, double *out);

/// One matrix operand of a GEMM step.
typedef struct og_gemm_mat {
    bool present;
    int slot;                     // executor slot
    aclDataType dtype;            // FLOAT, FLOAT16, BFLOAT16
    int64_t bstride[OG_MAX_DIMS]; // per batch dim (0: broadcast)
    int64_t rs, cs;               // row and column strides (0: broadcast)
    og_gemm_gen_fn gen;           // A or B only: generated rows (rs, cs unused), NULL: strided
    og_gemm_gen64_fn gen64;       // the same when the op is f64 (gen is then unused)
    int64_t offset;               // element 0 of batch 0, in elements from the slot's address
} og_gemm_mat;

/// What the epilogue does with z = alpha * acc + beta * D (all in fp32, rounded once to C).
typedef enum og_gemm_epi_kind {
    OG_GEMM_EPI_NONE,     // C = z
    OG_GEMM_EPI_ACT,      // C = act(z): act_kernels with in = {z}
    OG_GEMM_EPI_ACT_GRAD, // C = act'(z) * E: act_kernels with in = {E, z} (a backward kernel)
    OG_GEMM_EPI_ADD,      // C = z + E
    OG_GEMM_EPI_MUL,      // C = z * E
    OG_GEMM_EPI_MUL_GRAD, // C = E * F and C2 = E * z (the backward of z * x3: E = dL/dy, F = x3)
} og_gemm_epi_kind;

#define OG_GEMM_MAX_PARAMS 16
#define OG_GEMM_GEN_PARAMS 512

/// A GEMM step as an operator describes it.
typedef struct og_gemm_op {
    int nbatch;                 // batch dims (0..OG_MAX_DIMS-2)
    int64_t batch[OG_MAX_DIMS]; // C's batch shape
    int64_t M, N, K;
    og_gemm_mat a, b;     // A [M,K], B [K,N]
    og_gemm_mat c;        // C [M,N], written (must not alias A or B)
    og_gemm_mat d;        // optional addend (beta * D); may be C itself (in-place addmm)
    og_gemm_mat e, f;     // optional epilogue operands
    og_gemm_mat c2;       // second output (MUL_GRAD)
    double alpha, beta;   // alpha 1 and beta 0 skip their operations
    aclDataType round_ab; // round A and B through this dtype when packing (ACL_FLOAT: no)
    bool f64;             // computed in float64 (see the top)
    og_gemm_epi_kind epi;
    const og_ew_compute_fn *act_kernels;     // [OPGRAD_ISA_COUNT], for ACT / ACT_GRAD
    const og_ew_compute64_fn *act_kernels64; // the same in float64 (f64)
    unsigned char act_params[OG_GEMM_MAX_PARAMS];
    _Alignas(8) unsigned char gen_params[OG_GEMM_GEN_PARAMS]; // for a.gen and b.gen
} og_gemm_op;

/// The micro-kernel: C[MR x NR] (row stride ldc) = (accumulate ? C + p : p), p = A panel @ B panel
/// summed by one fma per k in k order from 0. A panel: kc x MR, k-major; B panel: kc x NR, k-major.
typedef void (*og_gemm_ukr_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                               bool accumulate);

typedef struct og_gemm_kernel {
    og_gemm_ukr_fn fn;
    int mr, nr;
} og_gemm_kernel;

/// The micro-kernel that runs at ISA level `isa` (gemm_simd.c).
og_gemm_kernel og_gemm_kernel_at(opgrad_isa isa);

/// The float64 loop's step: y[j] = fma(a, x[j], y[j]) for j < n (one rounding each, so every
/// ISA build gives the same bits), at ISA level `isa`.
typedef void (*og_gemm_axpy64_fn)(int64_t n, double a, const double *x, double *y);
og_gemm_axpy64_fn og_gemm_axpy64_at(opgrad_isa isa);

/// The summation slice of K (see "Determinism and accuracy"); also the K cache block: a B
/// micro-panel of 256 x 24 fp32 (AVX2) takes 24 KiB of a 32 KiB L1d.
#define OG_GEMM_KC 256

/// Block sizes. Zero fields take the defaults: kc OG_GEMM_KC, mc and nc from the CPU's caches.
/// The checker and the tests set tiny ones so that small shapes cross every block boundary: mc
/// and nc leave the results the same bits; kc changes the slices of K (the order is then that
/// kc's, the same for every ISA and thread count).
typedef struct og_gemm_blocking {
    int64_t mc, kc, nc;  // rows of a unit (multiple of MR), K slice, columns of a unit (of NR)
    int64_t pack_budget; // bytes of packed B per chunk/group (at least one K x NR panel)
    double thread_flops; // the least work worth one more thread (default 2.5e5 flops)
} og_gemm_blocking;
og_gemm_blocking og_gemm_blocking_get(void);
/// Overrides the block sizes of later plans (NULL: back to the CPU's). Set it only while no other
/// thread plans an executor.
void og_gemm_blocking_set(const og_gemm_blocking *b);

/// A GEMM plan (plain data).
typedef struct og_gemm_plan {
    og_gemm_op op;
    int nbatch;
    int64_t batch[OG_MAX_DIMS], nbatches; // C's batch dims, coalesced; their product
    bool b_shared;                        // B is the same matrix for every batch
    bool b_local;                         // each unit packs its own B blocks (one row block)
    int64_t mc, kc, nc;                   // block sizes
    int64_t chunk_n;                      // columns of B packed at once (a multiple of nc)
    int64_t group;                        // batches whose B is packed at once
    int64_t mblocks;                      // ceil(M / mc)
    int64_t pack_bytes;                   // the shared pack area
    int64_t slot_bytes;                   // scratch per thread: A block, C tile, epilogue rows
    int slots;                            // threads
    opgrad_isa isa;
    og_gemm_kernel kernel;
    og_ew_compute_fn act;
    og_ew_compute64_fn act64; // float64: the epilogue's activation
    int64_t rows64;           // float64: C rows (over all batches) per unit
    int64_t kp; // float64: B rows per panel (made once for a unit's rows of one batch)
    og_gemm_axpy64_fn axpy64;
} og_gemm_plan;

/// The pure planner (no data touched): fills *plan for max_threads threads at ISA level `isa`.
/// Returns false when a size overflows (the caller reports it).
bool og_gemm_make_plan(const og_gemm_op *op, int max_threads, opgrad_isa isa, og_gemm_plan *plan);
/// Workspace bytes a plan needs (pack area + every thread's scratch).
uint64_t og_gemm_scratch_bytes(const og_gemm_plan *p);
/// Runs a plan (phase 2) with executor e's addresses; `scratch` holds og_gemm_scratch_bytes.
void og_gemm_run(const aclOpExecutor *e, const og_gemm_plan *p, char *scratch);

#endif
