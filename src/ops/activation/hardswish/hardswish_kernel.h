/* Hardswish / HardswishBackward kernels (hardswish_kernel_simd.c), one build per ISA.
 *
 *   hardswish_fwd:  in = {x}      out = {y}    y  = x > 3 ? x : x < -3 ? -0 : x (x + 3) / 6
 *   hardswish_bwd:  in = {g, x}   out = {dx}   dx = x < -3 ? 0 : x > 3 ? g : g (x / 3 + 1/2)
 */
#ifndef OG_HARDSWISH_KERNEL_H
#define OG_HARDSWISH_KERNEL_H

#include "engine/elementwise.h"

OG_EW_DECLARE_KERNEL3(hardswish_fwd)
OG_EW_DECLARE_KERNEL3(hardswish_bwd)

#endif
