/* Sigmoid kernels: fp32 compute functions for the elementwise engine, one build per ISA.
 *
 *   sigmoid_fwd:  in = {x}      out = {y}    y = 1 / (1 + e^-x)
 *   sigmoid_bwd:  in = {g, y}   out = {dx}   dx = g * y * (1 - y), from the forward's output y
 *
 * OG_ACT_DECLARE_KERNEL(name) declares og_<name>__{scalar,avx2,avx512} and the table
 * og_<name>_kernels[] indexed by opgrad_isa (defined in the operator's _api.c); the other
 * operators of the family (tanh, silu, gelu, softplus) use it too. */
#ifndef OG_SIGMOID_KERNEL_H
#define OG_SIGMOID_KERNEL_H

#include "engine/elementwise.h"

#define OG_ACT_DECLARE_KERNEL(name)                                                                \
    void og_##name##__scalar(size_t n, const float *const *in, float *const *out, const void *p);  \
    void og_##name##__avx2(size_t n, const float *const *in, float *const *out, const void *p);    \
    void og_##name##__avx512(size_t n, const float *const *in, float *const *out, const void *p);  \
    extern const og_ew_compute_fn og_##name##_kernels[OPGRAD_ISA_COUNT];

#define OG_ACT_DEFINE_KERNEL_TABLE(name)                                                           \
    const og_ew_compute_fn og_##name##_kernels[OPGRAD_ISA_COUNT] = {                               \
        og_##name##__scalar, og_##name##__avx2, og_##name##__avx512}

OG_EW_DECLARE_KERNEL3(sigmoid_fwd) // with fused bf16 / fp16 kernels
OG_EW_DECLARE_KERNEL3(sigmoid_bwd)

#endif
