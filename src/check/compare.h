/* Comparison primitives of the checkers: typed loads and stores, ulps and tolerances, error
 * statistics, and the named diagnoses of a mismatch (constant factor, sign, isolated elements,
 * unreduced broadcast gradient). */
#ifndef OG_CHECK_COMPARE_H
#define OG_CHECK_COMPARE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check/check.h"

/// Element i of a dense fp32/fp16/bf16/fp64 buffer, as a double (exact).
double ogc_load(const void *p, int64_t i, aclDataType dt);
/// Stores v rounded to dt (round to nearest even) at element i.
void ogc_store(void *p, int64_t i, aclDataType dt, double v);

int ogc_mant_bits(aclDataType dt);
int ogc_min_exp(aclDataType dt);
/// The spacing of dt's values at v (subnormal spacing below the normal range).
double ogc_ulp_of(aclDataType dt, double v);
/// The error bound of a result: what the kernel may differ from the float64 reference by.
/// Neumaier's compensated sum, for the float64 references' sums: they must stay far below the
/// error of a float64 kernel, which a plain double sum of many terms is not. (Written apart from
/// the kernels' own, engine/simd/map64.h.)
typedef struct ogc_ksum {
    double s, c;
} ogc_ksum;
static inline void ogc_ksum_add(ogc_ksum *k, double v) {
    double t = k->s + v;
    k->c += fabs(k->s) >= fabs(v) ? (k->s - t) + v : (v - t) + k->s;
    k->s = t;
}
static inline double ogc_ksum_value(const ogc_ksum *k) {
    return isfinite(k->s) ? k->s + k->c : k->s;
}

typedef struct ogc_rule {
    double fp32_ulps; // the fp32 computation's bound, in fp32 ulps (per rounding of a sum's
                      // terms too: c 2^-24 sqrt(terms) magnitude)
    int roundings16;  // 16-bit results: how many times the fp32 result was rounded to the 16-bit
                      // dtype (1: computed in fp32 and rounded once, so correctly rounded up to
                      // the fp32 bound); 0: the 1-ulp rule for kernels of unknown make (custom)
    double fp64_ulps; // float64 results (a built-in operator's float64 kernels): the bound in
                      // double ulps, for the kernel's and the float64 reference's errors
                      // together (c ulp + c 2^-53 sqrt(terms) magnitude); 0: as a custom kernel
} ogc_rule;

/// The rule of a built-in operator with bound fp32_ulps whose 16-bit results are rounded once.
static inline ogc_rule ogc_rule_of(double fp32_ulps) {
    return (ogc_rule){.fp32_ulps = fp32_ulps, .roundings16 = 1};
}

/// The tolerance of a result ref with magnitude bound mag summed from `terms` values:
///   fp32:   b = c ulp_f32(ref) + c 2^-24 sqrt(terms) mag + 2^-149, c = fp32_ulps;
///   16-bit: roundings16 x 0.5 ulp_dt(|ref| + b) + b (rounded `roundings16` times from an fp32
///           result within b); with roundings16 = 0: ulp_dt(ref) + 2^-24 sqrt(terms) mag + dt's
///           smallest subnormal.
double ogc_tolerance_rule(ogc_rule rule, aclDataType dt, double ref, double mag, int64_t terms);
/// ogc_tolerance_rule with roundings16 = 0.
double ogc_tolerance(double fp32_ulps, aclDataType dt, double ref, double mag, int64_t terms);

#define OGC_BAD_KEPT 64

typedef struct ogc_stats {
    double max_abs, max_rel, max_ulp, sum_ulp, sum_re, max_re;
    double sum_sulp;      // signed error in ulps, positive = larger in magnitude than ref
    int64_t bad_toward_0; // failures whose result is smaller in magnitude than the reference
    int64_t bad_above;    // failures whose result is above the reference
    int64_t compared, bad, first_bad, bad_idx[OGC_BAD_KEPT]; // the first failures' indices
    double first_got, first_want, first_tol;
    double dot_gr, dot_rr; // for the constant-factor diagnosis
    double resid_max;      // max |got - alpha * ref| / tol, filled by factor_fit
} ogc_stats;

/// Compares n elements of got (dtype dt) with ref, accumulating into s (zero it first).
void ogc_compare(ogc_rule rule, aclDataType dt, const void *got, const double *ref,
                 const double *mag, int64_t terms, int64_t n, ogc_stats *s);
/// Records into series s the per-element errors of a comparison (as ogc_compare judges it): the
/// histogram of all n elements, and points (evenly strided elements and the largest errors)
/// merged by ogc_series_merge. x: the input value of each element; NULL: its index.
void ogc_series_record(ogc_series *s, ogc_rule rule, aclDataType dt, const void *got,
                       const double *ref, const double *mag, int64_t terms, int64_t n,
                       const double *x);
/// After a failed comparison: the alpha with got = alpha * ref within tolerance, or NaN.
double ogc_factor_fit(ogc_rule rule, aclDataType dt, const void *got, const double *ref,
                      const double *mag, int64_t terms, int64_t n, const ogc_stats *s);
/// The named diagnosis of a failed comparison of `what` (sign, factor, 16-bit rounding, isolated
/// elements, ...), most specific first. dt: the result's dtype; rule: the rule it was judged by.
/// Returns true when it named a cause, false for the generic "differs at N elements".
bool ogc_describe_mismatch(char *out, size_t size, const char *what, const ogc_stats *s,
                           double alpha, int64_t n, aclDataType dt, ogc_rule rule);

bool ogc_shape_equal(const ogc_shape *a, const ogc_shape *b);
/// Element strides of a row-major tensor of shape `in` indexed over the broadcast shape `out`
/// (0 on the dims `in` is broadcast along).
void ogc_broadcast_strides(const ogc_shape *in, const ogc_shape *out, int64_t *st);
/// Diagnosis for gradient k ('name') produced with shape `got` for an input of shape `want`
/// (fwd_out: the forward output's shape): names the dims a missing reduction left.
void ogc_shape_diagnosis(char *out, size_t size, const char *name, int k, const ogc_shape *got,
                         const ogc_shape *want, const ogc_shape *fwd_out);
/// When `want` broadcasts to `got` (got has more elements), writes the dims of got the
/// gradient must be summed over ("0" or "0,2") and returns their count; else returns -1.
int ogc_unreduced_dims(const ogc_shape *got, const ogc_shape *want, char *dims, size_t size);

#endif
