/* The GEMM micro-kernels, compiled once per ISA (see CMakeLists.txt). One kernel computes an
 * MR x NR tile of C from a k-major A panel (MR values per k) and a k-major B panel (NR values per
 * k): the MR x NR/VLEN accumulators stay in registers for the whole K slice, each k broadcasts MR
 * values of A against NR/VLEN vectors of B. Every accumulator is one FMA chain in k order from
 * 0, added to C's partial sum at the end (engine/gemm.h, "Determinism"), on every ISA.
 *
 *   AVX-512  12 x 32: 24 accumulators + 2 B vectors + 1 broadcast of the 32 zmm registers
 *   AVX2      4 x 24: 12 accumulators + 3 B vectors + 1 broadcast of the 16 ymm registers (4 x 24
 *             ran 5% faster than 6 x 16 on Zen3: fewer broadcasts per FMA)
 *   scalar    4 x 4:  the reference (fmaf) */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/gemm.h"
#include "engine/simd/vec.h"

#if defined(OG_ISA_AVX512)
#define MR 12
#define NV 2
#elif defined(OG_ISA_AVX2)
#define MR 4
#define NV 3
#else
#define MR 4
#define NV 4
#endif
#define NR (NV * VLEN)

void OG_FN(og_gemm_ukr)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                        bool accumulate);
const int OG_FN(og_gemm_mr) = MR;
const int OG_FN(og_gemm_nr) = NR;

void OG_FN(og_gemm_ukr)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                        bool accumulate) {
    vf acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int j = 0; j < NV; j++) acc[i][j] = vset(0.0f);
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; k++) {
        vf bv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; j++) bv[j] = vload(b + j * VLEN);
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++) {
            vf ai = vset(a[i]);
#pragma GCC unroll 4
            for (int j = 0; j < NV; j++) acc[i][j] = vfma(ai, bv[j], acc[i][j]);
        }
        a += MR;
        b += NR;
    }
    if (accumulate) {
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
            for (int j = 0; j < NV; j++) acc[i][j] = vadd(vload(c + i * ldc + j * VLEN), acc[i][j]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int j = 0; j < NV; j++) vstore(c + i * ldc + j * VLEN, acc[i][j]);
}

// The float64 loop's step (gemm.h): vectorized by the compiler at the build's width, fma exact.
void OG_FN(og_gemm_axpy64)(int64_t n, double a, const double *x, double *y) {
    for (int64_t j = 0; j < n; j++) y[j] = fma(a, x[j], y[j]);
}
