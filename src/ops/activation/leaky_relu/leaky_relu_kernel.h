/* LeakyRelu / LeakyReluBackward kernels (leaky_relu_kernel_simd.c), one build per ISA.
 *
 *   leaky_relu_fwd:  in = {x}      out = {y}    y  = x > 0 ? x : x * slope
 *   leaky_relu_bwd:  in = {g, x}   out = {dx}   dx = x > 0 ? g : g * slope
 * (x may be the forward's result when selfIsResult: with slope >= 0 it has x's sign.) */
#ifndef OG_LEAKY_RELU_KERNEL_H
#define OG_LEAKY_RELU_KERNEL_H

#include "engine/elementwise.h"

typedef struct og_leaky_relu_params {
    float slope;
    double slope64; // the float64 kernel's
} og_leaky_relu_params;

OG_EW_DECLARE_KERNEL3(leaky_relu_fwd)
OG_EW_DECLARE_KERNEL3(leaky_relu_bwd)

#endif
