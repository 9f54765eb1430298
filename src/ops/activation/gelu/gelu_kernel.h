/* GELU kernels: fp32 compute functions for the elementwise engine, one build per ISA.
 *
 *   gelu_tanh_fwd:  in = {x}     out = {y}    y = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 *   gelu_tanh_bwd:  in = {g, x}  out = {dx}   dx = g * d/dx of the above
 *   gelu_erf_fwd:   in = {x}     out = {y}    y = x Phi(x) = x/2 (1 + erf(x / sqrt 2))
 *   gelu_erf_bwd:   in = {g, x}  out = {dx}   dx = g (Phi(x) + x phi(x)) */
#ifndef OG_GELU_KERNEL_H
#define OG_GELU_KERNEL_H

#include "ops/activation/sigmoid/sigmoid_kernel.h"

OG_EW_DECLARE_KERNEL3(gelu_tanh_fwd)
OG_EW_DECLARE_KERNEL3(gelu_tanh_bwd)
OG_EW_DECLARE_KERNEL3(gelu_erf_fwd)
OG_EW_DECLARE_KERNEL3(gelu_erf_bwd)

#endif
