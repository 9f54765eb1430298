/* Add kernels: fp32 and fused 16-bit compute functions for the elementwise engine, one build per
 * ISA (OG_EW_KERNEL3).
 *   og_add:   in = {self, other}  out = {self + alpha * other}   (one fused multiply-add)
 *   og_adds:  in = {self}         out = {self + alpha * other}   (other a scalar parameter) */
#ifndef OG_ADD_KERNEL_H
#define OG_ADD_KERNEL_H

#include "engine/elementwise.h"

typedef struct og_add_params {
    float alpha;
    float other;             // og_adds only
    double alpha64, other64; // the float64 kernel's
} og_add_params;

OG_EW_DECLARE_KERNEL3(add)
OG_EW_DECLARE_KERNEL3(adds)

#endif
