/* Add kernels: fp32 compute functions for the elementwise engine, one build per ISA.
 *   og_add:   in = {self, other}  out = {self + alpha * other}   (one fused multiply-add)
 *   og_adds:  in = {self}         out = {self + alpha * other}   (other a scalar parameter) */
#ifndef OG_ADD_KERNEL_H
#define OG_ADD_KERNEL_H

#include "engine/elementwise.h"

typedef struct og_add_params {
    float alpha;
    float other; // og_adds only
} og_add_params;

#define OG_DECLARE_ADD(sfx)                                                                     \
    void og_add__##sfx(size_t n, const float *const *in, float *const *out, const void *p);    \
    void og_adds__##sfx(size_t n, const float *const *in, float *const *out, const void *p);
OG_DECLARE_ADD(scalar)
OG_DECLARE_ADD(avx2)
OG_DECLARE_ADD(avx512)

extern const og_ew_compute_fn og_add_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_adds_kernels[OPGRAD_ISA_COUNT];

#endif
