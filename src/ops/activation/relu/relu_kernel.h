/* Relu / ThresholdBackward kernels: fp32 compute functions for the elementwise engine, one build
 * per ISA (relu_kernel_simd.c).
 *
 *   relu_fwd:           in = {x}        out = {y}    y = max(0, x) as PyTorch's clamp_min: NaN
 *                                                    and -0 pass through unchanged
 *   threshold_bwd:      in = {g, x}     out = {dx}   dx = x > threshold ? g : 0
 *                                                    (params: og_threshold_params)
 */
#ifndef OG_RELU_KERNEL_H
#define OG_RELU_KERNEL_H

#include "engine/elementwise.h"

typedef struct og_threshold_params {
    float threshold;
    double threshold64; // the float64 kernel's
} og_threshold_params;

OG_EW_DECLARE_KERNEL3(relu_fwd)
OG_EW_DECLARE_KERNEL3(threshold_bwd)

#endif
