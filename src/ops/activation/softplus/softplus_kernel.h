/* Softplus kernels: fp32 compute functions for the elementwise engine, one build per ISA.
 *
 *   softplus_fwd:  in = {x}     out = {y}    y = log(1 + e^(beta x)) / beta  if beta x <= threshold
 *                                            y = x                           otherwise
 *   softplus_bwd:  in = {g, x}  out = {dx}   dx = g sigmoid(beta x)  if beta x <= threshold
 *                                            dx = g                  otherwise
 * params: og_softplus_params (beta x is the float product, compared as ops-nn and PyTorch do). */
#ifndef OG_SOFTPLUS_KERNEL_H
#define OG_SOFTPLUS_KERNEL_H

#include "ops/activation/sigmoid/sigmoid_kernel.h"

typedef struct og_softplus_params {
    float beta, threshold;
    double beta64, threshold64; // the float64 kernel's
} og_softplus_params;

OG_EW_DECLARE_KERNEL3(softplus_fwd)
OG_EW_DECLARE_KERNEL3(softplus_bwd)

#endif
