/* Mul kernels: fp32 compute functions for the elementwise engine (and maps of the reduction
 * engine), one build per ISA.
 *   og_mul:   in = {self, other}  out = {self * other}
 *   og_muls:  in = {self}         out = {self * other}   (other a scalar parameter) */
#ifndef OG_MUL_KERNEL_H
#define OG_MUL_KERNEL_H

#include "engine/elementwise.h"

typedef struct og_muls_params {
    float other;
} og_muls_params;

#define OG_DECLARE_MUL(sfx)                                                                     \
    void og_mul__##sfx(size_t n, const float *const *in, float *const *out, const void *p);    \
    void og_muls__##sfx(size_t n, const float *const *in, float *const *out, const void *p);
OG_DECLARE_MUL(scalar)
OG_DECLARE_MUL(avx2)
OG_DECLARE_MUL(avx512)

extern const og_ew_compute_fn og_mul_kernels[OPGRAD_ISA_COUNT];
extern const og_ew_compute_fn og_muls_kernels[OPGRAD_ISA_COUNT];

#endif
