/* SiLU kernels: fp32 compute functions for the elementwise engine, one build per ISA.
 *
 *   silu_fwd:  in = {x}      out = {y}    y = x * sigmoid(x)
 *   silu_bwd:  in = {g, x}   out = {dx}   dx = g * sigmoid(x) (1 + x (1 - sigmoid(x))) */
#ifndef OG_SILU_KERNEL_H
#define OG_SILU_KERNEL_H

#include "ops/activation/sigmoid/sigmoid_kernel.h"

OG_EW_DECLARE_KERNEL3(silu_fwd) // with fused bf16 / fp16 kernels
OG_EW_DECLARE_KERNEL3(silu_bwd)

#endif
