/* Comparison primitives of the checkers: typed loads and stores, ulps and tolerances, error
 * statistics, and the named diagnoses of a mismatch (constant factor, sign, isolated elements,
 * unreduced broadcast gradient). */
#ifndef OG_CHECK_COMPARE_H
#define OG_CHECK_COMPARE_H

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
/// |got - ref| <= c ulp_dt(ref) + c 2^-24 sqrt(terms) mag + dt's smallest subnormal, with
/// c = fp32_ulps for fp32 results and 1 for 16-bit results (rounded fp32 results).
double ogc_tolerance(double fp32_ulps, aclDataType dt, double ref, double mag, int64_t terms);

typedef struct ogc_stats {
    double max_abs, max_rel, max_ulp, sum_ulp, sum_re, max_re;
    int64_t compared, bad, first_bad, bad_idx[4];
    double first_got, first_want, first_tol;
    double dot_gr, dot_rr; // for the constant-factor diagnosis
    double resid_max;      // max |got - alpha * ref| / tol, filled by factor_fit
} ogc_stats;

/// Compares n elements of got (dtype dt) with ref, accumulating into s (zero it first).
void ogc_compare(double fp32_ulps, aclDataType dt, const void *got, const double *ref,
                 const double *mag, int64_t terms, int64_t n, ogc_stats *s);
/// After a failed comparison: the alpha with got = alpha * ref within tolerance, or NaN.
double ogc_factor_fit(double fp32_ulps, aclDataType dt, const void *got, const double *ref,
                      const double *mag, int64_t terms, int64_t n, const ogc_stats *s);
/// The named diagnosis of a failed comparison of `what` (sign, factor, isolated elements, ...).
void ogc_describe_mismatch(char *out, size_t size, const char *what, const ogc_stats *s,
                           double alpha, int64_t n);

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
