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

OG_EW_DECLARE_KERNEL3(mish_fwd) // with fused bf16 / fp16 kernels
OG_EW_DECLARE_KERNEL3(mish_bwd)
OG_EW_DECLARE_KERNEL(mish_fwd_tanhx)
OG_EW_DECLARE_KERNEL64(mish_fwd_tanhx)
OG_EW_DECLARE_KERNEL(mish_bwd_tanhx)
OG_EW_DECLARE_KERNEL64(mish_bwd_tanhx)

#endif
