/* LayerNorm and RMSNorm row kernels, written once against vec.h and compiled per ISA.
 *
 * Bitwise identity across ISAs. Every operation is an IEEE operation of vec.h (fma written out,
 * -ffp-contract=off), and every sum over a row is taken in one fixed order whatever VLEN is (the
 * order of the softmax kernels): 16 lanes, element i added to lane i % 16 in increasing i (a
 * group of 16 elements is one AVX-512 vector, two AVX2 vectors or 16 scalars), each lane's float
 * partial sum moved into a double lane after every FLUSH_G groups counted from the row's start
 * and after the last one, a tail padded to a whole group with values whose contributions are
 * exact zeros, then the double lanes by the tree ((l0 + l1) + (l2 + l3)) + ... over l0..l15.
 * Error of a backward's sum of n contributions c: each float partial holds at most FLUSH_G values
 * (at most FLUSH_G - 1 roundings of 2^-24), the double adds are exact to 2^-53: within about
 * FLUSH_G 2^-24 sum |c| whatever n. The per-row scalars (mean, variance, rstd) are formed in
 * double from the sums, the same code on every ISA.
 *
 * LayerNorm forward (3 passes over the row, which stays in cache): mean = sum x / n and the
 * two-pass variance var = sum (x - mean)^2 / n (no cancellation of sum x^2 - n mean^2), both
 * in double lanes (see sum_x); rstd = 1 / sqrt(var + eps) in double, rounded once; mf = (float)
 * mean; y = (x - mf) rstd, then * gamma + beta (one fma when both). The saved mean is mf: the
 * backward forms xhat = (x - mf) rstd as the forward did.
 * RMSNorm forward (2 passes): ms = sum x^2 / n in double, rstd = 1 / sqrt(ms + eps);
 * y = (x rstd) gamma.
 * Backwards (2 passes): pass 1 forms xhat and g = dy gamma per element, the sums a = sum g
 * and b = sum g xhat (LayerNorm; RMSNorm only b), and adds dy xhat (and dy) into the row group's
 * column accumulators (engine/rows.h); pass 2 writes dx = rstd ((g - a / n) - xhat (b / n)). */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "engine/simd/map64.h"
#include "engine/simd/vec.h"
#include "ops/norm/norm_kernel.h"

#define LANES 16
#define NV (LANES / VLEN) // vectors per group of 16 elements
#define FLUSH_G 16        // groups per float partial sum

static inline double tree16d(const double *l) {
    double s0 = l[0] + l[1], s1 = l[2] + l[3], s2 = l[4] + l[5], s3 = l[6] + l[7];
    double s4 = l[8] + l[9], s5 = l[10] + l[11], s6 = l[12] + l[13], s7 = l[14] + l[15];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

_Static_assert(sizeof(vd) == VLEN * sizeof(double), "vd is VLEN doubles");

/// One fixed-order sum: float partial lanes and double lanes.
typedef struct lsum {
    vf part[NV];
    vd acc[NV];
} lsum;

static inline void ls_init(lsum *s) {
    for (int j = 0; j < NV; j++) s->part[j] = vset(0.0f), s->acc[j] = vdset(0.0);
}

static inline void ls_flush(lsum *s) {
    for (int j = 0; j < NV; j++) s->acc[j] = vdadd(s->acc[j], vwiden(s->part[j]));
    for (int j = 0; j < NV; j++) s->part[j] = vset(0.0f);
}

static inline double ls_total(lsum *s) {
    ls_flush(s);
    double l[LANES];
    for (int j = 0; j < NV; j++) memcpy(l + j * VLEN, &s->acc[j], sizeof(vd));
    return tree16d(l);
}

/// rest (< 16) values of p into t[16], padded with pad.
static inline void pad16(float *t, const float *p, size_t rest, float pad) {
    for (size_t k = 0; k < LANES; k++) t[k] = k < rest ? p[k] : pad;
}

// ---------------------------------------------------------------------------------------------
// Forwards

// The forwards' sums are taken in double lanes (each value widened, exactly): the mean and the
// variance are then exact to about 2^-50 relative, and mean and rstd, which the backward reads
// and the checker compares one by one, are within 0.5 ulp after their one rounding to float. A
// tail goes lane by lane through the stored lanes, with the vector code's operations.

/// sum x, x = a (+ b, each widened: the residual forms' x1 + x2 exactly, not its fp32 rounding).
static double sum_x(size_t n, const float *a, const float *b) {
    vd acc[NV];
    for (int j = 0; j < NV; j++) acc[j] = vdset(0.0);
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < NV; j++) {
            vd v = vwiden(vload(a + i + j * VLEN));
            if (b) v = vdadd(v, vwiden(vload(b + i + j * VLEN)));
            acc[j] = vdadd(acc[j], v);
        }
    double l[LANES];
    for (int j = 0; j < NV; j++) memcpy(l + j * VLEN, &acc[j], sizeof(vd));
    for (size_t k = 0; i + k < n; k++) {
        double v = (double)a[i + k];
        if (b) v = v + (double)b[i + k];
        l[k] = l[k] + v;
    }
    return tree16d(l);
}

/// sum (x - m)^2, x = a (+ b), x - m and the square (fma) in double.
static double sum_sq(size_t n, const float *a, const float *b, double m) {
    vd acc[NV], nm = vdset(-m);
    for (int j = 0; j < NV; j++) acc[j] = vdset(0.0);
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < NV; j++) {
            vd v = vwiden(vload(a + i + j * VLEN));
            if (b) v = vdadd(v, vwiden(vload(b + i + j * VLEN)));
            vd d = vdadd(v, nm);
            acc[j] = vdfma(d, d, acc[j]);
        }
    double l[LANES];
    for (int j = 0; j < NV; j++) memcpy(l + j * VLEN, &acc[j], sizeof(vd));
    for (size_t k = 0; i + k < n; k++) {
        double v = (double)a[i + k];
        if (b) v = v + (double)b[i + k];
        double d = v + -m;
        l[k] = fma(d, d, l[k]);
    }
    return tree16d(l);
}

/// dst = a + b (+ c), elementwise (c may be NULL).
static void add_rows(size_t n, const float *a, const float *b, const float *c, float *dst) {
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN) {
        vf v = vadd(vload(a + i), vload(b + i));
        vstore(dst + i, c ? vadd(v, vload(c + i)) : v);
    }
    for (; i < n; i++) { // the same two adds, one value at a time
        float v = a[i] + b[i];
        dst[i] = c ? v + c[i] : v;
    }
}

/// A residual form without a bias: x = x1 + x2 (add[0] + add[1]) into out[0] (and xOut, out[1]),
/// after the statistics were taken from x1 and x2 (an output may share x1's or x2's memory).
static const float *form_x(size_t n, const float *const *add, float *const *out,
                           const og_norm_params *p) {
    add_rows(n, add[0], add[1], NULL, out[0]);
    if (p->want_xout) memcpy(out[1], out[0], n * sizeof(float));
    return out[0];
}

/// y = (x - m) r [* gamma] [+ beta] for the VLEN values at offset i (pointers already offset).
static inline vf ln_y(vf x, vf m, vf r, const float *gm, const float *bt) {
    vf xh = vmul(vsub(x, m), r);
    if (gm && bt) return vfma(xh, vload(gm), vload(bt));
    if (gm) return vmul(xh, vload(gm));
    if (bt) return vadd(xh, vload(bt));
    return xh;
}

/// The statistics are taken over sa (+ sb): x itself, or a residual form's x1 + x2 exactly.
static void layer_norm_fwd(size_t n, const float *const *in, float *const *out,
                           const og_norm_params *p, float *stats, const float *sa, const float *sb,
                           const float *const *add) {
    const float *x = in[0];
    const float *gamma = p->has_gamma ? in[1] : NULL;
    const float *beta = p->has_beta ? in[1 + p->has_gamma] : NULL;
    float *y = out[0];
    double mean = sum_x(n, sa, sb) / (double)n;
    float mf = (float)mean;
    double var = sum_sq(n, sa, sb, mean) / (double)n;
    float rstd = (float)(1.0 / sqrt(var + p->eps));
    if (p->stats_mode == 0)
        stats[0] = mf, stats[1] = rstd;
    else
        stats[0] = rstd;
    if (add) x = form_x(n, add, out, p);
    vf m = vset(mf), r = vset(rstd);
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN)
        vstore(y + i, ln_y(vload(x + i), m, r, gamma ? gamma + i : NULL, beta ? beta + i : NULL));
    if (i < n) {
        size_t rest = n - i;
        float tx[VLEN] = {0}, tg[VLEN] = {0}, tb[VLEN] = {0}, ty[VLEN];
        for (size_t k = 0; k < rest; k++) {
            tx[k] = x[i + k];
            if (gamma) tg[k] = gamma[i + k];
            if (beta) tb[k] = beta[i + k];
        }
        vstore(ty, ln_y(vload(tx), m, r, gamma ? tg : NULL, beta ? tb : NULL));
        memcpy(y + i, ty, rest * sizeof(float));
    }
}

static void rms_norm_fwd(size_t n, const float *const *in, float *const *out,
                         const og_norm_params *p, float *stats, const float *sa, const float *sb,
                         const float *const *add) {
    const float *x = in[0], *gamma = in[1];
    float *y = out[0];
    double ms = sum_sq(n, sa, sb, 0.0) / (double)n;
    float rstd = (float)(1.0 / sqrt(ms + p->eps));
    stats[0] = rstd;
    if (add) x = form_x(n, add, out, p);
    vf r = vset(rstd);
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN) vstore(y + i, vmul(vmul(vload(x + i), r), vload(gamma + i)));
    if (i < n) {
        size_t rest = n - i;
        float tx[VLEN] = {0}, tg[VLEN] = {0}, ty[VLEN];
        for (size_t k = 0; k < rest; k++) tx[k] = x[i + k], tg[k] = gamma[i + k];
        vstore(ty, vmul(vmul(vload(tx), r), vload(tg)));
        memcpy(y + i, ty, rest * sizeof(float));
    }
}

// ---------------------------------------------------------------------------------------------
// Backwards

/// The per-element values of a backward at one vector: xhat and g = dy gamma.
static inline void bwd_vals(vf dy, vf x, const float *gm, vf m, vf r, vf *xh, vf *g) {
    *xh = vmul(vsub(x, m), r);
    *g = gm ? vmul(dy, vload(gm)) : dy;
}

/// Pass 1 of a backward over the VLEN values at offset `at` of the row (or of padded copies):
/// the sums (sa: g, sb: g xhat) and the column accumulators.
static inline void bwd_pass1_vec(const float *dy, const float *x, const float *gm, vf m, vf r,
                                 vf *pa, vf *pb, float *adg, float *adb, bool lane_a) {
    vf dyv = vload(dy), xh, g;
    bwd_vals(dyv, vload(x), gm, m, r, &xh, &g);
    if (lane_a) *pa = vadd(*pa, g);
    *pb = vfma(g, xh, *pb);
    if (adg) vstore(adg, vfma(dyv, xh, vload(adg)));
    if (adb) vstore(adb, vadd(vload(adb), dyv));
}

/// The backward of LayerNorm (centered: the mean term) or RMSNorm (m = 0, not centered).
static void norm_bwd(size_t n, const float *const *in, float *const *out, const og_norm_params *p,
                     const float *stats, float *const *acc, bool centered) {
    const float *dy = in[0], *x = in[1];
    const float *gamma = p->has_gamma ? in[2] : NULL;
    float mf = centered ? stats[0] : 0.0f, rstd = centered ? stats[1] : stats[0];
    float *adg = p->want_dgamma && acc ? acc[0] : NULL;
    float *adb = p->want_dbeta && acc ? acc[p->want_dgamma] : NULL;
    vf m = vset(mf), r = vset(rstd);
    lsum sa, sb;
    ls_init(&sa);
    ls_init(&sb);
    bool need_sums = p->want_dx;
    size_t i = 0, grp = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int j = 0; j < NV; j++) {
            size_t at = i + (size_t)j * VLEN;
            bwd_pass1_vec(dy + at, x + at, gamma ? gamma + at : NULL, m, r, &sa.part[j],
                          &sb.part[j], adg ? adg + at : NULL, adb ? adb + at : NULL, centered);
        }
        if (need_sums && ++grp % FLUSH_G == 0) ls_flush(&sa), ls_flush(&sb);
    }
    if (i < n) { // padded: dy = 0 and x = mean give g = 0, xhat = 0: zero contributions
        size_t rest = n - i;
        float tdy[LANES], tx[LANES], tg[LANES], tdg[LANES] = {0}, tdb[LANES] = {0};
        pad16(tdy, dy + i, rest, 0.0f);
        pad16(tx, x + i, rest, mf);
        if (gamma) pad16(tg, gamma + i, rest, 0.0f);
        if (adg) memcpy(tdg, adg + i, rest * sizeof(float));
        if (adb) memcpy(tdb, adb + i, rest * sizeof(float));
        for (int j = 0; j < NV; j++) {
            size_t at = (size_t)j * VLEN;
            bwd_pass1_vec(tdy + at, tx + at, gamma ? tg + at : NULL, m, r, &sa.part[j], &sb.part[j],
                          adg ? tdg + at : NULL, adb ? tdb + at : NULL, centered);
        }
        if (adg) memcpy(adg + i, tdg, rest * sizeof(float));
        if (adb) memcpy(adb + i, tdb, rest * sizeof(float));
    }
    if (!p->want_dx) return;
    float *dx = out[0];
    double inv_n = 1.0 / (double)n;
    vf ma = vset(centered ? (float)(ls_total(&sa) * inv_n) : 0.0f);
    vf mb = vset((float)(ls_total(&sb) * inv_n));
    // dx = rstd ((g - ma) - xhat mb)
    i = 0;
    for (; i + VLEN <= n; i += VLEN) {
        vf xh, g;
        bwd_vals(vload(dy + i), vload(x + i), gamma ? gamma + i : NULL, m, r, &xh, &g);
        vstore(dx + i, vmul(r, vfnmadd(xh, mb, vsub(g, ma))));
    }
    if (i < n) {
        size_t rest = n - i;
        float tdy[VLEN] = {0}, tx[VLEN] = {0}, tg[VLEN] = {0}, td[VLEN];
        for (size_t k = 0; k < rest; k++) {
            tdy[k] = dy[i + k], tx[k] = x[i + k];
            if (gamma) tg[k] = gamma[i + k];
        }
        vf xh, g;
        bwd_vals(vload(tdy), vload(tx), gamma ? tg : NULL, m, r, &xh, &g);
        vstore(td, vmul(r, vfnmadd(xh, mb, vsub(g, ma))));
        memcpy(dx + i, td, rest * sizeof(float));
    }
}

// ---------------------------------------------------------------------------------------------
// Entry points

void OG_FN(og_layer_norm_fwd)(size_t n, const float *const *in, float *const *out,
                              const void *params, float *stats) {
    if (n > 0) layer_norm_fwd(n, in, out, params, stats, in[0], NULL, NULL);
}

void OG_FN(og_rms_norm_fwd)(size_t n, const float *const *in, float *const *out, const void *params,
                            float *stats) {
    if (n > 0) rms_norm_fwd(n, in, out, params, stats, in[0], NULL, NULL);
}

void OG_FN(og_layer_norm_bwd)(size_t n, const float *const *in, float *const *out,
                              const void *params, float *stats) {
    if (n > 0) norm_bwd(n, in, out, params, stats, NULL, true);
}

void OG_FN(og_rms_norm_bwd)(size_t n, const float *const *in, float *const *out, const void *params,
                            float *stats) {
    if (n > 0) norm_bwd(n, in, out, params, stats, NULL, false);
}

void OG_FN(og_layer_norm_bwd_acc)(size_t n, const float *const *in, float *const *out,
                                  const void *params, float *stats, float *const *acc) {
    if (n > 0) norm_bwd(n, in, out, params, stats, acc, true);
}

void OG_FN(og_rms_norm_bwd_acc)(size_t n, const float *const *in, float *const *out,
                                const void *params, float *stats, float *const *acc) {
    if (n > 0) norm_bwd(n, in, out, params, stats, acc, false);
}

void OG_FN(og_norm_copy)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    if (out[0] != in[0]) memcpy(out[0], in[0], n * sizeof(float));
}

// ---------------------------------------------------------------------------------------------
// The residual forms: x = x1 + x2 (+ bias) is formed in fp32 into y's row (the output row the
// kernel owns: an fp32 buffer or an fp32 output), copied to xOut when asked for, and normalized
// in place (every pass reads element i before it writes it). Without a bias the statistics are
// taken first, over x1 + x2 formed in double (sum_x): mean and rstd are those of the exact sum,
// as the float64 reference's, and nothing reads x1 or x2 after y (which may share their memory)
// is written. With a bias, x is formed first and everything reads it. in = {x1, x2[, bias], then
// the operator's own inputs}; out = {y[, xOut]}.

void OG_FN(og_add_layer_norm_fwd)(size_t n, const float *const *in, float *const *out,
                                  const void *params, float *stats) {
    if (n == 0) return;
    const og_norm_params *p = params;
    const float *const *rest = in + p->add_mode; // gamma, beta
    if (p->add_mode == 3) { // with a bias: x formed first (fp32), everything read from it
        add_rows(n, in[0], in[1], in[2], out[0]);
        if (p->want_xout) memcpy(out[1], out[0], n * sizeof(float));
        const float *ins[3] = {out[0], rest[0], rest[1]};
        layer_norm_fwd(n, ins, out, p, stats, out[0], NULL, NULL);
        return;
    }
    const float *ins[3] = {NULL, rest[0], rest[1]}; // x: formed after the statistics
    layer_norm_fwd(n, ins, out, p, stats, in[0], in[1], in);
}

void OG_FN(og_add_rms_norm_fwd)(size_t n, const float *const *in, float *const *out,
                                const void *params, float *stats) {
    if (n == 0) return;
    const float *ins[2] = {NULL, in[2]};
    rms_norm_fwd(n, ins, out, params, stats, in[0], in[1], in);
}

/// dst = x1 + x2 - m, the sum's rounding error put back (TwoSum): s = fl(a + b) errs by e exactly,
/// and (s - m) + e rounds once. Rows of close values (x - m small next to x) would otherwise
/// lose x - m's digits to the rounding of x1 + x2 (a row of two values: all of them).
static inline vf centered_sum(vf a, vf b, vf m) {
    vf s = vadd(a, b), bb = vsub(s, a);
    vf e = vadd(vsub(a, vsub(s, bb)), vsub(b, bb));
    return vadd(vsub(s, m), e);
}

/// AddLayerNormGrad: in = {dy, x1, x2, gamma[, dsum]}, out = {dx}: x - mean (centered_sum) into
/// dx's row, the LayerNorm backward in place on it with mean 0, then dx += dsum.
static void add_layer_norm_bwd(size_t n, const float *const *in, float *const *out,
                               const og_norm_params *p, const float *stats, float *const *acc) {
    float *dx = out[0];
    const float *x1 = in[1], *x2 = in[2];
    vf m = vset(stats[0]);
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN) vstore(dx + i, centered_sum(vload(x1 + i), vload(x2 + i), m));
    if (i < n) {
        float ta[VLEN] = {0}, tb[VLEN] = {0}, td[VLEN];
        for (size_t k = 0; i + k < n; k++) ta[k] = x1[i + k], tb[k] = x2[i + k];
        vstore(td, centered_sum(vload(ta), vload(tb), m));
        memcpy(dx + i, td, (n - i) * sizeof(float));
    }
    const float *ins[3] = {in[0], dx, in[3]};
    const float centered[2] = {0.0f, stats[1]};
    norm_bwd(n, ins, out, p, centered, acc, true);
    if (!p->has_dsum) return;
    const float *ds = in[4];
    i = 0;
    for (; i + VLEN <= n; i += VLEN) vstore(dx + i, vadd(vload(dx + i), vload(ds + i)));
    for (; i < n; i++) dx[i] = dx[i] + ds[i];
}

void OG_FN(og_add_layer_norm_bwd)(size_t n, const float *const *in, float *const *out,
                                  const void *params, float *stats) {
    if (n > 0) add_layer_norm_bwd(n, in, out, params, stats, NULL);
}

void OG_FN(og_add_layer_norm_bwd_acc)(size_t n, const float *const *in, float *const *out,
                                      const void *params, float *stats, float *const *acc) {
    if (n > 0) add_layer_norm_bwd(n, in, out, params, stats, acc);
}

// ---------------------------------------------------------------------------------------------
// float64 rows: the formulas above in double, every sum compensated (og_ksum)

// y = (x - m) r [* gamma] [+ beta], stats {mean, rstd} (stats_mode 0) or {rstd}
static void layer_norm_fwd64(size_t n, const double *x, const double *gamma, const double *beta,
                             double *y, const og_norm_params *p, double *stats) {
    og_ksum s = {0, 0}, v = {0, 0};
    for (size_t i = 0; i < n; i++) og_ksum_add(&s, x[i]);
    double m = og_ksum_value(&s) / (double)n;
    for (size_t i = 0; i < n; i++) og_ksum_add(&v, (x[i] - m) * (x[i] - m));
    double r = 1 / sqrt(og_ksum_value(&v) / (double)n + p->eps);
    for (size_t i = 0; i < n; i++) {
        double t = (x[i] - m) * r;
        if (gamma) t *= gamma[i];
        y[i] = beta ? t + beta[i] : t;
    }
    if (p->stats_mode == 0)
        stats[0] = m, stats[1] = r;
    else
        stats[0] = r;
}

// y = (x r) gamma, r = 1 / sqrt(mean(x^2) + eps), stats {rstd}
static void rms_norm_fwd64(size_t n, const double *x, const double *gamma, double *y,
                           const og_norm_params *p, double *stats) {
    og_ksum s = {0, 0};
    for (size_t i = 0; i < n; i++) og_ksum_add(&s, x[i] * x[i]);
    double r = 1 / sqrt(og_ksum_value(&s) / (double)n + p->eps);
    for (size_t i = 0; i < n; i++) y[i] = (x[i] * r) * gamma[i];
    stats[0] = r;
}

// dx = r ((g - mean g) - xhat mean(g xhat)) (RMSNorm: no mean g term), g = dy gamma, xhat =
// (x - m) r; dgamma += dy xhat, dbeta += dy
static void norm_bwd64(size_t n, const double *dy, const double *x, const double *gamma, double m,
                       double r, bool centered, const og_norm_params *p, double *dx,
                       double *const *acc) {
    double *adg = p->want_dgamma && acc ? acc[0] : NULL;
    double *adb = p->want_dbeta && acc ? acc[p->want_dgamma] : NULL;
    og_ksum sa = {0, 0}, sb = {0, 0};
    for (size_t i = 0; i < n; i++) {
        double xh = (x[i] - m) * r, g = gamma ? dy[i] * gamma[i] : dy[i];
        og_ksum_add(&sa, g);
        og_ksum_add(&sb, g * xh);
        if (adg) adg[i] += dy[i] * xh;
        if (adb) adb[i] += dy[i];
    }
    if (!p->want_dx) return;
    double ma = centered ? og_ksum_value(&sa) / (double)n : 0.0;
    double mb = og_ksum_value(&sb) / (double)n;
    for (size_t i = 0; i < n; i++) {
        double xh = (x[i] - m) * r, g = gamma ? dy[i] * gamma[i] : dy[i];
        dx[i] = r * ((g - ma) - xh * mb);
    }
}

// (x1 + x2) in double, and for the residual backward x1 + x2 - m with the sum's rounding error
// put back (TwoSum), as the fp32 kernel does
static inline double centered_sum64(double a, double b, double m) {
    double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);
    return (s - m) + e;
}

void OG_FN(og_layer_norm_fwd_f64)(size_t n, const double *const *in, double *const *out,
                                  const void *params, double *stats) {
    const og_norm_params *p = params;
    if (n == 0) return;
    const double *gamma = p->has_gamma ? in[1] : NULL;
    const double *beta = p->has_beta ? in[1 + p->has_gamma] : NULL;
    layer_norm_fwd64(n, in[0], gamma, beta, out[0], p, stats);
}

void OG_FN(og_rms_norm_fwd_f64)(size_t n, const double *const *in, double *const *out,
                                const void *params, double *stats) {
    if (n > 0) rms_norm_fwd64(n, in[0], in[1], out[0], params, stats);
}

static void norm_bwd64_entry(size_t n, const double *const *in, double *const *out,
                             const og_norm_params *p, const double *stats, double *const *acc,
                             bool centered) {
    if (n == 0) return;
    double m = centered ? stats[0] : 0.0, r = centered ? stats[1] : stats[0];
    norm_bwd64(n, in[0], in[1], p->has_gamma ? in[2] : NULL, m, r, centered, p,
               p->want_dx ? out[0] : NULL, acc);
}

void OG_FN(og_layer_norm_bwd_f64)(size_t n, const double *const *in, double *const *out,
                                  const void *params, double *stats) {
    norm_bwd64_entry(n, in, out, params, stats, NULL, true);
}

void OG_FN(og_rms_norm_bwd_f64)(size_t n, const double *const *in, double *const *out,
                                const void *params, double *stats) {
    norm_bwd64_entry(n, in, out, params, stats, NULL, false);
}

void OG_FN(og_layer_norm_bwd_acc_f64)(size_t n, const double *const *in, double *const *out,
                                      const void *params, double *stats, double *const *acc) {
    norm_bwd64_entry(n, in, out, params, stats, acc, true);
}

void OG_FN(og_rms_norm_bwd_acc_f64)(size_t n, const double *const *in, double *const *out,
                                    const void *params, double *stats, double *const *acc) {
    norm_bwd64_entry(n, in, out, params, stats, acc, false);
}

// in = {x1, x2[, bias], gamma[, beta]}, out = {y[, xOut]}: x = x1 + x2 (+ bias) in double
void OG_FN(og_add_layer_norm_fwd_f64)(size_t n, const double *const *in, double *const *out,
                                      const void *params, double *stats) {
    const og_norm_params *p = params;
    if (n == 0) return;
    double *x = out[0]; // formed in y's row, normalized in place (read before written)
    for (size_t i = 0; i < n; i++)
        x[i] = p->add_mode == 3 ? (in[0][i] + in[1][i]) + in[2][i] : in[0][i] + in[1][i];
    if (p->want_xout) memcpy(out[1], x, n * sizeof(double));
    const double *const *rest = in + p->add_mode;
    const double *gamma = p->has_gamma ? rest[0] : NULL;
    const double *beta = p->has_beta ? rest[p->has_gamma] : NULL;
    layer_norm_fwd64(n, x, gamma, beta, out[0], p, stats);
}

void OG_FN(og_add_rms_norm_fwd_f64)(size_t n, const double *const *in, double *const *out,
                                    const void *params, double *stats) {
    const og_norm_params *p = params;
    if (n == 0) return;
    double *x = out[0];
    for (size_t i = 0; i < n; i++) x[i] = in[0][i] + in[1][i];
    if (p->want_xout) memcpy(out[1], x, n * sizeof(double));
    rms_norm_fwd64(n, x, in[2], out[0], p, stats);
}

// in = {dy, x1, x2, gamma[, dsum]}, out = {dx}: the LayerNorm backward at x - mean =
// centered_sum64(x1, x2, mean) (mean 0 from there), then dx += dsum
static void add_layer_norm_bwd64(size_t n, const double *const *in, double *const *out,
                                 const og_norm_params *p, const double *stats, double *const *acc) {
    if (n == 0) return;
    double *xc = out[0];
    for (size_t i = 0; i < n; i++) xc[i] = centered_sum64(in[1][i], in[2][i], stats[0]);
    norm_bwd64(n, in[0], xc, p->has_gamma ? in[3] : NULL, 0.0, stats[1], true, p, out[0], acc);
    if (p->has_dsum)
        for (size_t i = 0; i < n; i++) out[0][i] += in[4][i];
}

void OG_FN(og_add_layer_norm_bwd_f64)(size_t n, const double *const *in, double *const *out,
                                      const void *params, double *stats) {
    add_layer_norm_bwd64(n, in, out, params, stats, NULL);
}

void OG_FN(og_add_layer_norm_bwd_acc_f64)(size_t n, const double *const *in, double *const *out,
                                          const void *params, double *stats, double *const *acc) {
    add_layer_norm_bwd64(n, in, out, params, stats, acc);
}

OG_EW_KERNEL64(og_norm_copy, void, { Y64(0) = X64(0); })
