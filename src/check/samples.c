/* Per-element error samples for the HTML report (check.h: ogc_samples): a bounded,
 * deterministic selection of (x, ulp error) points and a histogram of every element's error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/compare.h"

int ogc_hist_bin(double ulp) {
    if (ulp == 0) return 0;
    if (!(ulp < 0x1p10)) return OGC_HIST_BINS - 1; // also NaN and infinity
    if (ulp < 0x1p-4) return 1;
    int e;
    frexp(ulp, &e); // ulp = m 2^e, m in [0.5, 1): ulp in [2^(e-1), 2^e)
    return e + 5;   // [2^-4, 2^-3) -> e = -3 -> bin 2; [2^9, 2^10) -> bin 15
}

// Largest error first; ties by x, then by ratio (equal points are interchangeable).
static int by_error_desc(const void *pa, const void *pb) {
    const ogc_point *a = pa, *b = pb;
    if (a->ulp != b->ulp) return a->ulp > b->ulp ? -1 : 1;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    return a->ratio > b->ratio ? -1 : a->ratio < b->ratio;
}

static int by_x(const void *pa, const void *pb) {
    const ogc_point *a = pa, *b = pb;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    return by_error_desc(pa, pb);
}

void ogc_series_merge(ogc_series *dst, const ogc_series *src) {
    for (int b = 0; b < OGC_HIST_BINS; b++) dst->hist[b] += src->hist[b];
    if (src->n == 0) return;
    // x against index does not mix: points at input values win over points at indices
    if (dst->n > 0 && dst->x_is_index != src->x_is_index) {
        if (src->x_is_index) return;
        dst->n = 0;
    }
    dst->x_is_index = src->x_is_index;
    ogc_point all[2 * OGC_SAMPLE_MAX];
    int m = 0;
    for (int i = 0; i < dst->n; i++) all[m++] = dst->p[i];
    for (int i = 0; i < src->n; i++) all[m++] = src->p[i];
    if (m <= OGC_SAMPLE_MAX) {
        qsort(all, (size_t)m, sizeof *all, by_x);
        memcpy(dst->p, all, (size_t)m * sizeof *all);
        dst->n = m;
        return;
    }
    // the largest errors, then the rest in x order, evenly thinned
    qsort(all, (size_t)m, sizeof *all, by_error_desc);
    int keep = OGC_SAMPLE_MAX - OGC_SAMPLE_WORST, rest = m - OGC_SAMPLE_WORST;
    ogc_point *tail = all + OGC_SAMPLE_WORST;
    qsort(tail, (size_t)rest, sizeof *tail, by_x);
    int n = 0;
    for (int i = 0; i < OGC_SAMPLE_WORST; i++) dst->p[n++] = all[i];
    for (int j = 0; j < keep; j++) {
        int64_t i = keep > 1 ? (int64_t)j * (rest - 1) / (keep - 1) : 0;
        dst->p[n++] = tail[i];
    }
    qsort(dst->p, (size_t)n, sizeof *dst->p, by_x);
    dst->n = n;
}

// A finite stand-in for a non-finite input value (the report's JSON has no infinities).
static double finite_x(double x) {
    if (isnan(x)) return 0;
    return fmax(fmin(x, 1e300), -1e300);
}

void ogc_series_record(ogc_series *s, ogc_rule rule, aclDataType dt, const void *got,
                       const double *ref, const double *mag, int64_t terms, int64_t n,
                       const double *x) {
    ogc_series c = {.x_is_index = x == NULL};
    // the largest errors (worst[0] the smallest of them once full), and a stride that leaves
    // room for them
    int64_t worst[OGC_SAMPLE_WORST];
    float worst_ulp[OGC_SAMPLE_WORST];
    int nworst = 0, low = 0;
    int64_t even = OGC_SAMPLE_MAX - OGC_SAMPLE_WORST;
    int64_t stride = n > even ? (n + even - 1) / even : 1;
    for (int64_t i = 0; i < n; i++) {
        double g = ogc_load(got, i, dt), r = ref[i];
        double err = isnan(g) && isnan(r) ? 0 : g == r ? 0 : fabs(g - r);
        if (isnan(err)) err = INFINITY;
        double ulp = err == 0 ? 0 : err / ogc_ulp_of(dt, r);
        if (isnan(ulp)) ulp = INFINITY;
        c.hist[ogc_hist_bin(ulp)]++;
        if (i % stride == 0 || ulp == 0) continue; // strided points are taken below
        if (nworst < OGC_SAMPLE_WORST) {
            worst[nworst] = i, worst_ulp[nworst++] = (float)ulp;
        } else if ((float)ulp > worst_ulp[low]) {
            worst[low] = i, worst_ulp[low] = (float)ulp;
        } else {
            continue;
        }
        low = 0;
        for (int k = 1; k < nworst; k++)
            if (worst_ulp[k] < worst_ulp[low]) low = k;
    }
    int64_t picks[OGC_SAMPLE_MAX];
    int np = 0;
    for (int64_t i = 0; i < n && np < even; i += stride) picks[np++] = i;
    for (int k = 0; k < nworst; k++) picks[np++] = worst[k];
    for (int k = 0; k < np; k++) {
        int64_t i = picks[k];
        double g = ogc_load(got, i, dt), r = ref[i];
        double err = isnan(g) && isnan(r) ? 0 : g == r ? 0 : fabs(g - r);
        if (isnan(err)) err = INFINITY;
        double ulp = err == 0 ? 0 : err / ogc_ulp_of(dt, r);
        double tol = err > 0 ? ogc_tolerance_rule(rule, dt, r, mag ? mag[i] : fabs(r), terms) : 0;
        double ratio = err == 0 ? 0 : tol > 0 ? err / tol : INFINITY;
        c.p[c.n++] = (ogc_point){x ? finite_x(x[i]) : (double)i, isnan(ulp) ? INFINITY : (float)ulp,
                                 isnan(ratio) ? INFINITY : (float)ratio};
    }
    qsort(c.p, (size_t)c.n, sizeof *c.p, by_x);
    ogc_series_merge(s, &c);
}
