/* BatchNorm row kernels (see batch_norm_rows.h), written once against vec.h and compiled per ISA.
 *
 * Every sum over a row is taken in 16 double lanes, element i widened (exactly) into lane i % 16
 * in increasing i (one AVX-512 vector, two AVX2 vectors or 16 scalars per group of 16), the
 * tail lane by lane with the same operations, then the lanes by the tree
 * ((l0 + l1) + (l2 + l3)) + ... : one order whatever VLEN is, so the bits do not depend on the
 * ISA. In double the row sums are exact to about 2^-50 relative before their one rounding to fp32
 * (a row statistic). */
#include <math.h>
#include <string.h>

#include "engine/simd/map64.h"
#include "engine/simd/vec.h"
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

// mean_r and M2_r = sum (x - mean_r)^2 (two passes over the row, the second in cache: no
// cancellation of sum x^2 - S mean^2); mean_r is the double mean rounded once.
void OG_FN(og_bn_row_stat)(size_t n, const float *const *in, float *const *out, const void *p,
                           float *stats) {
    (void)out, (void)p;
    const float *x = in[0];
    vd acc[NV];
    double l[LANES];
    for (int j = 0; j < NV; j++) acc[j] = vdset(0.0);
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < NV; j++) acc[j] = vdadd(acc[j], vwiden(vload(x + i + j * VLEN)));
    lanes_out(acc, l);
    for (size_t k = 0; i + k < n; k++) l[k] = l[k] + (double)x[i + k];
    double mean = tree16d(l) / (double)n;
    vd nm = vdset(-mean);
    for (int j = 0; j < NV; j++) acc[j] = vdset(0.0);
    for (i = 0; i + LANES <= n; i += LANES)
        for (int j = 0; j < NV; j++) {
            vd d = vdadd(vwiden(vload(x + i + j * VLEN)), nm);
            acc[j] = vdfma(d, d, acc[j]);
        }
    lanes_out(acc, l);
    for (size_t k = 0; i + k < n; k++) {
        double d = (double)x[i + k] + -mean;
        l[k] = fma(d, d, l[k]);
    }
    stats[0] = (float)mean;
    stats[1] = (float)tree16d(l);
}

// sum dy and sum dy (x - x0) in one pass over dy and x, x0 = x[0] (exact; the per-channel
// combine recentres on the mean: sum dy (x - mean) = sum dy (x - x0) + (x0 - mean) sum dy).
void OG_FN(og_bn_row_dsum)(size_t n, const float *const *in, float *const *out, const void *p,
                           float *stats) {
    (void)out, (void)p;
    const float *dy = in[0], *x = in[1];
    double x0 = n ? (double)x[0] : 0.0;
    vd a1[NV], a2[NV], nx0 = vdset(-x0);
    double l1[LANES], l2[LANES];
    for (int j = 0; j < NV; j++) a1[j] = vdset(0.0), a2[j] = vdset(0.0);
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < NV; j++) {
            vd g = vwiden(vload(dy + i + j * VLEN));
            vd d = vdadd(vwiden(vload(x + i + j * VLEN)), nx0);
            a1[j] = vdadd(a1[j], g);
            a2[j] = vdfma(g, d, a2[j]);
        }
    lanes_out(a1, l1);
    lanes_out(a2, l2);
    for (size_t k = 0; i + k < n; k++) {
        double g = (double)dy[i + k], d = (double)x[i + k] + -x0;
        l1[k] = l1[k] + g;
        l2[k] = fma(g, d, l2[k]);
    }
    stats[0] = (float)tree16d(l1);
    stats[1] = (float)tree16d(l2);
    stats[2] = (float)x0;
}

// y = (x - mean) scale (+ shift): the arithmetic of og_bn_norm / og_bn_norm_nob.
void OG_FN(og_bn_row_norm)(size_t n, const float *const *in, float *const *out, const void *p,
                           float *stats) {
    const og_bn_row_params *q = p;
    const float *x = in[0];
    float *y = out[0], m = stats[0], s = stats[1];
    vf vm = vset(m), vs = vset(s);
    size_t i = 0;
    if (q->has_shift) {
        float t = stats[2];
        vf vt = vset(t);
        for (; i + VLEN <= n; i += VLEN) vstore(y + i, vfma(vsub(vload(x + i), vm), vs, vt));
        for (; i < n; i++) y[i] = fmaf(x[i] - m, s, t);
    } else {
        for (; i + VLEN <= n; i += VLEN) vstore(y + i, vmul(vsub(vload(x + i), vm), vs));
        for (; i < n; i++) y[i] = (x[i] - m) * s;
    }
}

// dx = a dy + (b (x - mean) + c): the arithmetic of og_bn_dx, its operands per row.
void OG_FN(og_bn_row_dx)(size_t n, const float *const *in, float *const *out, const void *p,
                         float *stats) {
    (void)p;
    const float *dy = in[0], *x = in[1];
    float *dx = out[0], m = stats[0], a = stats[1], b = stats[2], c = stats[3];
    vf vm = vset(m), va = vset(a), vb = vset(b), vc = vset(c);
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN)
        vstore(dx + i, vfma(va, vload(dy + i), vfma(vb, vsub(vload(x + i), vm), vc)));
    for (; i < n; i++) dx[i] = fmaf(a, dy[i], fmaf(b, x[i] - m, c));
}

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
