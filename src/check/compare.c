/* Typed element access, tolerances, comparisons and named mismatch diagnoses shared by the
 * built-in checker (checker.c) and the custom-operator checker (src/custom). */
#include "check/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

// From the bits (the checker calls it for every element it compares): the binade of |v| is its
// biased exponent field, 0 for 0 and subnormals.
double ogc_ulp_of(aclDataType dt, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;
    if (e < ogc_min_exp(dt)) e = ogc_min_exp(dt);
    int p = e - ogc_mant_bits(dt);
    if (p < -1022 || p > 1023) return ldexp(1.0, p);
    uint64_t one = (uint64_t)(p + 1023) << 52;
    double u;
    memcpy(&u, &one, sizeof u);
    return u;
}

double ogc_tolerance_rule(ogc_rule rule, aclDataType dt, double ref, double mag, int64_t terms) {
    double k = terms > 1 ? sqrt((double)terms) : 1.0;
    if (dt == ACL_DOUBLE && rule.fp64_ulps > 0) {
        double c = rule.fp64_ulps;
        return c * ogc_ulp_of(ACL_DOUBLE, ref) + c * 0x1p-53 * k * mag + 0x1p-1074;
    }
    if (dt != ACL_FLOAT && rule.roundings16 == 0)
        return ogc_ulp_of(dt, ref) + 0x1p-24 * k * mag +
               ldexp(1.0, ogc_min_exp(dt) - ogc_mant_bits(dt));
    double c = rule.fp32_ulps;
    double b = c * ogc_ulp_of(ACL_FLOAT, ref) + c * 0x1p-24 * k * mag + 0x1p-149;
    if (dt == ACL_FLOAT) return b;
    // the fp32 result lies within b of ref; each rounding to dt moves it by at most half a
    // spacing of dt where it lands (the spacing at |ref| + b covers a binade crossed upwards)
    return rule.roundings16 * 0.5 * ogc_ulp_of(dt, fabs(ref) + b) + b;
}

double ogc_tolerance(double fp32_ulps, aclDataType dt, double ref, double mag, int64_t terms) {
    return ogc_tolerance_rule((ogc_rule){.fp32_ulps = fp32_ulps}, dt, ref, mag, terms);
}

void ogc_compare(ogc_rule rule, aclDataType dt, const void *got, const double *ref,
                 const double *mag, int64_t terms, int64_t n, ogc_stats *s) {
    for (int64_t i = 0; i < n; i++) {
        double g = ogc_load(got, i, dt), r = ref[i];
        bool both_nan = isnan(g) && isnan(r);
        double err = both_nan ? 0 : (g == r ? 0 : fabs(g - r));
        if (isnan(err)) err = INFINITY;
        double ulp = err == 0 ? 0 : err / ogc_ulp_of(dt, r);
        bool smaller = fabs(g) < fabs(r);
        if (isfinite(ulp) && r != 0) s->sum_sulp += smaller ? -ulp : ulp;
        s->compared++;
        s->max_abs = fmax(s->max_abs, err);
        if (r != 0 && isfinite(r)) s->max_rel = fmax(s->max_rel, err / fabs(r));
        s->max_ulp = fmax(s->max_ulp, ulp);
        s->sum_ulp += isfinite(ulp) ? ulp : 0;
        double re = isfinite(r) ? err / (fabs(r) + 1e-7) : (err == 0 ? 0 : INFINITY);
        s->sum_re += isfinite(re) ? re : 0;
        s->max_re = fmax(s->max_re, re);
        if (isfinite(g) && isfinite(r)) s->dot_gr += g * r, s->dot_rr += r * r;
        double tol = err > 0 ? ogc_tolerance_rule(rule, dt, r, mag ? mag[i] : fabs(r), terms) : 0;
        if (err > 0 && !(err <= tol)) {
            s->bad_toward_0 += smaller && isfinite(g);
            s->bad_above += g > r;
            if (s->bad < OGC_BAD_KEPT) s->bad_idx[s->bad] = i;
            if (s->bad++ == 0)
                s->first_bad = i, s->first_got = g, s->first_want = r, s->first_tol = tol;
        }
    }
}

// After a failed comparison: does got = alpha * ref fit within tolerance for one alpha?
double ogc_factor_fit(ogc_rule rule, aclDataType dt, const void *got, const double *ref,
                      const double *mag, int64_t terms, int64_t n, const ogc_stats *s) {
    if (s->dot_rr == 0) return NAN;
    // any wrong value is "a constant factor" off a single value: it takes two to tell
    int64_t nonzero = 0;
    for (int64_t i = 0; i < n && nonzero < 2; i++) nonzero += ref[i] != 0;
    if (nonzero < 2) return NAN;
    double alpha = s->dot_gr / s->dot_rr;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], g = ogc_load(got, i, dt);
        double tol = 4 * ogc_tolerance_rule(rule, dt, alpha * r,
                                            fabs(alpha) * (mag ? mag[i] : fabs(r)), terms);
        if (!(fabs(g - alpha * r) <= tol)) return NAN;
    }
    return alpha;
}

// The failures fall at a fixed step (every `step`-th element, at least 3 of them, all kept):
// the step, else 0.
static int64_t periodic_step(const ogc_stats *s) {
    if (s->bad < 3 || s->bad > OGC_BAD_KEPT) return 0;
    int64_t step = s->bad_idx[1] - s->bad_idx[0];
    for (int64_t i = 2; i < s->bad; i++)
        if (s->bad_idx[i] - s->bad_idx[i - 1] != step) return 0;
    return step > 1 ? step : 0;
}

bool ogc_describe_mismatch(char *out, size_t size, const char *what, const ogc_stats *s,
                           double alpha, int64_t n, aclDataType dt, ogc_rule rule) {
    // A 16-bit result held to "rounded once from fp32" that is within one spacing everywhere: the
    // arithmetic is right and the rounding is not.
    bool rounding =
        dt != ACL_FLOAT && rule.roundings16 > 0 && s->max_ulp <= rule.roundings16 + 0.05;
    double bias = s->compared ? s->sum_sulp / (double)s->compared : 0;
    if (!isnan(alpha) && fabs(alpha + 1) < 1e-3) {
        snprintf(out, size, "%s has the wrong sign (it is -1 x the reference)", what);
    } else if (!isnan(alpha) && fabs(alpha - 1) > 1e-3) {
        snprintf(out, size, "%s is off by a constant factor %.6g (a missing or extra factor)", what,
                 alpha);
    } else if (rounding && s->bad_toward_0 == s->bad) {
        snprintf(out, size,
                 "%s is not correctly rounded: %lld of %lld %s values are more than half a spacing "
                 "off, all toward zero (max %.3g ulp, mean signed error %+.3f ulp): the conversion "
                 "to %s truncates instead of rounding to nearest even",
                 what, (long long)s->bad, (long long)n, og_dtype_name(dt), s->max_ulp, bias,
                 og_dtype_name(dt));
    } else if (rounding && (s->bad_above == s->bad || s->bad_above == 0 || s->bad_toward_0 == 0)) {
        const char *how = s->bad_toward_0 == 0 ? "away from zero"
                          : s->bad_above == 0  ? "down (toward -infinity)"
                                               : "up (toward +infinity)";
        snprintf(out, size,
                 "%s is not correctly rounded: %lld of %lld %s values are more than half a spacing "
                 "off, all %s (max %.3g ulp, mean signed error %+.3f ulp): the conversion to %s "
                 "rounds %s instead of to nearest even",
                 what, (long long)s->bad, (long long)n, og_dtype_name(dt),
                 s->bad_toward_0 == 0 ? "away from zero"
                 : s->bad_above == 0  ? "below"
                                      : "above",
                 s->max_ulp, bias, og_dtype_name(dt), how);
    } else if (rounding) {
        snprintf(out, size,
                 "%s is not correctly rounded: %lld of %lld %s values are more than half a spacing "
                 "off the float64 reference (max %.3g ulp, mean signed error %+.3f ulp; first at "
                 "%lld: got %.9g, want %.9g): computed or rounded in 16-bit instead of fp32 and "
                 "rounded once?",
                 what, (long long)s->bad, (long long)n, og_dtype_name(dt), s->max_ulp, bias,
                 (long long)s->first_bad, s->first_got, s->first_want);
    } else if (s->bad <= 4) {
        char where[96] = "";
        int len = 0;
        for (int64_t i = 0; i < s->bad; i++)
            len += snprintf(where + len, sizeof where - len, "%s%lld", i ? "," : "",
                            (long long)s->bad_idx[i]);
        bool boundary = true;
        for (int64_t i = 0; i < s->bad; i++) {
            int64_t j = s->bad_idx[i] % 64;
            boundary &= s->bad_idx[i] >= 63 && (j == 0 || j == 63);
        }
        snprintf(out, size,
                 "%s differs from the float64 reference only at element%s %s of %lld%s (first: "
                 "got %.9g, want %.9g, tolerance %.3g)",
                 what, s->bad > 1 ? "s" : "", where, (long long)n,
                 boundary ? ", on a 64-element block boundary: an off-by-one at a tile edge?" : "",
                 s->first_got, s->first_want, s->first_tol);
    } else if (periodic_step(s) > 0) {
        int64_t step = periodic_step(s);
        snprintf(out, size,
                 "%s differs from the float64 reference only at every %lld-th element from %lld "
                 "(%lld of %lld elements): an off-by-one at the edge of %lld-element tiles or "
                 "ranges? (first: got %.9g, want %.9g, tolerance %.3g)",
                 what, (long long)step, (long long)s->bad_idx[0], (long long)s->bad, (long long)n,
                 (long long)step, s->first_got, s->first_want, s->first_tol);
    } else {
        snprintf(out, size,
                 "%s differs from the float64 reference at %lld of %lld elements (first at %lld: "
                 "got %.9g, want %.9g, tolerance %.3g)",
                 what, (long long)s->bad, (long long)n, (long long)s->first_bad, s->first_got,
                 s->first_want, s->first_tol);
        return false;
    }
    return true;
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
