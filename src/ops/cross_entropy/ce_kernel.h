/* Row kernels of the cross-entropy family (og_row_fn, ce_kernel_simd.c), on the row engine.
 *
 * Targets reach a kernel without a conversion pass: phase 1 describes the integer target tensor
 * to the row engine as an fp32 view of its own bytes, shaped like the logits [N, C] with a row
 * stride of the target's stride in 32-bit words and an axis stride of 1. Such a view is "direct"
 * (used in place, never copied), so in[k] of row n points at target n's first word; a kernel
 * reads one or two words (int32 / int64) of it and nothing else. Per-row fp32 scalars (the
 * backward's incoming gradient) reach the kernels the same way.
 *
 *   ce_fwd    in = {x, target, weight?}  out = {logProb}  stats = {l_n, w[t_n]}
 *             logProb = log_softmax(x) (softmax_kernel.h's kernel, bitwise);
 *             l_n = keep w[t] (-logProb[t]) + smooth sum_c w[c] (-logProb[c]).
 *   nll_fwd   in = {x, target, weight}   out = {}         stats = {l_n, w[t_n]}, logProb = x.
 *   ce_bwd    in = {logProb, target, coef, weight?}  out = {dx}
 *             dx[c] = coef ((keep w[t] + smooth W) e^logProb[c] - smooth w[c]) - coef keep w[t]
 *             [c == t], W = sum_c w[c] (C without weights).
 *   nll_bwd   in = {target, coef, weight}  out = {dx}  dx[c] = -coef w[t] [c == t].
 *   ce_wt     in = {target, weight?}  out = {}  stats = {w[t_n]} (for the backward's mean).
 *   ce_scalar R = 1: stats = {in[0]} (copy) or {in[0] / in[1]} (div).
 * A row whose target is ignoreIndex or outside [0, C) is ignored: l_n = w[t_n] = 0, dx = 0.
 * keep = 1 - labelSmoothing, smooth = labelSmoothing / C. Sums over a row (W, the smoothing
 * term) are taken in double in 16 lanes (element c in lane c % 16, then a fixed tree): the same
 * bits on every ISA and thread count.
 *
 * float64 (og_<name>_kernels64, the row engine's float64 rows): the same kernels in double, the
 * log-softmax softmax_kernel.h's float64 one, the row sums compensated (og_ksum) in increasing c.
 * The target is then no fp32 view: it is the integer tensor itself (its dtype, element strides),
 * whose row element the engine hands over as int64 bits (rows.h), never as a double. */
#ifndef OG_CE_KERNEL_H
#define OG_CE_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/row_kernel.h"
#include "opgrad/opgrad.h"

typedef enum { OG_CE_T_INT32, OG_CE_T_INT64 } og_ce_tkind;

typedef struct og_ce_params {
    int64_t ignore; // ignoreIndex
    float keep;     // 1 - labelSmoothing
    float smooth;   // labelSmoothing / C
    double keep64;  // the same in double (float64 kernels)
    double smooth64;
    int32_t tkind;    // og_ce_tkind
    int32_t weighted; // a weight input is present (the last input)
    int32_t div;      // ce_scalar: divide (else copy)
} og_ce_params;

#define OG_CE_DECLARE(name)                                                                        \
    void og_##name##__scalar(size_t, const float *const *, float *const *, const void *, float *); \
    void og_##name##__avx2(size_t, const float *const *, float *const *, const void *, float *);   \
    void og_##name##__avx512(size_t, const float *const *, float *const *, const void *, float *); \
    extern const og_row_fn og_##name##_kernels[OPGRAD_ISA_COUNT];

OG_CE_DECLARE(ce_fwd)
OG_CE_DECLARE(nll_fwd)
OG_CE_DECLARE(ce_bwd)
OG_CE_DECLARE(nll_bwd)
OG_CE_DECLARE(ce_wt)
OG_CE_DECLARE(ce_scalar)
OG_ROW64_DECLARE(ce_fwd)
OG_ROW64_DECLARE(nll_fwd)
OG_ROW64_DECLARE(ce_bwd)
OG_ROW64_DECLARE(nll_bwd)
OG_ROW64_DECLARE(ce_wt)
OG_ROW64_DECLARE(ce_scalar)

#endif
