/* API-level tests of results: every value is judged against the float64 references of
 * src/check/reference.h (or an exact rule), through the public two-phase API, over dtypes,
 * promotion, broadcasting, strided / offset / transposed views, 0-d, 8-d and empty tensors,
 * in-place forms and the tanhx pair.
 *
 * Tolerances:
 *  - fp32 results: <= 8 ulp of the float64 value; for MishBackward near the zero of mish'
 *    (|x + 1.19| < 0.1, where ulps of a result near 0 mean nothing) the absolute error must be
 *    <= 2^-23 |g| instead (about 12x the error measured there);
 *  - fp16/bf16 results: <= 1 ulp of the output dtype from the float64 value rounded to it;
 *  - the tanhx backward sums t and a correction of opposite sign, so its error bound is taken
 *    relative to the magnitude of the terms: |err| <= 8 u |g| (|t| + |x sigmoid(x) (1-t^2)|)
 *    + 1 ulp of the result (u = unit roundoff of the dtype). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/reference.h"
#include "test.h"
#include "testutil.h"

/* ---- tensors over their own storage --------------------------------------------------- */

typedef struct tview {
    aclTensor *t;
    void *buf;
    aclDataType dt;
    int ndim;
    int64_t dims[8], strides[8], offset, storage;
} tview;

static int64_t prod(const int64_t *d, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= d[i];
    return p;
}

// View (dims, strides or contiguous, offset) over a 1-D storage of `storage` elements
// (0: the minimum). The storage is first filled with the byte 0xA5, a finite sentinel.
static tview tv_make(const int64_t *dims, int ndim, aclDataType dt, const int64_t *strides,
                     int64_t offset, int64_t storage) {
    tview v;
    memset(&v, 0, sizeof v);
    v.dt = dt;
    v.ndim = ndim;
    v.offset = offset;
    int64_t s = 1, maxoff = offset;
    for (int d = ndim - 1; d >= 0; d--) {
        v.dims[d] = dims[d];
        v.strides[d] = strides ? strides[d] : s;
        s *= dims[d] > 0 ? dims[d] : 1;
    }
    if (prod(dims, ndim) > 0)
        for (int d = 0; d < ndim; d++) maxoff += v.strides[d] * (dims[d] - 1);
    v.storage = storage ? storage : maxoff + 1;
    size_t bytes = (size_t)v.storage * aclDataTypeSize(dt);
    if (aclrtMalloc(&v.buf, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) abort();
    memset(v.buf, 0xA5, bytes);
    int64_t sd[1] = {v.storage};
    v.t = aclCreateTensor(dims, (uint64_t)ndim, dt, v.strides, offset, ACL_FORMAT_ND, sd, 1, v.buf);
    if (!v.t) {
        fprintf(stderr, "tv_make: %s\n", aclGetRecentErrMsg());
        abort();
    }
    return v;
}

static tview tv(const int64_t *dims, int ndim, aclDataType dt) {
    return tv_make(dims, ndim, dt, NULL, 0, 0);
}

static void tv_free(tview *v) {
    aclDestroyTensor(v->t);
    aclrtFree(v->buf);
    memset(v, 0, sizeof *v);
}

static int64_t tv_numel(const tview *v) { return prod(v->dims, v->ndim); }

// Storage index of element i (row-major) of the shape (od, on), v broadcast (right-aligned).
static int64_t tv_at(const tview *v, const int64_t *od, int on, int64_t i) {
    int64_t off = v->offset;
    for (int d = on - 1; d >= 0; d--) {
        int64_t idx = i % od[d];
        i /= od[d];
        int vd = v->ndim - on + d;
        if (vd >= 0 && v->dims[vd] != 1) off += idx * v->strides[vd];
    }
    return off;
}
static int64_t tv_own(const tview *v, int64_t i) { return tv_at(v, v->dims, v->ndim, i); }
static double tv_get(const tview *v, int64_t pos) { return test_load(v->buf, pos, v->dt); }
static void tv_put(const tview *v, int64_t pos, double x) { test_store(v->buf, pos, v->dt, x); }

static const double SPECIALS[] = {0.0,   -0.0,  1e-30,    -1e-30,    1e-45,  -1e-45, 1e-3,
                                  -1e-3, 0.5,   -0.5,     -1.1924,   20.0,   -20.0,  88.0,
                                  -88.0, 100.0, -100.0,   160.0,     -160.0, 1000.0, -1000.0,
                                  3e38,  -3e38, INFINITY, -INFINITY, NAN,    7.0,    -7.0};
#define NSPECIALS ((int64_t)(sizeof SPECIALS / sizeof *SPECIALS))

// Random values in [lo, hi) over the view; with `specials` the first elements get SPECIALS.
static void tv_fill(const tview *v, test_rng *r, double lo, double hi, int specials) {
    int64_t n = tv_numel(v);
    for (int64_t i = 0; i < n; i++) {
        double x = specials && i < NSPECIALS ? SPECIALS[i] : test_rng_uniform(r, lo, hi);
        tv_put(v, tv_own(v, i), x);
    }
}

static unsigned char *tv_snapshot(const tview *v) {
    size_t bytes = (size_t)v->storage * aclDataTypeSize(v->dt);
    unsigned char *s = malloc(bytes ? bytes : 1);
    memcpy(s, v->buf, bytes);
    return s;
}

// Storage elements outside the view that differ from the snapshot (must stay untouched).
static int64_t tv_changed_outside(const tview *v, const unsigned char *snap) {
    size_t es = aclDataTypeSize(v->dt);
    char *mask = calloc((size_t)v->storage + 1, 1);
    int64_t n = tv_numel(v), changed = 0;
    for (int64_t i = 0; i < n; i++) mask[tv_own(v, i)] = 1;
    for (int64_t p = 0; p < v->storage; p++)
        if (!mask[p] && memcmp((char *)v->buf + p * es, snap + p * es, es) != 0) changed++;
    free(mask);
    return changed;
}

// Elements (in view order) whose bits differ; NaN matches any NaN.
static int64_t tv_diff_bits(const tview *a, const tview *b) {
    int64_t n = tv_numel(a), bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = tv_get(a, tv_own(a, i)), y = tv_get(b, tv_own(b, i));
        if (isnan(x) && isnan(y)) continue;
        if (a->dt == b->dt) {
            size_t es = aclDataTypeSize(a->dt);
            if (memcmp((char *)a->buf + tv_own(a, i) * es, (char *)b->buf + tv_own(b, i) * es, es))
                bad++;
        } else if (x != y || !signbit(x) != !signbit(y)) {
            bad++;
        }
    }
    return bad;
}

/* ---- running the operators (NULL stream: synchronous) ----------------------------------- */

static aclnnStatus run_mish(const tview *x, const tview *y) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnMishGetWorkspaceSize(x->t, y->t, &ws, &e);
    return test_run(st, ws, e, aclnnMish, NULL);
}
static aclnnStatus run_inplace(const tview *x) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnInplaceMishGetWorkspaceSize(x->t, &ws, &e);
    return test_run(st, ws, e, aclnnInplaceMish, NULL);
}
static aclnnStatus run_mish_tanhx(const tview *x, const tview *y, const tview *t) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnMishWithTanhxGetWorkspaceSize(x->t, y->t, t->t, &ws, &e);
    return test_run(st, ws, e, aclnnMishWithTanhx, NULL);
}
static aclnnStatus run_bwd(const tview *g, const tview *x, const tview *gi) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnMishBackwardGetWorkspaceSize(g->t, x->t, gi->t, &ws, &e);
    return test_run(st, ws, e, aclnnMishBackward, NULL);
}
static aclnnStatus run_bwd_tanhx(const tview *g, const tview *x, const tview *t, const tview *gi) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnMishBackwardWithTanhxGetWorkspaceSize(g->t, x->t, t->t, gi->t, &ws, &e);
    return test_run(st, ws, e, aclnnMishBackwardWithTanhx, NULL);
}

/* ---- judging against float64 ------------------------------------------------------------ */

// Spacing of dtype dt at |v| (subnormal spacing below the normal range).
static double ulp_at(aclDataType dt, double v) {
    int mant = dt == ACL_FLOAT16 ? 10 : dt == ACL_BF16 ? 7 : 23;
    int min_exp = dt == ACL_FLOAT16 ? -14 : -126;
    int e;
    frexp(v, &e);
    int exp = v == 0 ? min_exp : e - 1;
    if (exp < min_exp) exp = min_exp;
    return ldexp(1.0, exp - mant);
}

static double unit_roundoff(aclDataType dt) {
    return dt == ACL_FLOAT16 ? 0x1p-11 : dt == ACL_BF16 ? 0x1p-8 : 0x1p-24;
}

// `eff`: the dtype the result was last rounded to. `near_root`: MishBackward near mish' = 0.
static int close_to(aclDataType eff, double got, double ref, int near_root, double g) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got);
    if (isinf(ref) || isinf(got)) return got == ref;
    if (eff == ACL_FLOAT) {
        if (test_ulp_error(ACL_FLOAT, got, ref) <= 8) return 1;
    } else if (test_ulp_error(eff, got, test_round_to(eff, ref)) <= 1) {
        return 1;
    }
    return near_root && fabs(got - ref) <= 0x1p-23 * fabs(g) + ulp_at(eff, ref);
}

static int report_limit;
static void report(const char *what, int64_t i, double x, double got, double ref) {
    if (report_limit-- > 0)
        fprintf(stderr, "    %s[%lld]: x = %.9g: got %.9g, want %.9g\n", what, (long long)i, x, got,
                ref);
}

// y = f(x) elementwise (same shapes), judged with close_to.
static int64_t verify_unary(const tview *x, const tview *y, aclDataType eff, double (*f)(double),
                            const char *what) {
    int64_t n = tv_numel(y), bad = 0;
    report_limit = 5;
    for (int64_t i = 0; i < n; i++) {
        double xv = tv_get(x, tv_at(x, y->dims, y->ndim, i)), got = tv_get(y, tv_own(y, i));
        double ref = f(xv);
        if (!close_to(eff, got, ref, 0, 0)) {
            report(what, i, xv, got, ref);
            bad++;
        }
    }
    return bad;
}

static int64_t verify_bwd(const tview *g, const tview *x, const tview *gi, aclDataType eff) {
    int64_t n = tv_numel(gi), bad = 0;
    report_limit = 5;
    for (int64_t i = 0; i < n; i++) {
        double gv = tv_get(g, tv_at(g, gi->dims, gi->ndim, i));
        double xv = tv_get(x, tv_at(x, gi->dims, gi->ndim, i));
        double got = tv_get(gi, tv_own(gi, i)), ref = gv * og_ref_mish_grad(xv);
        if (!close_to(eff, got, ref, fabs(xv + 1.19) < 0.1, gv)) {
            report("gradInput", i, xv, got, ref);
            bad++;
        }
    }
    return bad;
}

// The term-scaled bound of the tanhx form: |got - ref| <= 8 u |g| (|t| + |corr|) + ulp(ref).
static int tanhx_close(aclDataType eff, double got, double ref, double g, double x, double t) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got);
    if (isinf(ref) || isinf(got)) return got == ref;
    double corr = isinf(x) ? 0.0 : x * og_ref_sigmoid(x) * (1.0 - t * t);
    double scale = fabs(g) * (fabs(t) + fabs(corr));
    return fabs(got - ref) <= 8 * unit_roundoff(eff) * scale + ulp_at(eff, ref);
}

// gi = g (t + x sigmoid(x) (1 - t^2)) for the given t.
static int64_t verify_bwd_tanhx(const tview *g, const tview *x, const tview *t, const tview *gi,
                                aclDataType eff) {
    int64_t n = tv_numel(gi), bad = 0;
    report_limit = 5;
    for (int64_t i = 0; i < n; i++) {
        double gv = tv_get(g, tv_at(g, gi->dims, gi->ndim, i));
        double xv = tv_get(x, tv_at(x, gi->dims, gi->ndim, i));
        double tv_ = tv_get(t, tv_at(t, gi->dims, gi->ndim, i));
        double got = tv_get(gi, tv_own(gi, i)), ref = og_ref_mish_grad_tanhx(gv, xv, tv_);
        if (!tanhx_close(eff, got, ref, gv, xv, tv_)) {
            report("gradInput(tanhx)", i, xv, got, ref);
            bad++;
        }
    }
    return bad;
}

/* ---- Mish forward ------------------------------------------------------------------------- */

static void test_mish_fp32_random_and_special(void) {
    const int64_t d[] = {50021};
    tview x = tv(d, 1, ACL_FLOAT), y = tv(d, 1, ACL_FLOAT);
    test_rng r;
    test_rng_seed(&r, 1);
    tv_fill(&x, &r, -25, 25, 1);
    CHECK_EQ(run_mish(&x, &y), ACLNN_SUCCESS);
    int64_t bad = verify_unary(&x, &y, ACL_FLOAT, og_ref_mish, "mish");
    CHECKF(bad == 0, "%lld of %lld fp32 results off by more than 8 ulp", (long long)bad,
           (long long)d[0]);
    // the limits: mish(-inf) = -0, mish(+inf) = +inf, NaN stays NaN
    for (int64_t i = 0; i < NSPECIALS; i++) {
        double xv = SPECIALS[i], yv = tv_get(&y, i);
        if (isnan(xv)) CHECK(isnan(yv));
        if (isinf(xv) && xv > 0) CHECK(yv == INFINITY);
        if (isinf(xv) && xv < 0) CHECK(yv == 0.0);
    }
    tv_free(&x);
    tv_free(&y);
}

// Every one of the 65536 encodings of a 16-bit input, rounded result within 1 ulp.
static void mish_all_16bit(aclDataType dt) {
    const int64_t d[] = {65536};
    tview x = tv(d, 1, dt), y = tv(d, 1, dt);
    for (int64_t i = 0; i < 65536; i++) ((uint16_t *)x.buf)[i] = (uint16_t)i;
    CHECK_EQ(run_mish(&x, &y), ACLNN_SUCCESS);
    int64_t bad =
        verify_unary(&x, &y, dt, og_ref_mish, dt == ACL_FLOAT16 ? "mish fp16" : "mish bf16");
    CHECKF(bad == 0, "%lld of 65536 inputs give more than 1 ulp", (long long)bad);
    tv_free(&x);
    tv_free(&y);
}
static void test_mish_fp16_all_values(void) { mish_all_16bit(ACL_FLOAT16); }
static void test_mish_bf16_all_values(void) { mish_all_16bit(ACL_BF16); }

/* ---- MishBackward: dtypes ------------------------------------------------------------------- */

static void test_backward_fp32_random_and_special(void) {
    const int64_t d[] = {40009};
    tview g = tv(d, 1, ACL_FLOAT), x = tv(d, 1, ACL_FLOAT), gi = tv(d, 1, ACL_FLOAT);
    test_rng r;
    test_rng_seed(&r, 2);
    tv_fill(&g, &r, -3, 3, 0);
    tv_fill(&x, &r, -25, 25, 1);
    // special gradients too: NaN, inf, 0 paired with ordinary and special x
    tv_put(&g, 100, NAN);
    tv_put(&g, 101, INFINITY);
    tv_put(&g, 102, 0.0);
    tv_put(&x, 103, -INFINITY);
    tv_put(&g, 103, INFINITY); // inf * 0: NaN in float64 too
    CHECK_EQ(run_bwd(&g, &x, &gi), ACLNN_SUCCESS);
    int64_t bad = verify_bwd(&g, &x, &gi, ACL_FLOAT);
    CHECKF(bad == 0, "%lld fp32 gradients out of tolerance", (long long)bad);
    CHECK(isnan(tv_get(&gi, 100)));
    CHECK(isnan(tv_get(&gi, 103)));
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

static void backward_all_16bit(aclDataType dt) {
    const int64_t d[] = {65536};
    tview g = tv(d, 1, dt), x = tv(d, 1, dt), gi = tv(d, 1, dt);
    test_rng r;
    test_rng_seed(&r, 3);
    tv_fill(&g, &r, -2, 2, 0);
    for (int64_t i = 0; i < 65536; i++) ((uint16_t *)x.buf)[i] = (uint16_t)i;
    CHECK_EQ(run_bwd(&g, &x, &gi), ACLNN_SUCCESS);
    int64_t bad = verify_bwd(&g, &x, &gi, dt);
    CHECKF(bad == 0, "%lld of 65536 inputs out of tolerance", (long long)bad);
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}
static void test_backward_fp16_all_values(void) { backward_all_16bit(ACL_FLOAT16); }
static void test_backward_bf16_all_values(void) { backward_all_16bit(ACL_BF16); }

// gradOutput, self and gradInput dtypes; `eff` is what the result must be rounded like.
static void backward_dtypes(aclDataType gd, aclDataType xd, aclDataType od, aclDataType eff,
                            uint64_t seed) {
    const int64_t d[] = {3, 1777};
    tview g = tv(d, 2, gd), x = tv(d, 2, xd), gi = tv(d, 2, od);
    test_rng r;
    test_rng_seed(&r, seed);
    tv_fill(&g, &r, -3, 3, 0);
    tv_fill(&x, &r, -12, 12, 1);
    aclnnStatus st = run_bwd(&g, &x, &gi);
    CHECKF(st == ACLNN_SUCCESS, "dtypes %d,%d -> %d: status %d (%s)", (int)gd, (int)xd, (int)od,
           (int)st, aclGetRecentErrMsg());
    int64_t bad = verify_bwd(&g, &x, &gi, eff);
    CHECKF(bad == 0, "dtypes %d,%d -> %d: %lld results out of tolerance", (int)gd, (int)xd, (int)od,
           (long long)bad);
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

static void test_backward_promotion_fp32_fp16(void) {
    backward_dtypes(ACL_FLOAT, ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT, 10);
    backward_dtypes(ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, 11);
}

static void test_backward_promotion_bf16_fp16(void) {
    backward_dtypes(ACL_BF16, ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT, 12);
    backward_dtypes(ACL_FLOAT16, ACL_BF16, ACL_FLOAT, ACL_FLOAT, 13);
    backward_dtypes(ACL_BF16, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, 14);
}

static void test_backward_output_cast_narrower(void) {
    // fp32 result stored into fp16 / bf16 gradInput: one rounding, from fp32
    backward_dtypes(ACL_FLOAT, ACL_FLOAT, ACL_FLOAT16, ACL_FLOAT16, 15);
    backward_dtypes(ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_BF16, 16);
}

// fp16 inputs promote to fp16: the result is rounded to fp16 first, then stored as fp32. The
// fp32 gradInput must hold exactly the fp16 result of the same operator with an fp16 gradInput.
static void fp16_inputs_wide_output(aclDataType in, aclDataType out) {
    const int64_t d[] = {5, 1001};
    tview g = tv(d, 2, in), x = tv(d, 2, in), gi_n = tv(d, 2, in), gi_w = tv(d, 2, out);
    test_rng r;
    test_rng_seed(&r, 20);
    tv_fill(&g, &r, -3, 3, 0);
    tv_fill(&x, &r, -12, 12, 1);
    CHECK_EQ(run_bwd(&g, &x, &gi_n), ACLNN_SUCCESS);
    CHECK_EQ(run_bwd(&g, &x, &gi_w), ACLNN_SUCCESS);
    CHECK_EQ(verify_bwd(&g, &x, &gi_n, in), 0);
    CHECK_EQ(verify_bwd(&g, &x, &gi_w, in), 0);
    int64_t n = tv_numel(&gi_w), unrepresentable = 0;
    for (int64_t i = 0; i < n; i++) {
        double w = tv_get(&gi_w, i);
        if (!isnan(w) && test_round_to(in, w) != w) unrepresentable++;
    }
    CHECKF(unrepresentable == 0, "%lld wide results are not %s values", (long long)unrepresentable,
           in == ACL_FLOAT16 ? "fp16" : "bf16");
    CHECKF(tv_diff_bits(&gi_n, &gi_w) == 0, "wide output differs from the narrow result widened");
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi_n);
    tv_free(&gi_w);
}
static void test_backward_fp16_inputs_fp32_output(void) {
    fp16_inputs_wide_output(ACL_FLOAT16, ACL_FLOAT);
}
static void test_backward_bf16_inputs_fp32_output(void) {
    fp16_inputs_wide_output(ACL_BF16, ACL_FLOAT);
}

/* ---- MishBackward: broadcasting ----------------------------------------------------------- */

static void backward_broadcast(const int64_t *gd, int gn, const int64_t *xd, int xn,
                               const int64_t *od, int on, aclDataType dt, uint64_t seed) {
    tview g = tv(gd, gn, dt), x = tv(xd, xn, dt), gi = tv(od, on, dt);
    test_rng r;
    test_rng_seed(&r, seed);
    tv_fill(&g, &r, -3, 3, 0);
    tv_fill(&x, &r, -10, 10, 1);
    aclnnStatus st = run_bwd(&g, &x, &gi);
    CHECKF(st == ACLNN_SUCCESS, "status %d: %s", (int)st, aclGetRecentErrMsg());
    int64_t bad = verify_bwd(&g, &x, &gi, dt);
    CHECKF(bad == 0, "%lld broadcast results out of tolerance (seed %llu)", (long long)bad,
           (unsigned long long)seed);
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

static void test_backward_broadcast_2231_with_2232(void) {
    const int64_t a[] = {2, 2, 3, 1}, b[] = {2, 2, 3, 2};
    backward_broadcast(a, 4, b, 4, b, 4, ACL_FLOAT, 30); // gradOutput broadcasts
    backward_broadcast(b, 4, a, 4, b, 4, ACL_FLOAT, 31); // self broadcasts
    backward_broadcast(a, 4, b, 4, b, 4, ACL_FLOAT16, 32);
    backward_broadcast(b, 4, a, 4, b, 4, ACL_BF16, 33);
}

static void test_backward_broadcast_both_and_rank(void) {
    const int64_t a[] = {64, 1, 33}, b[] = {50, 33}, o[] = {64, 50, 33};
    backward_broadcast(a, 3, b, 2, o, 3, ACL_FLOAT, 34); // both broadcast, ranks differ
    backward_broadcast(b, 2, a, 3, o, 3, ACL_FLOAT16, 35);
    const int64_t c[] = {7, 1}, e[] = {1, 9}, o2[] = {7, 9};
    backward_broadcast(c, 2, e, 2, o2, 2, ACL_FLOAT, 36);
    const int64_t s[] = {1}, big[] = {3, 4, 5};
    backward_broadcast(s, 1, big, 3, big, 3, ACL_FLOAT, 37);
}

/* ---- layouts ------------------------------------------------------------------------------- */

// Mish from x to y, y judged, and y's storage outside the view untouched.
static void mish_layout(const tview *x, const tview *y, aclDataType eff, const char *what) {
    unsigned char *snap = tv_snapshot(y);
    aclnnStatus st = run_mish(x, y);
    CHECKF(st == ACLNN_SUCCESS, "%s: status %d (%s)", what, (int)st, aclGetRecentErrMsg());
    int64_t bad = verify_unary(x, y, eff, og_ref_mish, what);
    CHECKF(bad == 0, "%s: %lld results out of tolerance", what, (long long)bad);
    CHECKF(tv_changed_outside(y, snap) == 0, "%s: storage outside the output view was written",
           what);
    free(snap);
}

static void test_layout_transposed(void) {
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16};
    for (int k = 0; k < 2; k++) {
        // a {40,60} view of a {60,40} row-major storage: strides {1,40}
        const int64_t d[] = {40, 60}, tst[] = {1, 40};
        tview xt = tv_make(d, 2, dts[k], tst, 0, 0), xc = tv(d, 2, dts[k]);
        tview yt = tv_make(d, 2, dts[k], tst, 0, 0), yc = tv(d, 2, dts[k]);
        test_rng r;
        test_rng_seed(&r, 40 + k);
        tv_fill(&xt, &r, -8, 8, 1);
        tv_fill(&xc, &r, -8, 8, 1);
        mish_layout(&xt, &yc, dts[k], "transposed in");
        mish_layout(&xc, &yt, dts[k], "transposed out");
        mish_layout(&xt, &yt, dts[k], "transposed both");
        tv_free(&xt);
        tv_free(&xc);
        tv_free(&yt);
        tv_free(&yc);
    }
}

static void test_layout_stride_1_5(void) {
    // {4,3} with strides {1,5}: offsets 0..3, 5..8, 10..13 -- gaps at 4 and 9
    const int64_t d[] = {4, 3}, st[] = {1, 5};
    tview x = tv_make(d, 2, ACL_FLOAT, st, 0, 14), y = tv_make(d, 2, ACL_FLOAT, st, 0, 14);
    test_rng r;
    test_rng_seed(&r, 50);
    tv_fill(&x, &r, -6, 6, 1);
    mish_layout(&x, &y, ACL_FLOAT, "stride {1,5}");
    // backward with the same layout on all three
    tview g = tv_make(d, 2, ACL_FLOAT, st, 0, 14), gi = tv_make(d, 2, ACL_FLOAT, st, 0, 14);
    tv_fill(&g, &r, -2, 2, 0);
    unsigned char *snap = tv_snapshot(&gi);
    CHECK_EQ(run_bwd(&g, &x, &gi), ACLNN_SUCCESS);
    CHECK_EQ(verify_bwd(&g, &x, &gi, ACL_FLOAT), 0);
    CHECK_EQ(tv_changed_outside(&gi, snap), 0);
    free(snap);
    tv_free(&x);
    tv_free(&y);
    tv_free(&g);
    tv_free(&gi);
}

static void test_layout_offset_view_in_larger_storage(void) {
    // {3,4} every other element of rows of 20, starting at element 17 of a 200-element storage
    const int64_t d[] = {3, 4}, st[] = {20, 2};
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int k = 0; k < 3; k++) {
        tview x = tv_make(d, 2, dts[k], st, 17, 200), y = tv_make(d, 2, dts[k], st, 23, 200);
        test_rng r;
        test_rng_seed(&r, 60 + k);
        tv_fill(&x, &r, -6, 6, 1);
        mish_layout(&x, &y, dts[k], "offset view");
        tview g = tv_make(d, 2, dts[k], st, 5, 100), gi = tv_make(d, 2, dts[k], st, 11, 200);
        tv_fill(&g, &r, -2, 2, 0);
        unsigned char *snap = tv_snapshot(&gi);
        CHECK_EQ(run_bwd(&g, &x, &gi), ACLNN_SUCCESS);
        CHECK_EQ(verify_bwd(&g, &x, &gi, dts[k]), 0);
        CHECK_EQ(tv_changed_outside(&gi, snap), 0);
        free(snap);
        tv_free(&x);
        tv_free(&y);
        tv_free(&g);
        tv_free(&gi);
    }
}

static void test_layout_large_strided_multicore(void) {
    // big enough for several cores and tiles, with gathers and scatters on every operand
    const int64_t d[] = {300, 257}, st[] = {1, 301}; // column-major with a padding row
    tview g = tv_make(d, 2, ACL_FLOAT, st, 0, 0), x = tv_make(d, 2, ACL_FLOAT16, st, 0, 0);
    tview gi = tv_make(d, 2, ACL_FLOAT, st, 1, 0);
    test_rng r;
    test_rng_seed(&r, 70);
    tv_fill(&g, &r, -2, 2, 0);
    tv_fill(&x, &r, -9, 9, 1);
    unsigned char *snap = tv_snapshot(&gi);
    CHECK_EQ(run_bwd(&g, &x, &gi), ACLNN_SUCCESS);
    CHECK_EQ(verify_bwd(&g, &x, &gi, ACL_FLOAT), 0);
    CHECK_EQ(tv_changed_outside(&gi, snap), 0);
    free(snap);
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

/* ---- ranks 0 and 8, size-1 dims ------------------------------------------------------------ */

static void test_zero_dim_tensors(void) {
    const int64_t none[1] = {0};
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int k = 0; k < 3; k++) {
        tview x = tv(none, 0, dts[k]), y = tv(none, 0, dts[k]);
        tv_put(&x, 0, -0.75);
        CHECK_EQ(run_mish(&x, &y), ACLNN_SUCCESS);
        CHECK_EQ(verify_unary(&x, &y, dts[k], og_ref_mish, "0-d mish"), 0);
        tview g = tv(none, 0, dts[k]), gi = tv(none, 0, dts[k]);
        tv_put(&g, 0, 1.5);
        CHECK_EQ(run_bwd(&g, &x, &gi), ACLNN_SUCCESS);
        CHECK_EQ(verify_bwd(&g, &x, &gi, dts[k]), 0);
        tv_free(&x);
        tv_free(&y);
        tv_free(&g);
        tv_free(&gi);
    }
    // a 0-d operand broadcasts against any shape
    const int64_t d[] = {3, 4};
    backward_broadcast(none, 0, d, 2, d, 2, ACL_FLOAT, 80);
    backward_broadcast(d, 2, none, 0, d, 2, ACL_FLOAT16, 81);
}

static void test_eight_dim_tensors(void) {
    const int64_t a[] = {2, 1, 3, 1, 2, 2, 1, 2}, b[] = {1, 2, 1, 2, 1, 2, 2, 1};
    const int64_t o[] = {2, 2, 3, 2, 2, 2, 2, 2};
    backward_broadcast(a, 8, b, 8, o, 8, ACL_FLOAT, 90);
    backward_broadcast(o, 8, b, 8, o, 8, ACL_BF16, 91);
    // 8-d Mish with a permuted (non-contiguous) input
    const int64_t d[] = {2, 3, 2, 2, 3, 2, 2, 2};
    int64_t st[8], s = 1;
    for (int i = 0; i < 8; i++) { // column-major strides
        st[i] = s;
        s *= d[i];
    }
    tview x = tv_make(d, 8, ACL_FLOAT, st, 0, 0), y = tv(d, 8, ACL_FLOAT);
    test_rng r;
    test_rng_seed(&r, 92);
    tv_fill(&x, &r, -6, 6, 1);
    mish_layout(&x, &y, ACL_FLOAT, "8-d");
    tv_free(&x);
    tv_free(&y);
}

static void test_size_one_dims(void) {
    const int64_t a[] = {1, 37, 1, 1}, b[] = {5, 1, 1, 1, 1}, o[] = {5, 1, 37, 1, 1};
    backward_broadcast(a, 4, b, 5, o, 5, ACL_FLOAT, 100);
    const int64_t d[] = {1, 1, 1}, st[] = {7, 0, 3}; // strides of size-1 dims are irrelevant
    tview x = tv_make(d, 3, ACL_FLOAT, st, 4, 10), y = tv_make(d, 3, ACL_FLOAT, st, 2, 10);
    tv_put(&x, 4, 2.25);
    mish_layout(&x, &y, ACL_FLOAT, "size-1 dims");
    tv_free(&x);
    tv_free(&y);
}

/* ---- empty tensors --------------------------------------------------------------------------- */

static void test_empty_tensors(void) {
    const int64_t e[] = {1, 1, 0, 2}, one[] = {1, 1, 1, 2};
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16};
    for (int k = 0; k < 2; k++) {
        aclDataType dt = dts[k];
        // real storages of 8 elements, so that a write would show
        tview x = tv_make(e, 4, dt, NULL, 0, 8), y = tv_make(e, 4, dt, NULL, 0, 8);
        tview t = tv_make(e, 4, dt, NULL, 0, 8), g = tv_make(one, 4, dt, NULL, 0, 8);
        tview gi = tv_make(e, 4, dt, NULL, 0, 8);
        unsigned char *sy = tv_snapshot(&y), *sx = tv_snapshot(&x), *st = tv_snapshot(&t);
        unsigned char *sgi = tv_snapshot(&gi);
        uint64_t ws = 99;
        aclOpExecutor *ex = NULL;
        CHECK_EQ(aclnnMishGetWorkspaceSize(x.t, y.t, &ws, &ex), ACLNN_SUCCESS);
        CHECK_EQ(ws, 0);
        CHECK_EQ(aclnnMish(NULL, 0, ex, NULL), ACLNN_SUCCESS);
        ws = 99;
        CHECK_EQ(aclnnInplaceMishGetWorkspaceSize(x.t, &ws, &ex), ACLNN_SUCCESS);
        CHECK_EQ(ws, 0);
        CHECK_EQ(aclnnInplaceMish(NULL, 0, ex, NULL), ACLNN_SUCCESS);
        ws = 99;
        CHECK_EQ(aclnnMishWithTanhxGetWorkspaceSize(x.t, y.t, t.t, &ws, &ex), ACLNN_SUCCESS);
        CHECK_EQ(ws, 0);
        CHECK_EQ(aclnnMishWithTanhx(NULL, 0, ex, NULL), ACLNN_SUCCESS);
        ws = 99;
        // gradOutput {1,1,1,2} broadcasts with the empty self to the empty gradInput
        CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(g.t, x.t, gi.t, &ws, &ex), ACLNN_SUCCESS);
        CHECK_EQ(ws, 0);
        CHECK_EQ(aclnnMishBackward(NULL, 0, ex, NULL), ACLNN_SUCCESS);
        ws = 99;
        CHECK_EQ(aclnnMishBackwardWithTanhxGetWorkspaceSize(g.t, x.t, t.t, gi.t, &ws, &ex),
                 ACLNN_SUCCESS);
        CHECK_EQ(ws, 0);
        CHECK_EQ(aclnnMishBackwardWithTanhx(NULL, 0, ex, NULL), ACLNN_SUCCESS);
        // and on a stream
        aclrtStream s = NULL;
        CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
        CHECK_EQ(aclnnMishGetWorkspaceSize(x.t, y.t, &ws, &ex), ACLNN_SUCCESS);
        CHECK_EQ(aclnnMish(NULL, 0, ex, s), ACLNN_SUCCESS);
        CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
        CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
        // nothing was written anywhere
        size_t bytes = 8 * aclDataTypeSize(dt);
        CHECK(memcmp(y.buf, sy, bytes) == 0);
        CHECK(memcmp(x.buf, sx, bytes) == 0);
        CHECK(memcmp(t.buf, st, bytes) == 0);
        CHECK(memcmp(gi.buf, sgi, bytes) == 0);
        free(sy);
        free(sx);
        free(st);
        free(sgi);
        tv_free(&x);
        tv_free(&y);
        tv_free(&t);
        tv_free(&g);
        tv_free(&gi);
    }
}

/* ---- in-place forms ------------------------------------------------------------------------- */

static void test_inplace_mish(void) {
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int k = 0; k < 3; k++) {
        const int64_t d[] = {9001};
        tview x = tv(d, 1, dts[k]), orig = tv(d, 1, dts[k]);
        test_rng r;
        test_rng_seed(&r, 110 + k);
        tv_fill(&x, &r, -10, 10, 1);
        memcpy(orig.buf, x.buf, (size_t)9001 * aclDataTypeSize(dts[k]));
        CHECK_EQ(run_inplace(&x), ACLNN_SUCCESS);
        CHECK_EQ(verify_unary(&orig, &x, dts[k], og_ref_mish, "inplace"), 0);
        tv_free(&x);
        tv_free(&orig);
    }
    // a transposed view, in place, inside a padded storage
    const int64_t d[] = {33, 65}, st[] = {1, 34};
    tview x = tv_make(d, 2, ACL_FLOAT16, st, 1, 0), orig = tv(d, 2, ACL_FLOAT16);
    test_rng r;
    test_rng_seed(&r, 119);
    tv_fill(&x, &r, -10, 10, 1);
    for (int64_t i = 0; i < tv_numel(&orig); i++) tv_put(&orig, i, tv_get(&x, tv_own(&x, i)));
    unsigned char *snap = tv_snapshot(&x);
    CHECK_EQ(run_inplace(&x), ACLNN_SUCCESS);
    CHECK_EQ(verify_unary(&orig, &x, ACL_FLOAT16, og_ref_mish, "inplace strided"), 0);
    CHECK_EQ(tv_changed_outside(&x, snap), 0);
    free(snap);
    tv_free(&x);
    tv_free(&orig);
}

static void test_out_aliasing_input_element_for_element(void) {
    // Mish with out == self (same buffer, same layout) is allowed and correct
    const int64_t d[] = {20, 30}, st[] = {1, 20};
    tview x = tv_make(d, 2, ACL_FLOAT, st, 0, 0), orig = tv(d, 2, ACL_FLOAT);
    test_rng r;
    test_rng_seed(&r, 120);
    tv_fill(&x, &r, -10, 10, 1);
    for (int64_t i = 0; i < 600; i++) tv_put(&orig, i, tv_get(&x, tv_own(&x, i)));
    aclTensor *alias = aclCreateTensor(d, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, NULL, 0, x.buf);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(x.t, alias, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnMish, NULL), ACLNN_SUCCESS);
    CHECK_EQ(verify_unary(&orig, &x, ACL_FLOAT, og_ref_mish, "aliased"), 0);
    aclDestroyTensor(alias);
    // MishBackward writing gradInput over gradOutput
    const int64_t d2[] = {4097};
    tview g = tv(d2, 1, ACL_FLOAT16), xs = tv(d2, 1, ACL_FLOAT16), g0 = tv(d2, 1, ACL_FLOAT16);
    tv_fill(&g, &r, -2, 2, 0);
    tv_fill(&xs, &r, -8, 8, 1);
    memcpy(g0.buf, g.buf, 4097 * 2);
    alias = aclCreateTensor(d2, 1, ACL_FLOAT16, NULL, 0, ACL_FORMAT_ND, d2, 1, g.buf);
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(g.t, xs.t, alias, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnMishBackward, NULL), ACLNN_SUCCESS);
    CHECK_EQ(verify_bwd(&g0, &xs, &g, ACL_FLOAT16), 0);
    aclDestroyTensor(alias);
    tv_free(&x);
    tv_free(&orig);
    tv_free(&g);
    tv_free(&xs);
    tv_free(&g0);
}

/* ---- the tanhx pair ---------------------------------------------------------------------- */

static void test_mish_with_tanhx(void) {
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int k = 0; k < 3; k++) {
        const int64_t d[] = {3, 4099};
        tview x = tv(d, 2, dts[k]), y = tv(d, 2, dts[k]), t = tv(d, 2, dts[k]);
        tview ym = tv(d, 2, dts[k]);
        test_rng r;
        test_rng_seed(&r, 130 + k);
        tv_fill(&x, &r, -20, 20, 1);
        CHECK_EQ(run_mish_tanhx(&x, &y, &t), ACLNN_SUCCESS);
        CHECK_EQ(run_mish(&x, &ym), ACLNN_SUCCESS);
        CHECK_EQ(verify_unary(&x, &y, dts[k], og_ref_mish, "mish(tanhx)"), 0);
        CHECK_EQ(verify_unary(&x, &t, dts[k], og_ref_mish_tanhx, "tanhx"), 0);
        CHECKF(tv_diff_bits(&y, &ym) == 0, "dtype %d: out differs from aclnnMish's output",
               (int)dts[k]);
        tv_free(&x);
        tv_free(&y);
        tv_free(&t);
        tv_free(&ym);
    }
}

// MishBackwardWithTanhx fed with MishWithTanhx's tanhx agrees with MishBackward.
static void tanhx_chain(aclDataType dt, uint64_t seed) {
    const int64_t d[] = {2, 5003};
    tview x = tv(d, 2, dt), y = tv(d, 2, dt), t = tv(d, 2, dt), g = tv(d, 2, dt);
    tview gi_t = tv(d, 2, dt), gi = tv(d, 2, dt);
    test_rng r;
    test_rng_seed(&r, seed);
    tv_fill(&x, &r, -15, 15, 1);
    tv_fill(&g, &r, -3, 3, 0);
    CHECK_EQ(run_mish_tanhx(&x, &y, &t), ACLNN_SUCCESS);
    CHECK_EQ(run_bwd_tanhx(&g, &x, &t, &gi_t), ACLNN_SUCCESS);
    CHECK_EQ(run_bwd(&g, &x, &gi), ACLNN_SUCCESS);
    // 1. the kernel is right for the t it was given
    CHECK_EQ(verify_bwd_tanhx(&g, &x, &t, &gi_t, dt), 0);
    // 2. and agrees with MishBackward within a few ulps once the error that the saved tanhx
    //    carries is propagated: d/dt [t + x sigmoid(x) (1 - t^2)] = 1 - 2 x sigmoid(x) t, which
    //    reaches ~2x for large x, where t rounds to (nearly) 1 and 1 - t^2 loses its digits.
    int64_t n = tv_numel(&gi), bad = 0;
    report_limit = 5;
    for (int64_t i = 0; i < n; i++) {
        double xv = tv_get(&x, i), gv = tv_get(&g, i), a = tv_get(&gi_t, i), b = tv_get(&gi, i);
        double tact = tv_get(&t, i), tref = og_ref_mish_tanhx(xv);
        int ok;
        if (isnan(a) || isnan(b))
            ok = isnan(a) && isnan(b);
        else if (isinf(a) || isinf(b) || isinf(xv))
            ok = a == b;
        else {
            double sig = og_ref_sigmoid(xv);
            double dfdt = 1.0 - 2.0 * xv * sig * tref;
            double terms = fabs(tref) + fabs(xv * sig * (1.0 - tref * tref));
            double tol =
                fabs(gv) * (8 * unit_roundoff(dt) * terms + fabs(dfdt) * fabs(tact - tref)) +
                (dt == ACL_FLOAT ? 8 : 2) * ulp_at(dt, b);
            ok = fabs(a - b) <= tol;
        }
        if (!ok) {
            report("tanhx chain vs MishBackward", i, xv, a, b);
            bad++;
        }
    }
    CHECKF(bad == 0, "dtype %d: %lld chained gradients disagree with MishBackward", (int)dt,
           (long long)bad);
    tv_free(&x);
    tv_free(&y);
    tv_free(&t);
    tv_free(&g);
    tv_free(&gi_t);
    tv_free(&gi);
}
static void test_backward_with_tanhx_chain_fp32(void) { tanhx_chain(ACL_FLOAT, 140); }
static void test_backward_with_tanhx_chain_fp16(void) { tanhx_chain(ACL_FLOAT16, 141); }

static void test_backward_with_tanhx_arbitrary_t_and_promotion(void) {
    // any t in [-1, 1] (not only tanh(softplus(x))), three dtypes promoting to fp32, broadcast
    const int64_t gd[] = {6, 1, 211}, xd[] = {1, 4, 211}, td[] = {4, 1}, od[] = {6, 4, 211};
    tview g = tv(gd, 3, ACL_FLOAT16), x = tv(xd, 3, ACL_BF16), t = tv(td, 2, ACL_FLOAT);
    tview gi = tv(od, 3, ACL_FLOAT);
    test_rng r;
    test_rng_seed(&r, 150);
    tv_fill(&g, &r, -3, 3, 0);
    tv_fill(&x, &r, -12, 12, 1);
    tv_fill(&t, &r, -1, 1, 0);
    tv_put(&t, 0, 1.0); // 1 - t^2 == 0: the correction vanishes even for x = +inf
    tv_put(&t, 1, -1.0);
    aclnnStatus st = run_bwd_tanhx(&g, &x, &t, &gi);
    CHECKF(st == ACLNN_SUCCESS, "status %d: %s", (int)st, aclGetRecentErrMsg());
    CHECK_EQ(verify_bwd_tanhx(&g, &x, &t, &gi, ACL_FLOAT), 0);
    tv_free(&g);
    tv_free(&x);
    tv_free(&t);
    tv_free(&gi);
}

int main(void) {
    RUN(test_mish_fp32_random_and_special);
    RUN(test_mish_fp16_all_values);
    RUN(test_mish_bf16_all_values);
    RUN(test_backward_fp32_random_and_special);
    RUN(test_backward_fp16_all_values);
    RUN(test_backward_bf16_all_values);
    RUN(test_backward_promotion_fp32_fp16);
    RUN(test_backward_promotion_bf16_fp16);
    RUN(test_backward_output_cast_narrower);
    RUN(test_backward_fp16_inputs_fp32_output);
    RUN(test_backward_bf16_inputs_fp32_output);
    RUN(test_backward_broadcast_2231_with_2232);
    RUN(test_backward_broadcast_both_and_rank);
    RUN(test_layout_transposed);
    RUN(test_layout_stride_1_5);
    RUN(test_layout_offset_view_in_larger_storage);
    RUN(test_layout_large_strided_multicore);
    RUN(test_zero_dim_tensors);
    RUN(test_eight_dim_tensors);
    RUN(test_size_one_dims);
    RUN(test_empty_tensors);
    RUN(test_inplace_mish);
    RUN(test_out_aliasing_input_element_for_element);
    RUN(test_mish_with_tanhx);
    RUN(test_backward_with_tanhx_chain_fp32);
    RUN(test_backward_with_tanhx_chain_fp16);
    RUN(test_backward_with_tanhx_arbitrary_t_and_promotion);
    return test_summary();
}
