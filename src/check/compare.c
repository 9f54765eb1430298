/* Typed element access, tolerances, comparisons and named mismatch diagnoses shared by the
 * built-in checker (checker.c) and the custom-operator checker (src/custom). */
#include "check/compare.h"

#include <math.h>
#include <stdio.h>

#include "tensor/dtype.h"
#include "tensor/tensor.h"

void ogc_store(void *p, int64_t i, aclDataType dt, double v) {
    switch (dt) {
    case ACL_FLOAT16:
        ((uint16_t *)p)[i] = og_f32_to_f16((float)v);
        break;
    case ACL_BF16:
        ((uint16_t *)p)[i] = og_f32_to_bf16((float)v);
        break;
    case ACL_DOUBLE:
        ((double *)p)[i] = v;
        break;
    default:
        ((float *)p)[i] = (float)v;
        break;
    }
}

double ogc_load(const void *p, int64_t i, aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT16:
        return og_f16_to_f32(((const uint16_t *)p)[i]);
    case ACL_BF16:
        return og_bf16_to_f32(((const uint16_t *)p)[i]);
    case ACL_DOUBLE:
        return ((const double *)p)[i];
    default:
        return ((const float *)p)[i];
    }
}

int ogc_mant_bits(aclDataType dt) {
    return dt == ACL_FLOAT16 ? 10 : dt == ACL_BF16 ? 7 : dt == ACL_DOUBLE ? 52 : 23;
}
int ogc_min_exp(aclDataType dt) {
    return dt == ACL_FLOAT16 ? -14 : dt == ACL_DOUBLE ? -1022 : -126;
}

double ogc_ulp_of(aclDataType dt, double v) {
    int e;
    frexp(v, &e);
    int ex = v == 0 || e - 1 < ogc_min_exp(dt) ? ogc_min_exp(dt) : e - 1;
    return ldexp(1.0, ex - ogc_mant_bits(dt));
}

// |got - ref| <= c ulp_dt(ref) + c 2^-24 sqrt(K) M + smallest subnormal of dt, with c the
// operator's fp32 bound (fp32 results) or 1 (16-bit results are rounded fp32 results).
double ogc_tolerance(double fp32_ulps, aclDataType dt, double ref, double mag, int64_t terms) {
    double c = dt == ACL_FLOAT ? fp32_ulps : 1.0;
    double k = terms > 1 ? sqrt((double)terms) : 1.0;
    return c * ogc_ulp_of(dt, ref) + c * 0x1p-24 * k * mag +
           ldexp(1.0, ogc_min_exp(dt) - ogc_mant_bits(dt));
}

void ogc_compare(double fp32_ulps, aclDataType dt, const void *got, const double *ref,
                 const double *mag, int64_t terms, int64_t n, ogc_stats *s) {
    for (int64_t i = 0; i < n; i++) {
        double g = ogc_load(got, i, dt), r = ref[i];
        bool both_nan = isnan(g) && isnan(r);
        double err = both_nan ? 0 : (g == r ? 0 : fabs(g - r));
        if (isnan(err)) err = INFINITY;
        double m = mag ? mag[i] : fabs(r);
        double tol = ogc_tolerance(fp32_ulps, dt, r, m, terms);
        double ulp = err == 0 ? 0 : err / ogc_ulp_of(dt, r);
        s->compared++;
        s->max_abs = fmax(s->max_abs, err);
        if (r != 0 && isfinite(r)) s->max_rel = fmax(s->max_rel, err / fabs(r));
        s->max_ulp = fmax(s->max_ulp, ulp);
        s->sum_ulp += isfinite(ulp) ? ulp : 0;
        double re = isfinite(r) ? err / (fabs(r) + 1e-7) : (err == 0 ? 0 : INFINITY);
        s->sum_re += isfinite(re) ? re : 0;
        s->max_re = fmax(s->max_re, re);
        if (isfinite(g) && isfinite(r)) s->dot_gr += g * r, s->dot_rr += r * r;
        if (err > 0 && !(err <= tol)) {
            if (s->bad < 4) s->bad_idx[s->bad] = i;
            if (s->bad++ == 0)
                s->first_bad = i, s->first_got = g, s->first_want = r, s->first_tol = tol;
        }
    }
}

// After a failed comparison: does got = alpha * ref fit within tolerance for one alpha?
double ogc_factor_fit(double fp32_ulps, aclDataType dt, const void *got, const double *ref,
                      const double *mag, int64_t terms, int64_t n, const ogc_stats *s) {
    if (s->dot_rr == 0) return NAN;
    // any wrong value is "a constant factor" off a single value: it takes two to tell
    int64_t nonzero = 0;
    for (int64_t i = 0; i < n && nonzero < 2; i++) nonzero += ref[i] != 0;
    if (nonzero < 2) return NAN;
    double alpha = s->dot_gr / s->dot_rr;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], g = ogc_load(got, i, dt);
        double tol = 4 * ogc_tolerance(fp32_ulps, dt, alpha * r,
                                       fabs(alpha) * (mag ? mag[i] : fabs(r)), terms);
        if (!(fabs(g - alpha * r) <= tol)) return NAN;
    }
    return alpha;
}

void ogc_describe_mismatch(char *out, size_t size, const char *what, const ogc_stats *s,
                           double alpha, int64_t n) {
    if (!isnan(alpha) && fabs(alpha + 1) < 1e-3) {
        snprintf(out, size, "%s has the wrong sign (it is -1 x the reference)", what);
    } else if (!isnan(alpha) && fabs(alpha - 1) > 1e-3) {
        snprintf(out, size, "%s is off by a constant factor %.6g (a missing or extra factor)", what,
                 alpha);
    } else if (s->bad <= 4) {
        char where[96] = "";
        int len = 0;
        for (int64_t i = 0; i < s->bad && i < 4; i++)
            len += snprintf(where + len, sizeof where - len, "%s%lld", i ? "," : "",
                            (long long)s->bad_idx[i]);
        bool boundary = true;
        for (int64_t i = 0; i < s->bad && i < 4; i++) {
            int64_t j = s->bad_idx[i] % 64;
            boundary &= s->bad_idx[i] >= 63 && (j == 0 || j == 63);
        }
        snprintf(out, size,
                 "%s differs from the float64 reference only at element%s %s of %lld%s (first: "
                 "got %.9g, want %.9g, tolerance %.3g)",
                 what, s->bad > 1 ? "s" : "", where, (long long)n,
                 boundary ? ", on a 64-element block boundary: an off-by-one at a tile edge?" : "",
                 s->first_got, s->first_want, s->first_tol);
    } else {
        snprintf(out, size,
                 "%s differs from the float64 reference at %lld of %lld elements (first at %lld: "
                 "got %.9g, want %.9g, tolerance %.3g)",
                 what, (long long)s->bad, (long long)n, (long long)s->first_bad, s->first_got,
                 s->first_want, s->first_tol);
    }
}

bool ogc_shape_equal(const ogc_shape *r, const ogc_shape *s) {
    if (r->ndim != s->ndim) return false;
    for (int d = 0; d < s->ndim; d++)
        if (r->dims[d] != s->dims[d]) return false;
    return true;
}

// A gradient shaped like `got` for an input shaped `want`: if `got` broadcasts onto... i.e. the
// input expands to `got`, name the dims the backward forgot to reduce over.
int ogc_unreduced_dims(const ogc_shape *got, const ogc_shape *want, char *dims, size_t size) {
    int64_t bdims[OG_MAX_DIMS];
    int nb;
    bool expandable =
        og_broadcast_shapes(want->dims, want->ndim, got->dims, got->ndim, bdims, &nb, NULL) &&
        nb == got->ndim;
    for (int d = 0; expandable && d < nb; d++) expandable = bdims[d] == got->dims[d];
    if (!expandable || ogc_shape_equal(got, want)) return -1;
    int len = 0, count = 0;
    if (size) dims[0] = 0;
    for (int d = 0; d < got->ndim; d++) {
        int wd = want->ndim - got->ndim + d;
        if (wd < 0 || (want->dims[wd] == 1 && got->dims[d] != 1)) {
            if ((size_t)len < size)
                len += snprintf(dims + len, size - (size_t)len, "%s%d", count ? "," : "", d);
            count++;
        }
    }
    return count;
}

void ogc_shape_diagnosis(char *out, size_t size, const char *name, int k, const ogc_shape *got,
                         const ogc_shape *want, const ogc_shape *fwd_out) {
    char a[128], b[128], dims[96];
    og_shape_str(got->dims, got->ndim, a, sizeof a);
    og_shape_str(want->dims, want->ndim, b, sizeof b);
    int count = ogc_unreduced_dims(got, want, dims, sizeof dims);
    if (count > 0) {
        snprintf(
            out, size,
            "grad of input %d ('%s') has shape %s, input is %s: missing reduction over dim%s %s", k,
            name, a, b, count > 1 ? "s" : "", dims);
    } else if (ogc_shape_equal(got, fwd_out)) {
        snprintf(out, size,
                 "grad of input %d ('%s') has shape %s, input is %s: it has the forward output's "
                 "shape (grad_output was not broadcast back to the input)",
                 k, name, a, b);
    } else {
        snprintf(out, size, "grad of input %d ('%s') has shape %s, input is %s", k, name, a, b);
    }
}

void ogc_broadcast_strides(const ogc_shape *in, const ogc_shape *out, int64_t *st) {
    int64_t acc = 1;
    for (int d = out->ndim - 1; d >= 0; d--) {
        int di = in->ndim - out->ndim + d;
        if (di < 0 || in->dims[di] == 1) {
            st[d] = 0;
        } else {
            st[d] = acc;
        }
        if (di >= 0) acc *= in->dims[di];
    }
}
