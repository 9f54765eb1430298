/* Mul kernels: fp32 compute functions for the elementwise engine (and maps of the reduction
 * engine), one build per ISA.
 *   og_mul:   in = {self, other}  out = {self * other}
 *   og_muls:  in = {self}         out = {self * other}   (other a scalar parameter) */
#ifndef OG_MUL_KERNEL_H
#define OG_MUL_KERNEL_H

#include "engine/elementwise.h"

typedef struct og_muls_params {
    float other;
    double other64; // the float64 kernel's
} og_muls_params;

OG_EW_DECLARE_KERNEL3(mul)
OG_EW_DECLARE_KERNEL3(muls)

#endif
