/* Hardswish / HardswishBackward kernels (hardswish_kernel_simd.c), one build per ISA.
 *
 *   hardswish_fwd:  in = {x}      out = {y}    y  = x > 3 ? x : x < -3 ? -0 : x (x + 3) / 6
 *   hardswish_bwd:  in = {g, x}   out = {dx}   dx = x < -3 ? 0 : x > 3 ? g : g (x / 3 + 1/2)
 */
#ifndef OG_HARDSWISH_KERNEL_H
#define OG_HARDSWISH_KERNEL_H

#include "engine/elementwise.h"

#define OG_DECLARE_HARDSWISH(sfx)                                                               \
    void og_hardswish_fwd__##sfx(size_t n, const float *const *in, float *const *out,          \
                                 const void *p);                                                \
    void og_hardswish_bwd__##sfx(size_t n, const float *const *in, float *const *out,          \
                                 const void *p);
OG_DECLARE_HARDSWISH(scalar)
OG_DECLARE_HARDSWISH(avx2)
OG_DECLARE_HARDSWISH(avx512)

extern const og_ew_compute_fn og_hardswish_fwd_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_hardswish_bwd_kernels[OPGRAD_ISA_COUNT];

#endif
