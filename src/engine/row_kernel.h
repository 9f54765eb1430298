/* The row kernels' signatures (the row engine, engine/rows.h, calls them; kernels implement them
 * in *_simd.c files, which need nothing else of the engine). */
#ifndef OG_ROW_KERNEL_H
#define OG_ROW_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "opgrad/opgrad.h"

/// One row: in[k] / out[k] point at n contiguous fp32 values (out may alias in); `stats`
/// receives per-row statistics for kernels that save them (NULL for softmax).
typedef void (*og_row_fn)(size_t n, const float *const *in, float *const *out, const void *params,
                          float *stats);

/// One row of 16-bit values (all operands of one dtype, bf16 or fp16), widened on load and
/// rounded once on store; `scratch` holds n fp32 values for a kernel that needs an fp32 row.
typedef void (*og_row16_fn)(size_t n, const uint16_t *const *in, uint16_t *const *out,
                            float *scratch, const void *params, float *stats);

/// One row in float64 (a float64 operator: og_rows_op.kernels64): in[k] / out[k] point at n
/// contiguous doubles (out may alias in), `stats` at the row's statistics in double.
typedef void (*og_row64_fn)(size_t n, const double *const *in, double *const *out,
                            const void *params, double *stats);

/// Declares a float64 row kernel's per-build functions og_<name>_f64__<isa> and its table
/// og_<name>_kernels64[] (defined with OG_ISA_TABLE(og_<name>_f64)).
#define OG_ROW64_DECLARE(name)                                                                     \
    void og_##name##_f64__scalar(size_t, const double *const *, double *const *, const void *,     \
                                 double *);                                                        \
    void og_##name##_f64__avx2(size_t, const double *const *, double *const *, const void *,       \
                               double *);                                                          \
    void og_##name##_f64__avx512(size_t, const double *const *, double *const *, const void *,     \
                                 double *);                                                        \
    extern const og_row64_fn og_##name##_kernels64[OPGRAD_ISA_COUNT];

/// Declares a row kernel's 16-bit entry points og_<name>_bf16__<isa> / og_<name>_f16__<isa> and
/// its table og_<name>_kernels16[isa][0: bf16, 1: fp16] (defined with OG_ISA_TABLE16(og_<name>)).
#define OG_ROW16_DECLARE_ISA(name, isa)                                                            \
    void og_##name##_bf16__##isa(size_t, const uint16_t *const *, uint16_t *const *, float *,      \
                                 const void *, float *);                                           \
    void og_##name##_f16__##isa(size_t, const uint16_t *const *, uint16_t *const *, float *,       \
                                const void *, float *);
#define OG_ROW16_DECLARE(name)                                                                     \
    OG_ROW16_DECLARE_ISA(name, scalar)                                                             \
    OG_ROW16_DECLARE_ISA(name, avx2)                                                               \
    OG_ROW16_DECLARE_ISA(name, avx512)                                                             \
    extern const og_row16_fn og_##name##_kernels16[OPGRAD_ISA_COUNT][2];

/// One row of a kernel with column accumulators (the row engine's row groups, engine/rows.h):
/// as og_row_fn, plus acc[k] = the n fp32 partial column sums of this row's group, to which the
/// kernel adds its row's contributions (acc[k][i] += c_k(i)). `stats` holds the row's statistics
/// on entry when the operator reads them (og_rows_op.stats_in).
typedef void (*og_row_acc_fn)(size_t n, const float *const *in, float *const *out,
                              const void *params, float *stats, float *const *acc);

/// The same in float64 (the accumulator temporaries are then float64).
typedef void (*og_row_acc64_fn)(size_t n, const double *const *in, double *const *out,
                                const void *params, double *stats, double *const *acc);

#endif
