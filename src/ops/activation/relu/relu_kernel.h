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
} og_threshold_params;

#define OG_DECLARE_RELU(sfx)                                                                    \
    void og_relu_fwd__##sfx(size_t n, const float *const *in, float *const *out, const void *p); \
    void og_threshold_bwd__##sfx(size_t n, const float *const *in, float *const *out,          \
                                 const void *p);
OG_DECLARE_RELU(scalar)
OG_DECLARE_RELU(avx2)
OG_DECLARE_RELU(avx512)

extern const og_ew_compute_fn og_relu_fwd_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_threshold_bwd_kernels[OPGRAD_ISA_COUNT];

#endif
