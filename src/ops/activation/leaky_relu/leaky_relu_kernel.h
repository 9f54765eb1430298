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
} og_leaky_relu_params;

#define OG_DECLARE_LEAKY_RELU(sfx)                                                              \
    void og_leaky_relu_fwd__##sfx(size_t n, const float *const *in, float *const *out,         \
                                  const void *p);                                               \
    void og_leaky_relu_bwd__##sfx(size_t n, const float *const *in, float *const *out,         \
                                  const void *p);
OG_DECLARE_LEAKY_RELU(scalar)
OG_DECLARE_LEAKY_RELU(avx2)
OG_DECLARE_LEAKY_RELU(avx512)

extern const og_ew_compute_fn og_leaky_relu_fwd_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_leaky_relu_bwd_kernels[OPGRAD_ISA_COUNT];

#endif
