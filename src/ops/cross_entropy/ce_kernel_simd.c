/* The cross-entropy row kernels (ce_kernel.h), written once against vec.h, compiled per ISA.
 *
 * Bitwise identity across ISAs: the forward's log-softmax is softmax_kernel_simd.c's (itself
 * ISA-independent), the picks are scalar and the row sums plain C in 16 fixed lanes; the backward's
 * per-element formula is the same vector operations on every lane (the tail through a padded
 * copy of one vector), so a lane's result does not depend on VLEN. */
#include <math.h>
#include <string.h>

#include "engine/simd/map64.h"
#include "engine/simd/vmath.h"
#include "ops/cross_entropy/ce_kernel.h"
#include "ops/softmax/softmax_kernel.h"

// The class v of a row, or -1 when the row is ignored: ignoreIndex, or outside [0, n).
static inline int64_t class_of(int64_t v, const og_ce_params *p, size_t n) {
    return v == p->ignore || v < 0 || v >= (int64_t)n ? -1 : v;
}

// The class of a row from its target's words (ce_kernel.h: the view points at the target
// element), or -1.
static inline int64_t target_of(const float *t, const og_ce_params *p, size_t n) {
    int64_t v;
    if (p->tkind == OG_CE_T_INT64) {
        memcpy(&v, t, sizeof v);
    } else {
        int32_t v32;
        memcpy(&v32, t, sizeof v32);
        v = v32;
    }
    return class_of(v, p, n);
}

// sum_c a[c] (b[c] when b is given: sum_c a[c] b[c]) in double: element c goes to lane c % 16,
// each lane adds in increasing c, then the lanes by a fixed tree. The lanes are independent
// (the compiler vectorizes them; a single chain of double adds costs 4 cycles per element), the
// products of two floats are exact in double, and the order is the same on every ISA.
static double row_sum(const float *a, const float *b, size_t n) {
    double acc[16] = {0};
    size_t c = 0;
    if (b)
        for (; c + 16 <= n; c += 16)
            for (int j = 0; j < 16; j++) acc[j] += (double)a[c + j] * (double)b[c + j];
    else
        for (; c + 16 <= n; c += 16)
            for (int j = 0; j < 16; j++) acc[j] += (double)a[c + j];
    for (; c < n; c++) acc[c % 16] += b ? (double)a[c] * (double)b[c] : (double)a[c];
    for (int w = 8; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) acc[j] += acc[j + w];
    return acc[0];
}

// -l_n from a row of log-probabilities lp: keep w[t] lp[t] + smooth sum_c w[c] lp[c].
static float neg_loss(size_t n, const float *lp, const float *w, int64_t t, float wt,
                      const og_ce_params *p) {
    double s = (double)p->keep * wt * lp[t];
    if (p->smooth != 0.0f) s += (double)p->smooth * row_sum(lp, w, n);
    return (float)s;
}

static void forward(size_t n, const float *x, const float *tgt, const float *w, float *lp,
                    const og_ce_params *p, float *stats) {
    (void)x;
    int64_t t = target_of(tgt, p, n);
    if (t < 0) {
        stats[0] = 0.0f, stats[1] = 0.0f;
        return;
    }
    float wt = w ? w[t] : 1.0f;
    stats[0] = -neg_loss(n, lp, w, t, wt, p);
    stats[1] = wt;
}

void OG_FN(og_ce_fwd)(size_t n, const float *const *in, float *const *out, const void *params,
                      float *stats) {
    const og_ce_params *p = params;
    if (n == 0) return;
    const float *x = in[0];
    OG_FN(og_log_softmax_fwd)(n, &x, out, NULL, NULL);
    forward(n, in[0], in[1], p->weighted ? in[2] : NULL, out[0], p, stats);
}

void OG_FN(og_nll_fwd)(size_t n, const float *const *in, float *const *out, const void *params,
                       float *stats) {
    (void)out;
    const og_ce_params *p = params;
    if (n == 0) return;
    // the log-probabilities are the input; smoothing is 0 (keep 1)
    forward(n, in[0], in[1], p->weighted ? in[2] : NULL, (float *)in[0], p, stats);
}

void OG_FN(og_ce_wt)(size_t n, const float *const *in, float *const *out, const void *params,
                     float *stats) {
    (void)out;
    const og_ce_params *p = params;
    int64_t t = target_of(in[0], p, n);
    stats[0] = t < 0 ? 0.0f : p->weighted ? in[1][t] : 1.0f;
}

void OG_FN(og_ce_scalar)(size_t n, const float *const *in, float *const *out, const void *params,
                         float *stats) {
    (void)n, (void)out;
    const og_ce_params *p = params;
    stats[0] = p->div ? in[0][0] / in[1][0] : in[0][0];
}

// e^v for log-probabilities (v <= 0; below -150 the result is 0 in float anyway).
static inline vf exp_lp(vf v) {
    v = vmax(vmin(v, vset(0.0f)), vset(-150.0f));
    return og_vexp_value(og_vexp_split(v));
}

// dx = a e^lp - b (b a vector of per-class terms bw[c] scaled by b, or the constant b).
static inline vf grad_vec(vf lp, vf a, vf b, const float *bw) {
    vf e = exp_lp(lp);
    vf bb = bw ? vmul(b, vload(bw)) : b;
    return vsub(vmul(a, e), bb);
}

void OG_FN(og_ce_bwd)(size_t n, const float *const *in, float *const *out, const void *params,
                      float *stats) {
    (void)stats;
    const og_ce_params *p = params;
    const float *lp = in[0], *w = p->weighted ? in[3] : NULL;
    float *dx = out[0];
    int64_t t = target_of(in[1], p, n);
    float coef = in[2][0];
    if (t < 0) {
        memset(dx, 0, n * sizeof *dx);
        return;
    }
    float wt = w ? w[t] : 1.0f;
    double wsum = w && p->smooth != 0.0f ? row_sum(w, NULL, n) : (double)n;
    vf a = vset((float)((double)coef * ((double)p->keep * wt + (double)p->smooth * wsum)));
    vf b = vset(coef * p->smooth);
    size_t c = 0;
    for (; c + VLEN <= n; c += VLEN)
        vstore(dx + c, grad_vec(vload(lp + c), a, b, w ? w + c : NULL));
    if (c < n) { // the tail through a padded copy: the same lanes as a whole vector
        float lt[VLEN] = {0}, wtl[VLEN] = {0}, r[VLEN];
        memcpy(lt, lp + c, (n - c) * sizeof *lt);
        if (w) memcpy(wtl, w + c, (n - c) * sizeof *wtl);
        vstore(r, grad_vec(vload(lt), a, b, w ? wtl : NULL));
        memcpy(dx + c, r, (n - c) * sizeof *r);
    }
    dx[t] -= coef * p->keep * wt;
}

void OG_FN(og_nll_bwd)(size_t n, const float *const *in, float *const *out, const void *params,
                       float *stats) {
    (void)stats;
    const og_ce_params *p = params;
    float *dx = out[0];
    int64_t t = target_of(in[0], p, n);
    memset(dx, 0, n * sizeof *dx);
    if (t >= 0) dx[t] = -(in[1][0] * (p->weighted ? in[2][t] : 1.0f));
}

// ---- float64 rows: the same formulas in double, scalar C (no lanes to keep apart: the same bits
// on every ISA), the row sums compensated in increasing c.

// The class of a row from the int64 bits the engine put in the target row (rows.h), or -1.
static inline int64_t target_of64(const double *t, const og_ce_params *p, size_t n) {
    int64_t v;
    memcpy(&v, t, sizeof v);
    return class_of(v, p, n);
}

// sum_c a[c] (b[c] when given), compensated.
static double row_sum64(const double *a, const double *b, size_t n) {
    og_ksum s = {0, 0};
    for (size_t c = 0; c < n; c++) og_ksum_add(&s, b ? a[c] * b[c] : a[c]);
    return og_ksum_value(&s);
}

static void forward64(size_t n, const double *tgt, const double *w, const double *lp,
                      const og_ce_params *p, double *stats) {
    int64_t t = target_of64(tgt, p, n);
    if (t < 0) {
        stats[0] = 0.0, stats[1] = 0.0;
        return;
    }
    double wt = w ? w[t] : 1.0, s = p->keep64 * wt * lp[t];
    if (p->smooth64 != 0.0) s += p->smooth64 * row_sum64(lp, w, n);
    stats[0] = -s, stats[1] = wt;
}

void OG_FN(og_ce_fwd_f64)(size_t n, const double *const *in, double *const *out, const void *params,
                          double *stats) {
    const og_ce_params *p = params;
    if (n == 0) return;
    OG_FN(og_log_softmax_fwd_f64)(n, in, out, NULL, NULL);
    forward64(n, in[1], p->weighted ? in[2] : NULL, out[0], p, stats);
}

void OG_FN(og_nll_fwd_f64)(size_t n, const double *const *in, double *const *out,
                           const void *params, double *stats) {
    (void)out;
    const og_ce_params *p = params;
    if (n == 0) return;
    forward64(n, in[1], p->weighted ? in[2] : NULL, in[0], p, stats);
}

void OG_FN(og_ce_wt_f64)(size_t n, const double *const *in, double *const *out, const void *params,
                         double *stats) {
    (void)out;
    const og_ce_params *p = params;
    int64_t t = target_of64(in[0], p, n);
    stats[0] = t < 0 ? 0.0 : p->weighted ? in[1][t] : 1.0;
}

void OG_FN(og_ce_scalar_f64)(size_t n, const double *const *in, double *const *out,
                             const void *params, double *stats) {
    (void)n, (void)out;
    const og_ce_params *p = params;
    stats[0] = p->div ? in[0][0] / in[1][0] : in[0][0];
}

// dx[c] = coef (a e^lp[c] - b[c]), b[c] = smooth w[c] (+ keep w[t] at c = t): the target's two
// terms are added before the subtraction, so the cancellation where e^lp[t] is near 1 rounds once.
void OG_FN(og_ce_bwd_f64)(size_t n, const double *const *in, double *const *out, const void *params,
                          double *stats) {
    (void)stats;
    const og_ce_params *p = params;
    const double *lp = in[0], *w = p->weighted ? in[3] : NULL;
    double *dx = out[0];
    int64_t t = target_of64(in[1], p, n);
    double coef = in[2][0];
    if (t < 0) {
        memset(dx, 0, n * sizeof *dx);
        return;
    }
    double wt = w ? w[t] : 1.0;
    double wsum = w && p->smooth64 != 0.0 ? row_sum64(w, NULL, n) : (double)n;
    double a = p->keep64 * wt + p->smooth64 * wsum;
    for (size_t c = 0; c < n; c++) {
        double b = p->smooth64 * (w ? w[c] : 1.0);
        if ((int64_t)c == t) b += p->keep64 * wt;
        dx[c] = coef * (a * exp(lp[c]) - b);
    }
}

void OG_FN(og_nll_bwd_f64)(size_t n, const double *const *in, double *const *out,
                           const void *params, double *stats) {
    (void)stats;
    const og_ce_params *p = params;
    double *dx = out[0];
    int64_t t = target_of64(in[0], p, n);
    memset(dx, 0, n * sizeof *dx);
    if (t >= 0) dx[t] = -(in[1][0] * (p->weighted ? in[2][t] : 1.0));
}
