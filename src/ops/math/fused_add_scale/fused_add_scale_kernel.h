/* FusedAddScale kernel: fp32 compute function for the elementwise engine (and a map of the
 * reduction engine), one build per ISA.
 *   og_fused_add_scale:  in = {a, b, c}  out = {(a + b) * c}
 * The backward reuses it as g * (x + bias) with in = {x, bias, g}, and og_mul for g * scale. */
#ifndef OG_FUSED_ADD_SCALE_KERNEL_H
#define OG_FUSED_ADD_SCALE_KERNEL_H

#include "engine/elementwise.h"

#define OG_DECLARE_FUSED_ADD_SCALE(sfx)                                                            \
    void og_fused_add_scale__##sfx(size_t n, const float *const *in, float *const *out,            \
                                   const void *p);
OG_DECLARE_FUSED_ADD_SCALE(scalar)
OG_DECLARE_FUSED_ADD_SCALE(avx2)
OG_DECLARE_FUSED_ADD_SCALE(avx512)

extern const og_ew_compute_fn og_fused_add_scale_kernels[OPGRAD_ISA_COUNT];

#endif
