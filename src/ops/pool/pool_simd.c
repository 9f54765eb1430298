/* The pooling family's inner loops (pool_kernel.h), compiled once per ISA level, for fp32 and
 * float64 values. The strides 1 and 2 (the common pools) get loops of their own, so that the
 * compiler vectorises them with a constant stride (stride 2: two loads and a shuffle instead of a
 * gather). */
#include "engine/simd/vec.h"
#include "ops/pool/pool_kernel.h"

// One max tap at a constant stride S (0: the run-time stride s), over values of type T.
#define MAX_LOOP(T, S)                                                                             \
    for (int64_t ow = 0; ow < n; ow++) {                                                           \
        int64_t k = ow * (S ? S : s);                                                              \
        T v = x[k], mo = m[ow];                                                                    \
        int32_t io = id[ow];                                                                       \
        int take = (v > mo) | (v != v) | (io < 0);                                                 \
        m[ow] = take ? v : mo;                                                                     \
        id[ow] = take ? pos + (int32_t)k : io;                                                     \
    }

// The max, sum and scatter taps over values of type T, named og_pool_{max,sum,add}SFX: float
// (no suffix) and double (64) run the same loops, so the float64 taps take the same maxima and add
// in the same order as the fp32 ones.
#define POOL_TAPS(T, SFX)                                                                          \
    void OG_FN(og_pool_max##SFX)(const T *restrict x, int64_t s, int64_t n, int32_t pos,           \
                                 T *restrict m, int32_t *restrict id) {                            \
        if (s == 1)                                                                                \
            MAX_LOOP(T, 1)                                                                         \
        else if (s == 2)                                                                           \
            MAX_LOOP(T, 2)                                                                         \
        else                                                                                       \
            MAX_LOOP(T, 0)                                                                         \
    }                                                                                              \
                                                                                                   \
    void OG_FN(og_pool_sum##SFX)(const T *restrict x, int64_t s, int64_t n, T *restrict acc) {     \
        if (s == 1)                                                                                \
            for (int64_t ow = 0; ow < n; ow++) acc[ow] += x[ow];                                   \
        else if (s == 2)                                                                           \
            for (int64_t ow = 0; ow < n; ow++) acc[ow] += x[2 * ow];                               \
        else                                                                                       \
            for (int64_t ow = 0; ow < n; ow++) acc[ow] += x[ow * s];                               \
    }                                                                                              \
                                                                                                   \
    void OG_FN(og_pool_add##SFX)(T *restrict g, int64_t s, int64_t n, const T *restrict q) {       \
        if (s == 1)                                                                                \
            for (int64_t ow = 0; ow < n; ow++) g[ow] += q[ow];                                     \
        else if (s == 2)                                                                           \
            for (int64_t ow = 0; ow < n; ow++) g[2 * ow] += q[ow];                                 \
        else                                                                                       \
            for (int64_t ow = 0; ow < n; ow++) g[ow * s] += q[ow];                                 \
    }

POOL_TAPS(float, )
POOL_TAPS(double, 64)

// The lanes are explicit, so every ISA adds the same values in the same order (the AVX2 / AVX-512
// builds keep the 8 lanes in one vector).
static inline float run8(const float *restrict x, int64_t n) {
    float s = 0.0f;
    if (n < 16) {
        for (int64_t i = 0; i < n; i++) s += x[i];
        return s;
    }
    float l[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) l[k] += x[i + k];
    for (int k = 0; i < n; i++, k++) l[k] += x[i];
    return ((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7]));
}

float OG_FN(og_pool_run)(const float *restrict x, int64_t n) { return run8(x, n); }

void OG_FN(og_pool_runs)(const float *restrict x, int64_t n, int64_t xs, int64_t count, float d1,
                         float d2, float *restrict y, int64_t ys) {
    for (int64_t p = 0; p < count; p++) y[p * ys] = run8(x + p * xs, n) / d1 / d2;
}

// float64 runs: in order into a compensated sum (Neumaier's, engine/simd/map64.h), one element at
// a time on every ISA, so every build adds the same values the same way.
void OG_FN(og_pool_run64)(const double *restrict x, int64_t n, og_ksum *acc) {
    for (int64_t i = 0; i < n; i++) og_ksum_add(acc, x[i]);
}
