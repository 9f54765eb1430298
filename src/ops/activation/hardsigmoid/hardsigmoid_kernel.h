/* Hardsigmoid / HardsigmoidBackward kernels (hardsigmoid_kernel_simd.c), one build per ISA.
 *
 *   hardsigmoid_fwd:  in = {x}      out = {y}    y  = x >= 3 ? 1 : x <= -3 ? 0 : (x + 3) / 6
 *   hardsigmoid_bwd:  in = {g, x}   out = {dx}   dx = -3 < x < 3 ? g / 6 : 0
 */
#ifndef OG_HARDSIGMOID_KERNEL_H
#define OG_HARDSIGMOID_KERNEL_H

#include "engine/elementwise.h"

OG_EW_DECLARE_KERNEL3(hardsigmoid_fwd)
OG_EW_DECLARE_KERNEL3(hardsigmoid_bwd)

#endif
