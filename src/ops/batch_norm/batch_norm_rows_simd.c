/* BatchNorm row kernels (see batch_norm_rows.h), written once against vec.h and compiled per ISA.
 *
 * Every sum over a row is taken in 16 double lanes, element i widened (exactly) into lane i % 16
 * in increasing i (one AVX-512 vector, two AVX2 vectors or 16 scalars per group of 16), the
 * tail lane by lane with the same operations, then the lanes by the tree
 * ((l0 + l1) + (l2 + l3)) + ... : one order whatever VLEN is, so the bits do not depend on the
 * ISA. In double the row sums are exact to about 2^-50 relative before their one rounding to fp32
 * (a row statistic). bf16 / fp16 rows are read and written in place by the same arithmetic on
 * widened values (batch_norm_rows.inc), so they give the bits of the fp32 kernels between a
 * widening CopyIn and a rounding CopyOut. */
#include <math.h>
#include <string.h>

#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/batch_norm/batch_norm_rows.h"

#define LANES 16
#define NV (LANES / VLEN) // vectors per group of 16 elements

_Static_assert(sizeof(vd) == VLEN * sizeof(double), "vd is VLEN doubles");

static inline double tree16d(const double *l) {
    double s0 = l[0] + l[1], s1 = l[2] + l[3], s2 = l[4] + l[5], s3 = l[6] + l[7];
    double s4 = l[8] + l[9], s5 = l[10] + l[11], s6 = l[12] + l[13], s7 = l[14] + l[15];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

static inline void lanes_out(const vd *acc, double *l) {
    for (int j = 0; j < NV; j++) memcpy(l + j * VLEN, &acc[j], sizeof(vd));
}

// The kernels per element type (batch_norm_rows.inc, engine/simd/per_type.inc).
#define OG_PER_TYPE_INC "ops/batch_norm/batch_norm_rows.inc"
#include "engine/simd/per_type.inc"

// Entry points: og_<name> (fp32 rows, og_row_fn) and og_<name>_bf16 / _f16 (og_row16_fn, whose
// scratch row these kernels do not need), each calling row_<name>_<type>(n, the arguments).
#define BN_ROW_ENTRIES(name, ...)                                                                  \
    void OG_FN(og_bn_##name)(size_t n, const float *const *in, float *const *out, const void *p,   \
                             float *stats) {                                                       \
        (void)in, (void)out, (void)p;                                                              \
        name##_f32(n, __VA_ARGS__);                                                                \
    }                                                                                              \
    void OG_FN(og_bn_##name##_bf16)(size_t n, const uint16_t *const *in, uint16_t *const *out,     \
                                    float *scratch, const void *p, float *stats) {                 \
        (void)in, (void)out, (void)scratch, (void)p;                                               \
        name##_bf16(n, __VA_ARGS__);                                                               \
    }                                                                                              \
    void OG_FN(og_bn_##name##_f16)(size_t n, const uint16_t *const *in, uint16_t *const *out,      \
                                   float *scratch, const void *p, float *stats) {                  \
        (void)in, (void)out, (void)scratch, (void)p;                                               \
        name##_f16(n, __VA_ARGS__);                                                                \
    }

BN_ROW_ENTRIES(row_stat, in[0], stats)
BN_ROW_ENTRIES(row_dsum, in[0], in[1], stats)
BN_ROW_ENTRIES(row_norm, in[0], out[0], p, stats)
BN_ROW_ENTRIES(row_dx, in[0], in[1], out[0], stats)

// ---- float64 twins: plain C in double, each sum compensated in increasing i (the same operations
// on every ISA build). The statistics stay double.

void OG_FN(og_bn_row_stat_f64)(size_t n, const double *const *in, double *const *out, const void *p,
                               double *stats) {
    (void)out, (void)p;
    const double *x = in[0];
    og_ksum s = {0, 0}, q = {0, 0};
    for (size_t i = 0; i < n; i++) og_ksum_add(&s, x[i]);
    double mean = n ? og_ksum_value(&s) / (double)n : 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - mean;
        og_ksum_add(&q, d * d);
    }
    stats[0] = mean;
    stats[1] = og_ksum_value(&q);
}

void OG_FN(og_bn_row_dsum_f64)(size_t n, const double *const *in, double *const *out, const void *p,
                               double *stats) {
    (void)out, (void)p;
    const double *dy = in[0], *x = in[1];
    double x0 = n ? x[0] : 0.0;
    og_ksum s1 = {0, 0}, s2 = {0, 0};
    for (size_t i = 0; i < n; i++) og_ksum_add(&s1, dy[i]), og_ksum_add(&s2, dy[i] * (x[i] - x0));
    stats[0] = og_ksum_value(&s1);
    stats[1] = og_ksum_value(&s2);
    stats[2] = x0;
}

void OG_FN(og_bn_row_norm_f64)(size_t n, const double *const *in, double *const *out, const void *p,
                               double *stats) {
    const og_bn_row_params *q = p;
    const double *x = in[0];
    double *y = out[0], m = stats[0], s = stats[1];
    if (q->has_shift)
        for (size_t i = 0; i < n; i++) y[i] = fma(x[i] - m, s, stats[2]);
    else
        for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * s;
}

void OG_FN(og_bn_row_dx_f64)(size_t n, const double *const *in, double *const *out, const void *p,
                             double *stats) {
    (void)p;
    const double *dy = in[0], *x = in[1];
    double *dx = out[0], m = stats[0], a = stats[1], b = stats[2], c = stats[3];
    for (size_t i = 0; i < n; i++) dx[i] = fma(a, dy[i], fma(b, x[i] - m, c));
}
