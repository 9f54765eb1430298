/* LayerNorm and RMSNorm row kernels (the row engine, engine/rows.h), fp32, one build per ISA,
 * bitwise identical on every ISA (norm_kernel_simd.c). A row is the n values of the normalized
 * dims; inputs of other dtypes arrive widened to fp32 (the engine's CopyIn).
 *
 *   layer_norm_fwd  in = {x[, gamma][, beta]}  out = {y}  stats = {mean, rstd} (or {rstd})
 *                   y = (x - mean) rstd [* gamma] [+ beta], rstd = 1 / sqrt(var + eps)
 *   rms_norm_fwd    in = {x, gamma}            out = {y}  stats = {rstd}
 *                   y = (x rstd) gamma, rstd = 1 / sqrt(mean(x^2) + eps)
 *   layer_norm_bwd  in = {dy, x[, gamma]}  stats in = {mean, rstd}  out = {dx} (if wanted)
 *                   acc = {dgamma partial}[, {dbeta partial}] (what is wanted)
 *                   xhat = (x - mean) rstd, g = dy gamma,
 *                   dx = rstd (g - mean(g) - xhat mean(g xhat)), dgamma += dy xhat, dbeta += dy
 *   rms_norm_bwd    in = {dy, x, gamma}  stats in = {rstd}  out = {dx} (if wanted)
 *                   acc = {dgamma partial} (if wanted)
 *                   xhat = x rstd, g = dy gamma, dx = rstd (g - xhat mean(g xhat)),
 *                   dgamma += dy xhat
 *   add_layer_norm_fwd / add_rms_norm_fwd  in = {x1, x2[, bias], ...the forward's}
 *                   out = {y[, xOut]}: x = x1 + x2 (+ bias) in fp32, then the forward on x
 *   add_layer_norm_bwd  in = {dy, x1, x2, gamma[, dsum]}: layer_norm_bwd at x = x1 + x2, dx += dsum
 * og_<name>_kernels[isa] are og_row_fn (no accumulators), og_<name>_acc_kernels[isa] og_row_acc_fn
 * (the backwards with dgamma / dbeta). */
#ifndef OG_NORM_KERNEL_H
#define OG_NORM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/elementwise.h"
#include "engine/row_kernel.h"
#include "opgrad/opgrad.h"

/// The kernels' parameters (the row engine copies them into its plan).
typedef struct og_norm_params {
    double eps;
    int has_gamma, has_beta; // forwards / LayerNorm backward: which optional inputs follow x
    int stats_mode;          // forwards: 0 stats {mean, rstd}, 1 {rstd} only
    int want_dx;             // backwards: out[0] is dx
    int want_dgamma;         // backwards: acc[0] is dgamma's partial row
    int want_dbeta;          // backwards: the next acc is dbeta's
    int add_mode;            // residual forwards: 2 (x = in[0] + in[1]) or 3 (+ in[2], a bias)
    int want_xout;           // residual forwards: out[1] receives x
    int has_dsum;            // AddLayerNormGrad: in[4] is added to dx
} og_norm_params;

#define OG_NORM_DECLARE(name)                                                                      \
    void og_##name##__scalar(size_t, const float *const *, float *const *, const void *, float *); \
    void og_##name##__avx2(size_t, const float *const *, float *const *, const void *, float *);   \
    void og_##name##__avx512(size_t, const float *const *, float *const *, const void *, float *); \
    extern const og_row_fn og_##name##_kernels[OPGRAD_ISA_COUNT];
#define OG_NORM_DECLARE_ACC(name)                                                                  \
    void og_##name##_acc__scalar(size_t, const float *const *, float *const *, const void *,       \
                                 float *, float *const *);                                         \
    void og_##name##_acc__avx2(size_t, const float *const *, float *const *, const void *,         \
                               float *, float *const *);                                           \
    void og_##name##_acc__avx512(size_t, const float *const *, float *const *, const void *,       \
                                 float *, float *const *);                                         \
    extern const og_row_acc_fn og_##name##_acc_kernels[OPGRAD_ISA_COUNT];

OG_NORM_DECLARE(layer_norm_fwd)
OG_NORM_DECLARE(rms_norm_fwd)
OG_NORM_DECLARE(layer_norm_bwd)
OG_NORM_DECLARE(rms_norm_bwd)
OG_NORM_DECLARE_ACC(layer_norm_bwd)
OG_NORM_DECLARE_ACC(rms_norm_bwd)
OG_NORM_DECLARE(add_layer_norm_fwd)
OG_NORM_DECLARE(add_rms_norm_fwd)
OG_NORM_DECLARE(add_layer_norm_bwd)
OG_NORM_DECLARE_ACC(add_layer_norm_bwd)

/// An elementwise copy (the MAP step that gathers an operand whose normalized dims do not
/// coalesce into one row axis, or scatters such an output).
OG_EW_DECLARE_KERNEL(norm_copy)
OG_EW_DECLARE_KERNEL64(norm_copy)

/// The float64 rows (og_<name>_kernels64 / _acc_kernels64): the same formulas in double, every
/// sum compensated (norm_kernel_simd.c).
#define OG_NORM_DECLARE_ACC64(name)                                                                \
    void og_##name##_acc_f64__scalar(size_t, const double *const *, double *const *, const void *, \
                                     double *, double *const *);                                   \
    void og_##name##_acc_f64__avx2(size_t, const double *const *, double *const *, const void *,   \
                                   double *, double *const *);                                     \
    void og_##name##_acc_f64__avx512(size_t, const double *const *, double *const *, const void *, \
                                     double *, double *const *);                                   \
    extern const og_row_acc64_fn og_##name##_acc_kernels64[OPGRAD_ISA_COUNT];
OG_ROW64_DECLARE(layer_norm_fwd)
OG_ROW64_DECLARE(rms_norm_fwd)
OG_ROW64_DECLARE(layer_norm_bwd)
OG_ROW64_DECLARE(rms_norm_bwd)
OG_NORM_DECLARE_ACC64(layer_norm_bwd)
OG_NORM_DECLARE_ACC64(rms_norm_bwd)
OG_ROW64_DECLARE(add_layer_norm_fwd)
OG_ROW64_DECLARE(add_rms_norm_fwd)
OG_ROW64_DECLARE(add_layer_norm_bwd)
OG_NORM_DECLARE_ACC64(add_layer_norm_bwd)

#endif
