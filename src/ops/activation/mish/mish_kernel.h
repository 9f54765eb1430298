/* Mish kernels: fp32 compute functions for the elementwise engine, one build per ISA.
 *
 *   mish_fwd:            in = {x}           out = {y}
 *   mish_fwd_tanhx:      in = {x}           out = {y, t}      t = tanh(softplus(x))
 *   mish_bwd:            in = {g, x}        out = {dx}        dx = g * mish'(x)
 *   mish_bwd_tanhx:      in = {g, x, t}     out = {dx}        dx = g * (t + x sigmoid(x) (1 - t^2))
 */
#ifndef OG_MISH_KERNEL_H
#define OG_MISH_KERNEL_H

#include "engine/elementwise.h"

#define OG_DECLARE_MISH_TANHX(sfx)                                                                 \
    void og_mish_fwd_tanhx__##sfx(size_t n, const float *const *in, float *const *out,             \
                                  const void *p);                                                  \
    void og_mish_bwd_tanhx__##sfx(size_t n, const float *const *in, float *const *out,             \
                                  const void *p);
OG_DECLARE_MISH_TANHX(scalar)
OG_DECLARE_MISH_TANHX(avx2)
OG_DECLARE_MISH_TANHX(avx512)

OG_EW_DECLARE_KERNEL3(mish_fwd) // with fused bf16 / fp16 kernels
OG_EW_DECLARE_KERNEL3(mish_bwd)
extern const og_ew_compute_fn og_mish_fwd_tanhx_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_mish_bwd_tanhx_kernels[OPGRAD_ISA_COUNT];

#endif
