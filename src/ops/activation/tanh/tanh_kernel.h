/* Tanh kernels: fp32 compute functions for the elementwise engine, one build per ISA.
 *
 *   tanh_fwd:  in = {x}      out = {y}    y = tanh(x)
 *   tanh_bwd:  in = {g, y}   out = {dx}   dx = g * (1 - y^2), from the forward's output y */
#ifndef OG_TANH_KERNEL_H
#define OG_TANH_KERNEL_H

#include "ops/activation/sigmoid/sigmoid_kernel.h"

OG_EW_DECLARE_KERNEL3(tanh_fwd) // with fused bf16 / fp16 kernels
OG_EW_DECLARE_KERNEL3(tanh_bwd)

#endif
