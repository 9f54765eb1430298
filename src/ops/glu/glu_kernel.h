/* GLU row kernels (og_row_fn), fp32, one build per ISA (glu_kernel_simd.c). A row is one line of
 * x along the split dim, n = 2h values: A = row[0, h), B = row[h, 2h). Each output row also has
 * n values; only the halves named below are written (the rest of a forward's temporary row is
 * never read).
 *
 *   swiglu_fwd:  in = {x}          out = {t}        t[0, h) = silu(A) B
 *   swiglu_bwd:  in = {x, d}       out = {dx}       d[0, h) = dy: dx = [dy silu'(A) B, dy silu(A)]
 *   geglu_fwd:   in = {x}          out = {t, g}     g[0, h) = gelu(G), t[0, h) = L gelu(G)
 *   geglu_bwd:   in = {x, d, g}    out = {dx}       d[0, h) = dy, g[0, h) = the forward's gelu(G):
 *                                                   dL = dy g, dG = dy L gelu'(G)
 * For GeGlu, G (the gelu'd half) is B and L = A, or the reverse when the params say activate_left
 * (aclnnGeGluV3). The math is the activation kernels' own (og_silu_*, og_gelu_*), applied to
 * chunks of a row, so the results are theirs bit for bit, and every chunk reads all its inputs
 * before it writes: dx may be x itself (in place, same layout). `stats` is unused. The 16-bit
 * kernels (og_<name>_kernels16) run the same fp32 arithmetic on widened chunks and round each
 * result once. */
#ifndef OG_GLU_KERNEL_H
#define OG_GLU_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/row_kernel.h"
#include "opgrad/opgrad.h"

typedef struct og_glu_params {
    int approximate;    // GeGlu: 0 erf, 1 tanh
    bool activate_left; // GeGlu: gelu applies to A (the first half)
} og_glu_params;

#define OG_GLU_DECLARE_ROW16(fn)                                                                   \
    void fn(size_t, const uint16_t *const *, uint16_t *const *, float *, const void *, float *);

/// og_<name>_kernels[isa] (fp32 rows) and og_<name>_kernels16[isa][0: bf16, 1: fp16].
#define OG_GLU_DECLARE_ROW_KERNEL(name)                                                            \
    void og_##name##__scalar(size_t, const float *const *, float *const *, const void *, float *); \
    void og_##name##__avx2(size_t, const float *const *, float *const *, const void *, float *);   \
    void og_##name##__avx512(size_t, const float *const *, float *const *, const void *, float *); \
    OG_GLU_DECLARE_ROW16(og_##name##_bf16__scalar)                                                 \
    OG_GLU_DECLARE_ROW16(og_##name##_bf16__avx2)                                                   \
    OG_GLU_DECLARE_ROW16(og_##name##_bf16__avx512)                                                 \
    OG_GLU_DECLARE_ROW16(og_##name##_f16__scalar)                                                  \
    OG_GLU_DECLARE_ROW16(og_##name##_f16__avx2)                                                    \
    OG_GLU_DECLARE_ROW16(og_##name##_f16__avx512)                                                  \
    extern const og_row_fn og_##name##_kernels[OPGRAD_ISA_COUNT];                                  \
    extern const og_row16_fn og_##name##_kernels16[OPGRAD_ISA_COUNT][2];

OG_GLU_DECLARE_ROW_KERNEL(swiglu_fwd)
OG_GLU_DECLARE_ROW_KERNEL(swiglu_bwd)
OG_GLU_DECLARE_ROW_KERNEL(geglu_fwd)
OG_GLU_DECLARE_ROW_KERNEL(geglu_bwd)

#endif
