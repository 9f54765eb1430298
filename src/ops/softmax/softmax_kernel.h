/* Softmax and log-softmax row kernels (og_row_fn), fp32, one build per ISA, bitwise identical on
 * every ISA (softmax_kernel_simd.c):
 *
 *   softmax_fwd:      in = {x}      out = {y}    y = e^(x - m) / sum_j e^(x_j - m), m = max x
 *   log_softmax_fwd:  in = {x}      out = {y}    y = (x - m) - log sum_j e^(x_j - m)
 *   softmax_bwd:      in = {g, y}   out = {dx}   dx = y (g - sum_j g_j y_j)
 *   log_softmax_bwd:  in = {g, y}   out = {dx}   dx = g - e^y sum_j g_j
 *
 * A row with a NaN or a +inf, or with every value -inf, gives a NaN row (forward), as in PyTorch.
 * `params` and `stats` are unused. og_<name>_kernels[] is indexed by opgrad_isa. The 16-bit
 * entry points (og_<name>_kernels16) run the same fp32 arithmetic on widened values and round
 * each result once: the same bits as the fp32 kernel between a CopyIn and a CopyOut. */
#ifndef OG_SOFTMAX_KERNEL_H
#define OG_SOFTMAX_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/row_kernel.h"
#include "opgrad/opgrad.h"

/// og_<name>_kernels[isa] (fp32 rows) and og_<name>_kernels16[isa][0: bf16, 1: fp16].
#define OG_SOFTMAX_DECLARE_ROW_KERNEL(name)                                                        \
    void og_##name##__scalar(size_t, const float *const *, float *const *, const void *, float *); \
    void og_##name##__avx2(size_t, const float *const *, float *const *, const void *, float *);   \
    void og_##name##__avx512(size_t, const float *const *, float *const *, const void *, float *); \
    extern const og_row_fn og_##name##_kernels[OPGRAD_ISA_COUNT];                                  \
    OG_ROW16_DECLARE(name)

OG_SOFTMAX_DECLARE_ROW_KERNEL(softmax_fwd)
OG_SOFTMAX_DECLARE_ROW_KERNEL(log_softmax_fwd)
OG_SOFTMAX_DECLARE_ROW_KERNEL(softmax_bwd)
OG_SOFTMAX_DECLARE_ROW_KERNEL(log_softmax_bwd)

/// The float64 rows (og_<name>_kernels64): the same formulas in double, sums compensated.
OG_ROW64_DECLARE(softmax_fwd)
OG_ROW64_DECLARE(log_softmax_fwd)
OG_ROW64_DECLARE(softmax_bwd)
OG_ROW64_DECLARE(log_softmax_bwd)

#endif
