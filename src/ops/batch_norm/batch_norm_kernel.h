/* BatchNorm / GroupNorm kernels: fp32 compute functions for the elementwise engine (and maps of
 * the reduction engine).
 *
 * Per-element maps (batch_norm_kernel_simd.c, one build per ISA; the statistics broadcast):
 *   og_bn_sqdev:     in = {x, mean}                    out = {(x - mean)^2}
 *   og_bn_dymul:     in = {dy, x, mean}                out = {dy * (x - mean)}
 *   og_bn_norm:      in = {x, mean, scale, shift}      out = {(x - mean) * scale + shift}
 *   og_bn_norm_nob:  in = {x, mean, scale}             out = {(x - mean) * scale}
 *   og_bn_dx:        in = {dy, x, mean, a, b, c}       out = {a * dy + (b * (x - mean) + c)}
 * (fused multiply-adds: one rounding each, the same bits on every ISA). Each has a float64 twin
 * (og_bn_*_kernels64, the same formula in double with fma) for a DOUBLE input.
 *
 * Per-channel / per-group coefficients (batch_norm_coef.c, plain C, one function for every ISA
 * level: they run over C or N * group values only). Each computes in double and rounds once:
 *   og_bn_rstd:      in = {var}                        out = {1 / sqrt(var + eps)}
 *   og_bn_running:   in = {running, stat}              out = {(1 - m) running + m f stat}
 *   og_bn_copy:      in = {a}                          out = {a}
 *   og_bn_bc:        in = {a, rstd, s1, s2}            out = {-a rstd^2 s2 / K, -a s1 / K}
 * and their float64 twins (og_bn_*_kernels64: the same double arithmetic, without the rounding). */
#ifndef OG_BATCH_NORM_KERNEL_H
#define OG_BATCH_NORM_KERNEL_H

#include "engine/elementwise.h"

typedef struct og_bn_params {
    double eps;      // og_bn_rstd
    double momentum; // og_bn_running
    double factor;   // og_bn_running: K/(K-1) for the unbiased variance, 1 for the mean
    double inv_k;    // og_bn_bc: 1 / K
} og_bn_params;

OG_EW_DECLARE_KERNEL(bn_sqdev)
OG_EW_DECLARE_KERNEL(bn_dymul)
OG_EW_DECLARE_KERNEL(bn_norm)
OG_EW_DECLARE_KERNEL(bn_norm_nob)
OG_EW_DECLARE_KERNEL(bn_dx)
OG_EW_DECLARE_KERNEL64(bn_sqdev)
OG_EW_DECLARE_KERNEL64(bn_dymul)
OG_EW_DECLARE_KERNEL64(bn_norm)
OG_EW_DECLARE_KERNEL64(bn_norm_nob)
OG_EW_DECLARE_KERNEL64(bn_dx)

extern const og_ew_compute_fn og_bn_rstd_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_bn_running_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_bn_copy_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_bn_bc_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute64_fn og_bn_rstd_kernels64[OPGRAD_ISA_COUNT];
extern const og_ew_compute64_fn og_bn_running_kernels64[OPGRAD_ISA_COUNT];
extern const og_ew_compute64_fn og_bn_copy_kernels64[OPGRAD_ISA_COUNT];
extern const og_ew_compute64_fn og_bn_bc_kernels64[OPGRAD_ISA_COUNT];

#endif
