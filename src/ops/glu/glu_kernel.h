/* GLU elementwise kernels (og_ew_compute_fn, fp32, one build per ISA: glu_kernel_simd.c), run by
 * one MAP step each. The MAP's operands are views: A = x's first half and B = its second half
 * along the split dim (one io slot, element offsets 0 and h * stride), likewise the two halves
 * of gradInput as two outputs. So a kernel sees n aligned values of each operand:
 *
 *   swiglu_fwd:  in = {A, B}            out = {t}          t = silu(A) B
 *   swiglu_bwd:  in = {A, B, dy}        out = {dA, dB}     dA = dy B silu'(A), dB = dy silu(A)
 *   geglu_fwd:   in = {L, G}            out = {t, g}       g = gelu(G), t = L g
 *   geglu_bwd:   in = {L, G, dy, g}     out = {dL, dG}     g = the forward's gelu(G):
 *                                                          dL = dy g, dG = dy L gelu'(G)
 * For GeGlu, G (the gelu'd half) is B and L = A, or the reverse when activate_left (aclnnGeGluV3):
 * the planner picks the offsets, the kernels never see it. The math is the activation kernels'
 * own (og_silu_*, og_gelu_*), applied to chunks, so the results are theirs bit for bit, and every
 * chunk reads all its inputs before it writes: an output may be its input (dA is A in place).
 * og_<name>_kernels16 ([isa][0: bf16, 1: fp16]): the same fp32 arithmetic on widened chunks of
 * 16-bit data, each result rounded once (the engine's fused path, every operand linear). */
#ifndef OG_GLU_KERNEL_H
#define OG_GLU_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/elementwise.h"

typedef struct og_glu_params {
    int approximate; // GeGlu: 0 erf, 1 tanh
} og_glu_params;

/// og_<name>_kernels[isa] (fp32) and og_<name>_kernels16[isa][0: bf16, 1: fp16].
#define OG_GLU_DECLARE_KERNEL(name)                                                                \
    OG_EW_DECLARE_KERNEL(name)                                                                     \
    OG_EW_DECLARE_COMPUTE16(og_##name##_bf16__scalar)                                              \
    OG_EW_DECLARE_COMPUTE16(og_##name##_bf16__avx2)                                                \
    OG_EW_DECLARE_COMPUTE16(og_##name##_bf16__avx512)                                              \
    OG_EW_DECLARE_COMPUTE16(og_##name##_f16__scalar)                                               \
    OG_EW_DECLARE_COMPUTE16(og_##name##_f16__avx2)                                                 \
    OG_EW_DECLARE_COMPUTE16(og_##name##_f16__avx512)                                               \
    extern const og_ew_compute16_fn og_##name##_kernels16[OPGRAD_ISA_COUNT][2];

OG_GLU_DECLARE_KERNEL(swiglu_fwd)
OG_GLU_DECLARE_KERNEL(swiglu_bwd)
OG_GLU_DECLARE_KERNEL(geglu_fwd)
OG_GLU_DECLARE_KERNEL(geglu_bwd)
// float64 (x of dtype DOUBLE): the same formulas in double, per element (engine/simd/map64.h)
OG_EW_DECLARE_KERNEL64(swiglu_fwd)
OG_EW_DECLARE_KERNEL64(swiglu_bwd)
OG_EW_DECLARE_KERNEL64(geglu_fwd)
OG_EW_DECLARE_KERNEL64(geglu_bwd)

#endif
