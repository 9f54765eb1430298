/* BatchNorm / GroupNorm per-channel coefficient kernels (see batch_norm_kernel.h): plain C in
 * double, rounded once to fp32, the same function at every ISA level (they see C or N * group
 * values, so vectors would buy nothing, and one function cannot differ across levels). */
#include <math.h>

#include "ops/batch_norm/batch_norm_kernel.h"

static void bn_rstd(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++) out[0][i] = (float)(1.0 / sqrt((double)in[0][i] + q->eps));
}

static void bn_running(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++)
        out[0][i] =
            (float)((1.0 - q->momentum) * in[0][i] + q->momentum * (q->factor * (double)in[1][i]));
}

static void bn_copy(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    for (size_t i = 0; i < n; i++) out[0][i] = in[0][i];
}

static void bn_bc(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++) {
        double a = in[0][i], r = in[1][i], s1 = in[2][i], s2 = in[3][i];
        out[0][i] = (float)(-a * r * r * s2 * q->inv_k);
        out[1][i] = (float)(-a * s1 * q->inv_k);
    }
}

#define ALL_LEVELS(f)                                                                              \
    {                                                                                              \
        [OPGRAD_ISA_SCALAR] = f, [OPGRAD_ISA_AVX2] = f, [OPGRAD_ISA_AVX512] = f,                   \
        [OPGRAD_ISA_AVX512_BF16] = f, [OPGRAD_ISA_AVX512_FP16] = f, [OPGRAD_ISA_AMX] = f,          \
    }
_Static_assert(OPGRAD_ISA_COUNT == 6, "a new ISA level needs its entry in ALL_LEVELS");

const og_ew_compute_fn og_bn_rstd_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_rstd);
const og_ew_compute_fn og_bn_running_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_running);
const og_ew_compute_fn og_bn_copy_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_copy);
const og_ew_compute_fn og_bn_bc_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_bc);
