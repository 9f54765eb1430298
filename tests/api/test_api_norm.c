/* The norm family through the public API: aclnnLayerNorm, aclnnLayerNormBackward, aclnnRmsNorm,
 * aclnnRmsNormGrad.
 *  - status paths with the argument named: NULLs (161001), outputMask true with a NULL output
 *    (161001), outputMask of 2 entries, normalizedShape against the input, weight / stats shapes
 *    and dtypes, RmsNorm's FLOAT-only rstd / dgamma, rank 9 (161002); a too-small workspace;
 *  - values against float64 on small cases: LayerNorm with and without weight / bias, over 1 and
 *    2 dims, the saved mean / rstd; every outputMask of the backward (a false entry's output is
 *    left alone); RmsNorm and RmsNormGrad with the forward's [A, 1] rstd and with [A];
 *  - a transposed input and output whose normalized dims do not coalesce (the gather path), fp16
 *    and bf16 inputs with an fp32 weight, empty inputs (no rows: the weight gradients are 0);
 *  - the weight gradients over many row groups: bitwise equal at 1, 2 and 3 threads and on every
 *    ISA level this CPU has;
 *  - the residual forms: AddLayerNorm (with a bias of gamma's and of x1's shape, xOut written
 *    only with additionalOutput), AddRmsNorm's xOut, AddLayerNormGrad with and without dsum,
 *    each against the plain operator on x1 + x2 (+ bias). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add_layer_norm.h"
#include "aclnnop/aclnn_add_layer_norm_grad.h"
#include "aclnnop/aclnn_add_rms_norm.h"
#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "aclnnop/aclnn_rms_norm.h"
#include "aclnnop/aclnn_rms_norm_grad.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

// Phase 1 (which sets ws and e), then phase 2 with a fresh workspace: sequenced by the comma.
static aclnnStatus phase1_status;
#define RUN_OP(phase1_call, phase2)                                                                \
    (phase1_status = (phase1_call), test_run(phase1_status, ws, e, phase2, NULL))

// ---- float64 references over rows x R (contiguous) ---------------------------------------------

typedef struct ln_ref {
    double *y, *mean, *rstd, *dx, *dw, *db;
} ln_ref;

// LayerNorm (rms = false) or RMSNorm (rms = true) forward and backward in float64.
static void reference(bool rms, int64_t rows, int64_t R, const double *x, const double *w,
                      const double *b, const double *dy, double eps, ln_ref *o) {
    for (int64_t j = 0; j < R; j++) o->dw[j] = o->db[j] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const double *xr = x + r * R;
        double mean = 0, var = 0;
        if (!rms) {
            for (int64_t j = 0; j < R; j++) mean += xr[j];
            mean /= (double)R;
        }
        for (int64_t j = 0; j < R; j++) var += (xr[j] - mean) * (xr[j] - mean);
        var /= (double)R;
        double rstd = 1 / sqrt(var + eps), a = 0, c = 0;
        o->mean[r] = mean, o->rstd[r] = rstd;
        for (int64_t j = 0; j < R; j++) {
            double xh = (xr[j] - mean) * rstd, g = dy[r * R + j] * (w ? w[j] : 1);
            o->y[r * R + j] = xh * (w ? w[j] : 1) + (b ? b[j] : 0);
            a += g, c += g * xh;
            o->dw[j] += dy[r * R + j] * xh;
            o->db[j] += dy[r * R + j];
        }
        a /= (double)R, c /= (double)R;
        for (int64_t j = 0; j < R; j++) {
            double xh = (xr[j] - mean) * rstd, g = dy[r * R + j] * (w ? w[j] : 1);
            o->dx[r * R + j] = rstd * (g - (rms ? 0 : a) - xh * c);
        }
    }
}

static void ref_alloc(ln_ref *o, int64_t rows, int64_t R) {
    o->y = calloc((size_t)(rows * R) + 1, 8), o->dx = calloc((size_t)(rows * R) + 1, 8);
    o->mean = calloc((size_t)rows + 1, 8), o->rstd = calloc((size_t)rows + 1, 8);
    o->dw = calloc((size_t)R + 1, 8), o->db = calloc((size_t)R + 1, 8);
}
static void ref_free(ln_ref *o) {
    free(o->y), free(o->dx), free(o->mean), free(o->rstd), free(o->dw), free(o->db);
}

// |got - want| <= tol (|want| + scale), element by element
static bool close_all(const void *got, aclDataType dt, const double *want, int64_t n, double tol,
                      double scale, const char *what) {
    for (int64_t i = 0; i < n; i++) {
        double g = test_load(got, i, dt);
        if (!(fabs(g - want[i]) <= tol * (fabs(want[i]) + scale))) {
            printf("    %s[%lld] = %.9g, want %.9g\n", what, (long long)i, g, want[i]);
            return false;
        }
    }
    return true;
}

static double tol_of(aclDataType dt) {
    return dt == ACL_FLOAT ? 2e-6 : dt == ACL_FLOAT16 ? 2e-3 : 1.6e-2;
}

// A [rows, R] buffer of dtype dt filled from r, and its values as doubles.
static void *filled(int64_t n, aclDataType dt, test_rng *r, double lo, double hi, double *vals) {
    void *p = test_dev_alloc((size_t)n * aclDataTypeSize(dt) + 8);
    test_fill(p, 0, n, dt, r, lo, hi);
    for (int64_t i = 0; i < n; i++) vals[i] = test_load(p, i, dt);
    return p;
}

// ---- status paths ------------------------------------------------------------------------------

static void test_layer_norm_errors(void) {
    int64_t d[2] = {2, 4}, d4[1] = {4}, d3[1] = {3}, s[2] = {2, 1};
    void *buf = test_dev_alloc(256);
    aclTensor *x = test_tensor(d, 2, ACL_FLOAT, buf), *out = test_tensor(d, 2, ACL_FLOAT, buf);
    aclTensor *w = test_tensor(d4, 1, ACL_FLOAT, buf), *w3 = test_tensor(d3, 1, ACL_FLOAT, buf);
    aclTensor *xi = test_tensor(d, 2, ACL_INT32, buf), *st = test_tensor(s, 2, ACL_FLOAT, buf);
    aclTensor *st_bad = test_tensor(d, 2, ACL_FLOAT, buf);
    int64_t four = 4, three = 3, two_four[2] = {2, 4};
    aclIntArray *ns = aclCreateIntArray(&four, 1), *ns3 = aclCreateIntArray(&three, 1);
    aclIntArray *ns_long = aclCreateIntArray((int64_t[]){1, 2, 4}, 3);
    aclIntArray *ns2 = aclCreateIntArray(two_four, 2);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(NULL, ns, w, w, 1e-5, out, st, st, &ws, &e), 161001);
    CHECK_MSG("input");
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(x, NULL, w, w, 1e-5, out, st, st, &ws, &e), 161001);
    CHECK_MSG("normalizedShape");
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(x, ns, w, w, 1e-5, NULL, st, st, &ws, &e), 161001);
    CHECK_MSG("out");
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(x, ns3, w, w, 1e-5, out, st, st, &ws, &e), 161002);
    CHECK_MSG("normalizedShape[0] = 3");
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(x, ns_long, NULL, NULL, 1e-5, out, NULL, NULL, &ws, &e),
             161002);
    CHECK_MSG("normalizedShape has 3 entries");
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(x, ns, w3, NULL, 1e-5, out, NULL, NULL, &ws, &e),
             161002);
    CHECK_MSG("weightOptional has shape [3]");
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(x, ns, NULL, NULL, 1e-5, out, st_bad, NULL, &ws, &e),
             161002);
    CHECK_MSG("meanOutOptional has shape [2,4]");
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(x, ns2, NULL, NULL, 1e-5, out, st, NULL, &ws, &e),
             161002);
    CHECK_MSG("meanOutOptional");
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(xi, ns, NULL, NULL, 1e-5, out, NULL, NULL, &ws, &e),
             161002);
    CHECK_MSG("input");
    // rank 9
    int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 4};
    aclTensor *x9 = test_tensor(d9, 9, ACL_FLOAT, buf);
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(x9, ns, NULL, NULL, 1e-5, x9, NULL, NULL, &ws, &e),
             161002);
    CHECK_MSG("input");
    // a workspace smaller than asked for (the 2-dim normalized case of a transposed input has one)
    int64_t tst[2] = {1, 2};
    aclTensor *xt = aclCreateTensor(d, 2, ACL_FLOAT, tst, 0, ACL_FORMAT_ND, (int64_t[]){8}, 1, buf);
    void *obuf = test_dev_alloc(64);
    aclTensor *o2 = test_tensor(d, 2, ACL_FLOAT, obuf);
    CHECK_EQ(aclnnLayerNormGetWorkspaceSize(xt, ns2, NULL, NULL, 1e-5, o2, NULL, NULL, &ws, &e), 0);
    CHECK(ws > 0);
    void *wsp = test_dev_alloc(ws);
    CHECK(aclnnLayerNorm(wsp, ws - 1, e, NULL) != 0);
    CHECK_MSG("smaller than");
    aclDestroyAclOpExecutor(e);
    aclrtFree(wsp), aclrtFree(obuf);
    aclDestroyTensor(xt), aclDestroyTensor(o2), aclDestroyTensor(x9);
    aclDestroyTensor(x), aclDestroyTensor(out), aclDestroyTensor(w), aclDestroyTensor(w3);
    aclDestroyTensor(xi), aclDestroyTensor(st), aclDestroyTensor(st_bad);
    aclDestroyIntArray(ns), aclDestroyIntArray(ns3), aclDestroyIntArray(ns_long);
    aclDestroyIntArray(ns2);
    aclrtFree(buf);
}

static void test_layer_norm_backward_errors(void) {
    int64_t d[2] = {2, 4}, d4[1] = {4}, s[2] = {2, 1}, s3[1] = {3};
    void *buf = test_dev_alloc(256), *obuf = test_dev_alloc(256);
    aclTensor *x = test_tensor(d, 2, ACL_FLOAT, buf), *dx = test_tensor(d, 2, ACL_FLOAT, obuf);
    aclTensor *w = test_tensor(d4, 1, ACL_FLOAT, buf), *st = test_tensor(s, 2, ACL_FLOAT, buf);
    aclTensor *dw = test_tensor(d4, 1, ACL_FLOAT, (char *)obuf + 64);
    aclTensor *st3 = test_tensor(s3, 1, ACL_FLOAT, buf);
    int64_t four = 4;
    aclIntArray *ns = aclCreateIntArray(&four, 1);
    bool all[3] = {true, true, true}, two[2] = {true, true}, m100[3] = {true, false, false};
    aclBoolArray *mask = aclCreateBoolArray(all, 3), *mask2 = aclCreateBoolArray(two, 2);
    aclBoolArray *mask100 = aclCreateBoolArray(m100, 3);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnLayerNormBackwardGetWorkspaceSize(x, x, ns, st, st, w, NULL, NULL, dx, dw, NULL,
                                                    &ws, &e),
             161001);
    CHECK_MSG("outputMask");
    CHECK_EQ(aclnnLayerNormBackwardGetWorkspaceSize(x, x, ns, st, st, w, NULL, mask, dx, dw, NULL,
                                                    &ws, &e),
             161001);
    CHECK_MSG("outputMask[2] is true but gradBiasOut is NULL");
    CHECK_EQ(aclnnLayerNormBackwardGetWorkspaceSize(x, x, ns, st, st, w, NULL, mask2, dx, dw, dw,
                                                    &ws, &e),
             161002);
    CHECK_MSG("outputMask has 2 entries");
    CHECK_EQ(aclnnLayerNormBackwardGetWorkspaceSize(x, x, ns, st3, st, w, NULL, mask100, dx, NULL,
                                                    NULL, &ws, &e),
             161002);
    CHECK_MSG("mean has 3 elements");
    CHECK_EQ(aclnnLayerNormBackwardGetWorkspaceSize(x, x, ns, st, NULL, w, NULL, mask100, dx, NULL,
                                                    NULL, &ws, &e),
             161001);
    CHECK_MSG("rstd");
    // a false mask entry's output may be NULL
    CHECK_EQ(aclnnLayerNormBackwardGetWorkspaceSize(x, x, ns, st, st, w, NULL, mask100, dx, NULL,
                                                    NULL, &ws, &e),
             0);
    aclDestroyAclOpExecutor(e);
    aclDestroyTensor(x), aclDestroyTensor(dx), aclDestroyTensor(w), aclDestroyTensor(st);
    aclDestroyTensor(dw), aclDestroyTensor(st3);
    aclDestroyIntArray(ns);
    aclDestroyBoolArray(mask), aclDestroyBoolArray(mask2), aclDestroyBoolArray(mask100);
    aclrtFree(buf), aclrtFree(obuf);
}

static void test_rms_norm_errors(void) {
    int64_t d[2] = {2, 4}, d4[1] = {4}, d24[2] = {2, 4}, s[2] = {2, 1}, d3[2] = {2, 3};
    void *buf = test_dev_alloc(256), *obuf = test_dev_alloc(256);
    aclTensor *x = test_tensor(d, 2, ACL_FLOAT, buf), *y = test_tensor(d, 2, ACL_FLOAT, obuf);
    aclTensor *g = test_tensor(d4, 1, ACL_FLOAT, buf), *g3 = test_tensor(d3, 2, ACL_FLOAT, buf);
    aclTensor *r = test_tensor(s, 2, ACL_FLOAT, (char *)obuf + 64);
    aclTensor *r16 = test_tensor(s, 2, ACL_FLOAT16, (char *)obuf + 64);
    aclTensor *dg16 = test_tensor(d4, 1, ACL_BF16, (char *)obuf + 128);
    int64_t d324[3] = {3, 2, 4};
    aclTensor *g_big = test_tensor(d324, 3, ACL_FLOAT, buf);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnRmsNormGetWorkspaceSize(x, NULL, 1e-6, y, r, &ws, &e), 161001);
    CHECK_MSG("gamma");
    CHECK_EQ(aclnnRmsNormGetWorkspaceSize(x, g, 1e-6, y, r16, &ws, &e), 161002);
    CHECK_MSG("rstdOut has dtype float16; it must be FLOAT");
    CHECK_EQ(aclnnRmsNormGetWorkspaceSize(x, g3, 1e-6, y, r, &ws, &e), 161002);
    CHECK_MSG("gamma has shape [2,3]");
    CHECK_EQ(aclnnRmsNormGetWorkspaceSize(x, g_big, 1e-6, y, r, &ws, &e), 161002);
    CHECK_MSG("gamma has rank 3");
    CHECK_EQ(aclnnRmsNormGetWorkspaceSize(x, g, 1e-6, y, y, &ws, &e), 161002);
    CHECK_MSG("rstdOut has shape [2,4]");
    CHECK_EQ(aclnnRmsNormGradGetWorkspaceSize(x, x, r, g, y, dg16, &ws, &e), 161002);
    CHECK_MSG("dgammaOut has dtype bfloat16; it must be FLOAT");
    CHECK_EQ(aclnnRmsNormGradGetWorkspaceSize(x, x, r16, g, y, r, &ws, &e), 161002);
    CHECK_MSG("rstd");
    CHECK_EQ(aclnnRmsNormGradGetWorkspaceSize(x, x, x, g, y, g, &ws, &e), 161002);
    CHECK_MSG("rstd has 8 elements");
    (void)d24;
    aclDestroyTensor(x), aclDestroyTensor(y), aclDestroyTensor(g), aclDestroyTensor(g3);
    aclDestroyTensor(r), aclDestroyTensor(r16), aclDestroyTensor(dg16), aclDestroyTensor(g_big);
    aclrtFree(buf), aclrtFree(obuf);
}

// ---- values ------------------------------------------------------------------------------------

// LayerNorm forward + backward (every mask) on x [dims] normalized over the last nR dims, with
// optional weight / bias, in dtype dt (weight / bias wdt).
static void run_layer_norm(const int64_t *dims, int ndim, int nR, bool has_w, bool has_b,
                           aclDataType dt, aclDataType wdt, uint64_t seed) {
    test_rng rng;
    test_rng_seed(&rng, seed);
    int nA = ndim - nR;
    int64_t rows = 1, R = 1, sdims[8];
    for (int d = 0; d < ndim; d++) {
        *(d < nA ? &rows : &R) *= dims[d];
        sdims[d] = d < nA ? dims[d] : 1;
    }
    int64_t n = rows * R;
    double *xv = calloc((size_t)n + 1, 8), *dyv = calloc((size_t)n + 1, 8);
    double *wv = calloc((size_t)R + 1, 8), *bv = calloc((size_t)R + 1, 8);
    void *xb = filled(n, dt, &rng, -2, 3, xv), *dyb = filled(n, dt, &rng, -1, 1, dyv);
    void *wb = filled(R, wdt, &rng, 0.5, 1.5, wv), *bb = filled(R, wdt, &rng, -1, 1, bv);
    ln_ref ref;
    ref_alloc(&ref, rows, R);
    reference(false, rows, R, xv, has_w ? wv : NULL, has_b ? bv : NULL, dyv, 1e-5, &ref);
    aclTensor *x = test_tensor(dims, ndim, dt, xb), *dy = test_tensor(dims, ndim, dt, dyb);
    aclTensor *w = has_w ? test_tensor(dims + nA, nR, wdt, wb) : NULL;
    aclTensor *b = has_b ? test_tensor(dims + nA, nR, wdt, bb) : NULL;
    void *yb = test_dev_alloc((size_t)n * 4 + 8), *mb = test_dev_alloc((size_t)rows * 4 + 8);
    void *rb = test_dev_alloc((size_t)rows * 4 + 8);
    aclTensor *y = test_tensor(dims, ndim, dt, yb);
    aclTensor *mean = test_tensor(sdims, ndim, ACL_FLOAT, mb);
    aclTensor *rstd = test_tensor(sdims, ndim, ACL_FLOAT, rb);
    aclIntArray *ns = aclCreateIntArray(dims + nA, (uint64_t)nR);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(RUN_OP(aclnnLayerNormGetWorkspaceSize(x, ns, w, b, 1e-5, y, mean, rstd, &ws, &e),
                    aclnnLayerNorm),
             0);
    double tol = tol_of(dt);
    CHECKF(close_all(yb, dt, ref.y, n, tol, 1, "y"), "layer norm y, %s", og_dtype_name(dt));
    CHECK(close_all(mb, ACL_FLOAT, ref.mean, rows, 1e-6, 1e-3, "mean"));
    CHECK(close_all(rb, ACL_FLOAT, ref.rstd, rows, 1e-5, 0, "rstd"));
    for (int m = 1; m < 8; m++) { // every outputMask with an output
        bool mask[3] = {m & 1, (m >> 1) & 1, (m >> 2) & 1};
        void *dxb = test_dev_alloc((size_t)n * 4 + 8);
        void *dwb = test_dev_alloc((size_t)R * 4 + 8), *dbb = test_dev_alloc((size_t)R * 4 + 8);
        memset(dwb, 0x7f, (size_t)R * 4); // a false entry's output must be left alone
        aclTensor *dx = test_tensor(dims, ndim, dt, dxb);
        aclTensor *dw = test_tensor(dims + nA, nR, has_w ? wdt : dt, dwb);
        aclTensor *db = test_tensor(dims + nA, nR, has_w ? wdt : dt, dbb);
        aclBoolArray *ma = aclCreateBoolArray(mask, 3);
        aclnnStatus st = aclnnLayerNormBackwardGetWorkspaceSize(
            dy, x, ns, mean, rstd, w, b, ma, mask[0] ? dx : NULL, mask[1] ? dw : NULL,
            mask[2] ? db : NULL, &ws, &e);
        CHECK_EQ(test_run(st, ws, e, aclnnLayerNormBackward, NULL), 0);
        aclDataType gdt = has_w ? wdt : dt;
        double gtol = tol_of(dt) * 4; // dy and x are read at dt, the sums in fp32
        if (mask[0]) CHECKF(close_all(dxb, dt, ref.dx, n, gtol, 1, "dx"), "mask %d", m);
        if (mask[1]) CHECKF(close_all(dwb, gdt, ref.dw, R, gtol, 1, "dw"), "mask %d", m);
        if (!mask[1]) CHECK(((unsigned char *)dwb)[0] == 0x7f);
        if (mask[2]) CHECKF(close_all(dbb, gdt, ref.db, R, gtol, 1, "db"), "mask %d", m);
        aclDestroyTensor(dx), aclDestroyTensor(dw), aclDestroyTensor(db);
        aclDestroyBoolArray(ma);
        aclrtFree(dxb), aclrtFree(dwb), aclrtFree(dbb);
    }
    aclDestroyTensor(x), aclDestroyTensor(dy), aclDestroyTensor(y), aclDestroyTensor(mean);
    aclDestroyTensor(rstd);
    if (w) aclDestroyTensor(w);
    if (b) aclDestroyTensor(b);
    aclDestroyIntArray(ns);
    aclrtFree(xb), aclrtFree(dyb), aclrtFree(wb), aclrtFree(bb), aclrtFree(yb), aclrtFree(mb);
    aclrtFree(rb);
    ref_free(&ref);
    free(xv), free(dyv), free(wv), free(bv);
}

static void test_layer_norm_values(void) {
    int64_t d2[2] = {3, 37}, d3[3] = {2, 5, 7}, d1[1] = {19};
    run_layer_norm(d2, 2, 1, true, true, ACL_FLOAT, ACL_FLOAT, 1);
    run_layer_norm(d2, 2, 1, false, false, ACL_FLOAT, ACL_FLOAT, 2);
    run_layer_norm(d3, 3, 2, true, false, ACL_FLOAT, ACL_FLOAT, 3);
    run_layer_norm(d1, 1, 1, true, true, ACL_FLOAT, ACL_FLOAT, 4);
    run_layer_norm(d3, 3, 2, true, true, ACL_FLOAT16, ACL_FLOAT, 5); // fp16 input, fp32 weight
    run_layer_norm(d2, 2, 1, true, true, ACL_BF16, ACL_BF16, 6);
    int64_t many[2] = {150, 33}; // several row groups of the weight gradients
    run_layer_norm(many, 2, 1, true, true, ACL_FLOAT, ACL_FLOAT, 7);
}

// A hand-checked case: x = [1, 2, 3, 4]: mean 2.5, var 1.25, y = (x - 2.5) / sqrt(1.25 + eps).
static void test_layer_norm_hand(void) {
    int64_t d[1] = {4}, s[1] = {1}, four = 4;
    float xv[4] = {1, 2, 3, 4}, y[4], m, r;
    void *xb = test_dev_alloc(16), *yb = test_dev_alloc(16), *mb = test_dev_alloc(4),
         *rb = test_dev_alloc(4);
    memcpy(xb, xv, 16);
    aclTensor *x = test_tensor(d, 1, ACL_FLOAT, xb), *yt = test_tensor(d, 1, ACL_FLOAT, yb);
    aclTensor *mt = test_tensor(s, 1, ACL_FLOAT, mb), *rt = test_tensor(s, 1, ACL_FLOAT, rb);
    aclIntArray *ns = aclCreateIntArray(&four, 1);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(RUN_OP(aclnnLayerNormGetWorkspaceSize(x, ns, NULL, NULL, 0.0, yt, mt, rt, &ws, &e),
                    aclnnLayerNorm),
             0);
    memcpy(y, yb, 16), memcpy(&m, mb, 4), memcpy(&r, rb, 4);
    CHECK(m == 2.5f);
    CHECK(fabsf(r - (float)(1 / sqrt(1.25))) <= 1e-7f);
    CHECK(fabsf(y[0] + 1.5f * r) <= 1e-6f && fabsf(y[3] - 1.5f * r) <= 1e-6f);
    aclDestroyTensor(x), aclDestroyTensor(yt), aclDestroyTensor(mt), aclDestroyTensor(rt);
    aclDestroyIntArray(ns);
    aclrtFree(xb), aclrtFree(yb), aclrtFree(mb), aclrtFree(rb);
}

// RmsNorm and RmsNormGrad, with rstd as [A, 1] (the forward's) and as [A].
static void run_rms(aclDataType dt, aclDataType gdt, uint64_t seed) {
    test_rng rng;
    test_rng_seed(&rng, seed);
    int64_t rows = 70, R = 45, dims[2] = {70, 45}, s2[2] = {70, 1}, s1[1] = {70}, n = rows * R;
    double *xv = calloc((size_t)n, 8), *dyv = calloc((size_t)n, 8), *gv = calloc((size_t)R, 8);
    void *xb = filled(n, dt, &rng, -2, 2, xv), *dyb = filled(n, dt, &rng, -1, 1, dyv);
    void *gb = filled(R, gdt, &rng, 0.5, 1.5, gv);
    ln_ref ref;
    ref_alloc(&ref, rows, R);
    reference(true, rows, R, xv, gv, NULL, dyv, 1e-6, &ref);
    aclTensor *x = test_tensor(dims, 2, dt, xb), *dy = test_tensor(dims, 2, dt, dyb);
    aclTensor *g = test_tensor(dims + 1, 1, gdt, gb);
    void *yb = test_dev_alloc((size_t)n * 4), *rb = test_dev_alloc((size_t)rows * 4);
    aclTensor *y = test_tensor(dims, 2, dt, yb), *r2 = test_tensor(s2, 2, ACL_FLOAT, rb);
    aclTensor *r1 = test_tensor(s1, 1, ACL_FLOAT, rb);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(RUN_OP(aclnnRmsNormGetWorkspaceSize(x, g, 1e-6, y, r2, &ws, &e), aclnnRmsNorm), 0);
    CHECK(close_all(yb, dt, ref.y, n, tol_of(dt), 1, "y"));
    CHECK(close_all(rb, ACL_FLOAT, ref.rstd, rows, 1e-6, 0, "rstd"));
    for (int k = 0; k < 2; k++) {
        void *dxb = test_dev_alloc((size_t)n * 4), *dgb = test_dev_alloc((size_t)R * 4);
        aclTensor *dx = test_tensor(dims, 2, dt, dxb),
                  *dg = test_tensor(dims + 1, 1, ACL_FLOAT, dgb);
        CHECK_EQ(RUN_OP(aclnnRmsNormGradGetWorkspaceSize(dy, x, k ? r1 : r2, g, dx, dg, &ws, &e),
                        aclnnRmsNormGrad),
                 0);
        CHECK(close_all(dxb, dt, ref.dx, n, 4 * tol_of(dt), 1, "dx"));
        CHECK(close_all(dgb, ACL_FLOAT, ref.dw, R, 4 * tol_of(dt), 1, "dgamma"));
        aclDestroyTensor(dx), aclDestroyTensor(dg);
        aclrtFree(dxb), aclrtFree(dgb);
    }
    aclDestroyTensor(x), aclDestroyTensor(dy), aclDestroyTensor(g), aclDestroyTensor(y);
    aclDestroyTensor(r1), aclDestroyTensor(r2);
    aclrtFree(xb), aclrtFree(dyb), aclrtFree(gb), aclrtFree(yb), aclrtFree(rb);
    ref_free(&ref);
    free(xv), free(dyv), free(gv);
}

static void test_rms_values(void) {
    run_rms(ACL_FLOAT, ACL_FLOAT, 11);
    run_rms(ACL_BF16, ACL_FLOAT, 12);
    run_rms(ACL_FLOAT16, ACL_FLOAT16, 13);
}

// x and out transposed ([4, 3] views of [3, 4] storage), normalized over both dims: the dims do
// not coalesce, so the operands go through the gather / scatter copies.
static void test_layer_norm_transposed(void) {
    int64_t d[2] = {4, 3}, st[2] = {1, 4}, storage = 12, s[2] = {1, 1};
    float xs[12], out[12];
    for (int i = 0; i < 12; i++) xs[i] = (float)(i * i % 7) - 2.5f;
    void *xb = test_dev_alloc(48), *ob = test_dev_alloc(48), *mb = test_dev_alloc(4),
         *rb = test_dev_alloc(4);
    memcpy(xb, xs, 48);
    aclTensor *x = aclCreateTensor(d, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, &storage, 1, xb);
    aclTensor *o = aclCreateTensor(d, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, &storage, 1, ob);
    aclTensor *m = test_tensor(s, 2, ACL_FLOAT, mb), *r = test_tensor(s, 2, ACL_FLOAT, rb);
    aclIntArray *ns = aclCreateIntArray(d, 2);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(RUN_OP(aclnnLayerNormGetWorkspaceSize(x, ns, NULL, NULL, 1e-5, o, m, r, &ws, &e),
                    aclnnLayerNorm),
             0);
    memcpy(out, ob, 48);
    double mean = 0, var = 0;
    for (int i = 0; i < 12; i++) mean += xs[i] / 12.0;
    for (int i = 0; i < 12; i++) var += (xs[i] - mean) * (xs[i] - mean) / 12.0;
    for (int i = 0; i < 12; i++) // the same storage position: elementwise
        CHECKF(fabs(out[i] - (xs[i] - mean) / sqrt(var + 1e-5)) < 1e-5, "out[%d] = %g", i, out[i]);
    aclDestroyTensor(x), aclDestroyTensor(o), aclDestroyTensor(m), aclDestroyTensor(r);
    aclDestroyIntArray(ns);
    aclrtFree(xb), aclrtFree(ob), aclrtFree(mb), aclrtFree(rb);
}

// No rows: the weight / bias gradients are sums over nothing, written as 0.
static void test_empty(void) {
    int64_t d[2] = {0, 5}, w5[1] = {5}, s[2] = {0, 1}, five = 5;
    void *buf = test_dev_alloc(64), *dwb = test_dev_alloc(20), *dbb = test_dev_alloc(20);
    memset(dwb, 0x55, 20), memset(dbb, 0x55, 20);
    aclTensor *x = test_tensor(d, 2, ACL_FLOAT, buf), *st = test_tensor(s, 2, ACL_FLOAT, buf);
    aclTensor *w = test_tensor(w5, 1, ACL_FLOAT, buf);
    aclTensor *dw = test_tensor(w5, 1, ACL_FLOAT, dwb), *db = test_tensor(w5, 1, ACL_FLOAT, dbb);
    aclIntArray *ns = aclCreateIntArray(&five, 1);
    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    uint64_t ws;
    aclOpExecutor *e;
    void *xo = test_dev_alloc(8);
    aclTensor *dx = test_tensor(d, 2, ACL_FLOAT, xo);
    CHECK_EQ(RUN_OP(aclnnLayerNormGetWorkspaceSize(x, ns, w, w, 1e-5, dx, st, st, &ws, &e),
                    aclnnLayerNorm),
             0);
    CHECK_EQ(RUN_OP(aclnnLayerNormBackwardGetWorkspaceSize(x, x, ns, st, st, w, w, mask, dx, dw, db,
                                                           &ws, &e),
                    aclnnLayerNormBackward),
             0);
    for (int j = 0; j < 5; j++) CHECK(((float *)dwb)[j] == 0 && ((float *)dbb)[j] == 0);
    aclDestroyTensor(x), aclDestroyTensor(st), aclDestroyTensor(w), aclDestroyTensor(dw);
    aclDestroyTensor(db), aclDestroyTensor(dx);
    aclDestroyIntArray(ns);
    aclDestroyBoolArray(mask);
    aclrtFree(buf), aclrtFree(dwb), aclrtFree(dbb), aclrtFree(xo);
}

// The weight gradients over many row groups: the same bits at 1, 2, 3 threads and every ISA.
static void test_deterministic(void) {
    int64_t rows = 1000, R = 77, dims[2] = {1000, 77}, s[2] = {1000, 1}, n = rows * R;
    test_rng rng;
    test_rng_seed(&rng, 21);
    double *tmp = calloc((size_t)n, 8);
    void *xb = filled(n, ACL_FLOAT, &rng, -2, 2, tmp),
         *dyb = filled(n, ACL_FLOAT, &rng, -1, 1, tmp);
    void *wb = filled(R, ACL_FLOAT, &rng, 0.5, 1.5, tmp);
    void *mb = test_dev_alloc((size_t)rows * 4), *rb = test_dev_alloc((size_t)rows * 4);
    void *yb = test_dev_alloc((size_t)n * 4);
    aclTensor *x = test_tensor(dims, 2, ACL_FLOAT, xb), *dy = test_tensor(dims, 2, ACL_FLOAT, dyb);
    aclTensor *w = test_tensor(dims + 1, 1, ACL_FLOAT, wb),
              *y = test_tensor(dims, 2, ACL_FLOAT, yb);
    aclTensor *m = test_tensor(s, 2, ACL_FLOAT, mb), *r = test_tensor(s, 2, ACL_FLOAT, rb);
    aclIntArray *ns = aclCreateIntArray(dims + 1, 1);
    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(
        RUN_OP(aclnnLayerNormGetWorkspaceSize(x, ns, w, w, 1e-5, y, m, r, &ws, &e), aclnnLayerNorm),
        0);
    float *first = NULL;
    int threads = opgrad_get_num_threads();
    opgrad_isa top = opgrad_set_max_isa(OPGRAD_ISA_AMX);
    for (int isa = 0; isa <= (int)top; isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        for (int t = 1; t <= 3; t++) {
            opgrad_set_num_threads(t);
            void *dxb = test_dev_alloc((size_t)n * 4), *dwb = test_dev_alloc((size_t)R * 4),
                 *dbb = test_dev_alloc((size_t)R * 4);
            aclTensor *dx = test_tensor(dims, 2, ACL_FLOAT, dxb);
            aclTensor *dw = test_tensor(dims + 1, 1, ACL_FLOAT, dwb);
            aclTensor *db = test_tensor(dims + 1, 1, ACL_FLOAT, dbb);
            CHECK_EQ(RUN_OP(aclnnLayerNormBackwardGetWorkspaceSize(dy, x, ns, m, r, w, w, mask, dx,
                                                                   dw, db, &ws, &e),
                            aclnnLayerNormBackward),
                     0);
            float *all_out = malloc((size_t)(n + 2 * R) * 4);
            memcpy(all_out, dxb, (size_t)n * 4);
            memcpy(all_out + n, dwb, (size_t)R * 4);
            memcpy(all_out + n + R, dbb, (size_t)R * 4);
            if (!first)
                first = all_out;
            else {
                CHECKF(!memcmp(first, all_out, (size_t)(n + 2 * R) * 4),
                       "isa %d, %d threads differ", isa, t);
                free(all_out);
            }
            aclDestroyTensor(dx), aclDestroyTensor(dw), aclDestroyTensor(db);
            aclrtFree(dxb), aclrtFree(dwb), aclrtFree(dbb);
        }
    }
    opgrad_set_max_isa(top);
    opgrad_set_num_threads(threads);
    free(first), free(tmp);
    aclDestroyTensor(x), aclDestroyTensor(dy), aclDestroyTensor(w), aclDestroyTensor(y);
    aclDestroyTensor(m), aclDestroyTensor(r);
    aclDestroyIntArray(ns);
    aclDestroyBoolArray(mask);
    aclrtFree(xb), aclrtFree(dyb), aclrtFree(wb), aclrtFree(mb), aclrtFree(rb), aclrtFree(yb);
}

// The residual forms against LayerNorm / RmsNorm / LayerNormBackward on x = x1 + x2 (+ bias).
static void test_residual(void) {
    enum { ROWS = 37, R = 21, N = ROWS * R };
    int64_t d[2] = {ROWS, R}, g[1] = {R}, s[2] = {ROWS, 1};
    test_rng rng;
    test_rng_seed(&rng, 31);
    double tmp[N];
    float *x1 = filled(N, ACL_FLOAT, &rng, -2, 2, tmp),
          *x2 = filled(N, ACL_FLOAT, &rng, -2, 2, tmp);
    float *bx = filled(N, ACL_FLOAT, &rng, -1, 1, tmp),
          *bg = filled(R, ACL_FLOAT, &rng, -1, 1, tmp);
    float *gm = filled(R, ACL_FLOAT, &rng, 0.5, 1.5, tmp),
          *bt = filled(R, ACL_FLOAT, &rng, -1, 1, tmp);
    float *dy = filled(N, ACL_FLOAT, &rng, -1, 1, tmp),
          *ds = filled(N, ACL_FLOAT, &rng, -1, 1, tmp);
    aclTensor *t1 = test_tensor(d, 2, ACL_FLOAT, x1), *t2 = test_tensor(d, 2, ACL_FLOAT, x2);
    aclTensor *tbx = test_tensor(d, 2, ACL_FLOAT, bx), *tbg = test_tensor(g, 1, ACL_FLOAT, bg);
    aclTensor *tg = test_tensor(g, 1, ACL_FLOAT, gm), *tb = test_tensor(g, 1, ACL_FLOAT, bt);
    aclTensor *tdy = test_tensor(d, 2, ACL_FLOAT, dy), *tds = test_tensor(d, 2, ACL_FLOAT, ds);
    float *x = test_dev_alloc(N * 4), *y = test_dev_alloc(N * 4), *xo = test_dev_alloc(N * 4);
    float *y_ref = test_dev_alloc(N * 4), *m = test_dev_alloc(ROWS * 4),
          *r = test_dev_alloc(ROWS * 4);
    float *m_ref = test_dev_alloc(ROWS * 4), *r_ref = test_dev_alloc(ROWS * 4);
    aclTensor *tx = test_tensor(d, 2, ACL_FLOAT, x), *ty = test_tensor(d, 2, ACL_FLOAT, y);
    aclTensor *txo = test_tensor(d, 2, ACL_FLOAT, xo), *tyr = test_tensor(d, 2, ACL_FLOAT, y_ref);
    aclTensor *tm = test_tensor(s, 2, ACL_FLOAT, m), *tr = test_tensor(s, 2, ACL_FLOAT, r);
    aclTensor *tmr = test_tensor(s, 2, ACL_FLOAT, m_ref),
              *trr = test_tensor(s, 2, ACL_FLOAT, r_ref);
    int64_t rr = R;
    aclIntArray *ns = aclCreateIntArray(&rr, 1);
    uint64_t ws;
    aclOpExecutor *e;
    for (int bias = 0; bias < 3; bias++) { // none, gamma's shape, x1's shape
        const float *bv = bias == 1 ? bg : bx;
        for (int i = 0; i < N; i++) x[i] = x1[i] + x2[i] + (bias ? bv[bias == 1 ? i % R : i] : 0);
        memset(xo, 0x7f, N * 4);
        CHECK_EQ(
            RUN_OP(aclnnAddLayerNormGetWorkspaceSize(t1, t2, tg, tb,
                                                     bias == 0   ? NULL
                                                     : bias == 1 ? tbg
                                                                 : tbx,
                                                     1e-5, bias != 2, ty, tm, tr, txo, &ws, &e),
                   aclnnAddLayerNorm),
            0);
        CHECK_EQ(
            RUN_OP(aclnnLayerNormGetWorkspaceSize(tx, ns, tg, tb, 1e-5, tyr, tmr, trr, &ws, &e),
                   aclnnLayerNorm),
            0);
        for (int i = 0; i < N; i++) {
            CHECKF(fabsf(y[i] - y_ref[i]) <= 2e-5f * (1 + fabsf(y_ref[i])), "bias %d y[%d]", bias,
                   i);
            if (bias != 2)
                CHECKF(xo[i] == x[i], "bias %d xOut[%d] = %g, want %g", bias, i, xo[i], x[i]);
        }
        if (bias == 2) CHECK(((unsigned char *)xo)[0] == 0x7f); // additionalOutput false
        for (int i = 0; i < ROWS; i++)
            CHECK(fabsf(m[i] - m_ref[i]) <= 1e-6f * (1 + fabsf(m_ref[i])) &&
                  fabsf(r[i] - r_ref[i]) <= 1e-6f * r_ref[i]);
    }
    // additionalOutput with a NULL xOut
    CHECK_EQ(aclnnAddLayerNormGetWorkspaceSize(t1, t2, tg, tb, NULL, 1e-5, true, ty, tm, tr, NULL,
                                               &ws, &e),
             161001);
    CHECK_MSG("xOut");
    // AddLayerNormGrad (x = x1 + x2, no bias) against LayerNormBackward, with and without dsum
    for (int i = 0; i < N; i++) x[i] = x1[i] + x2[i];
    CHECK_EQ(RUN_OP(aclnnLayerNormGetWorkspaceSize(tx, ns, tg, tb, 1e-5, tyr, tmr, trr, &ws, &e),
                    aclnnLayerNorm),
             0);
    float *dx = test_dev_alloc(N * 4), *dx_ref = test_dev_alloc(N * 4);
    float *dg = test_dev_alloc(R * 4), *db = test_dev_alloc(R * 4), *dg_ref = test_dev_alloc(R * 4),
          *db_ref = test_dev_alloc(R * 4);
    aclTensor *tdx = test_tensor(d, 2, ACL_FLOAT, dx), *tdxr = test_tensor(d, 2, ACL_FLOAT, dx_ref);
    aclTensor *tdg = test_tensor(g, 1, ACL_FLOAT, dg), *tdb = test_tensor(g, 1, ACL_FLOAT, db);
    aclTensor *tdgr = test_tensor(g, 1, ACL_FLOAT, dg_ref),
              *tdbr = test_tensor(g, 1, ACL_FLOAT, db_ref);
    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    CHECK_EQ(RUN_OP(aclnnLayerNormBackwardGetWorkspaceSize(tdy, tx, ns, tmr, trr, tg, tb, mask,
                                                           tdxr, tdgr, tdbr, &ws, &e),
                    aclnnLayerNormBackward),
             0);
    for (int with_dsum = 0; with_dsum < 2; with_dsum++) {
        CHECK_EQ(RUN_OP(aclnnAddLayerNormGradGetWorkspaceSize(tdy, t1, t2, trr, tmr, tg,
                                                              with_dsum ? tds : NULL, tdx, tdg, tdb,
                                                              &ws, &e),
                        aclnnAddLayerNormGrad),
                 0);
        for (int i = 0; i < N; i++) {
            float want = dx_ref[i] + (with_dsum ? ds[i] : 0);
            CHECKF(fabsf(dx[i] - want) <= 1e-5f * (1 + fabsf(want)), "dx[%d] = %g, want %g", i,
                   dx[i], want);
        }
        // dbeta sums dy in the same order: the same bits; dgamma's x - mean is formed with
        // x1 + x2's rounding error put back (more accurately than from the fp32 x)
        for (int j = 0; j < R; j++)
            CHECK(fabsf(dg[j] - dg_ref[j]) <= 1e-5f * (1 + fabsf(dg_ref[j])) && db[j] == db_ref[j]);
    }
    // dxOut may not share dy's memory (it is written first); in place over x1 it may
    CHECK_EQ(aclnnAddLayerNormGradGetWorkspaceSize(tdy, t1, t2, trr, tmr, tg, NULL, tdy, tdg, tdb,
                                                   &ws, &e),
             161002);
    CHECK_MSG("dxOut shares memory with dy");
    {
        float *x1c = test_dev_alloc(N * 4);
        memcpy(x1c, x1, N * 4);
        aclTensor *t1c = test_tensor(d, 2, ACL_FLOAT, x1c);
        CHECK_EQ(RUN_OP(aclnnAddLayerNormGradGetWorkspaceSize(tdy, t1c, t2, trr, tmr, tg, NULL, t1c,
                                                              tdg, tdb, &ws, &e),
                        aclnnAddLayerNormGrad),
                 0);
        for (int i = 0; i < N; i++)
            CHECK(fabsf(x1c[i] - dx_ref[i]) <= 1e-5f * (1 + fabsf(dx_ref[i])));
        // AddLayerNorm in place: yOut over x1
        memcpy(x1c, x1, N * 4);
        CHECK_EQ(RUN_OP(aclnnAddLayerNormGetWorkspaceSize(t1c, t2, tg, tb, NULL, 1e-5, false, t1c,
                                                          tm, tr, NULL, &ws, &e),
                        aclnnAddLayerNorm),
                 0);
        CHECK_EQ(
            RUN_OP(aclnnLayerNormGetWorkspaceSize(tx, ns, tg, tb, 1e-5, tyr, tmr, trr, &ws, &e),
                   aclnnLayerNorm),
            0);
        for (int i = 0; i < N; i++)
            CHECK(fabsf(x1c[i] - y_ref[i]) <= 2e-5f * (1 + fabsf(y_ref[i])));
        aclDestroyTensor(t1c);
        aclrtFree(x1c);
    }
    // AddRmsNorm: xOut = x1 + x2, y = RmsNorm(x1 + x2)
    CHECK_EQ(RUN_OP(aclnnAddRmsNormGetWorkspaceSize(t1, t2, tg, 1e-6, ty, tr, txo, &ws, &e),
                    aclnnAddRmsNorm),
             0);
    CHECK_EQ(RUN_OP(aclnnRmsNormGetWorkspaceSize(tx, tg, 1e-6, tyr, trr, &ws, &e), aclnnRmsNorm),
             0);
    for (int i = 0; i < N; i++)
        CHECK(xo[i] == x[i] && fabsf(y[i] - y_ref[i]) <= 2e-6f * (1 + fabsf(y_ref[i])));
    aclTensor *ts[] = {t1,  t2, tbx, tbg, tg,  tb,  tdy,  tds, tx,  ty,   txo,
                       tyr, tm, tr,  tmr, trr, tdx, tdxr, tdg, tdb, tdgr, tdbr};
    for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) aclDestroyTensor(ts[k]);
    void *bufs[] = {x1,    x2, bx, bg,    gm,    bt, dy,     ds, x,  y,      xo,
                    y_ref, m,  r,  m_ref, r_ref, dx, dx_ref, dg, db, dg_ref, db_ref};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++) aclrtFree(bufs[k]);
    aclDestroyIntArray(ns);
    aclDestroyBoolArray(mask);
}

int main(void) {
    RUN(test_layer_norm_errors);
    RUN(test_layer_norm_backward_errors);
    RUN(test_rms_norm_errors);
    RUN(test_layer_norm_hand);
    RUN(test_layer_norm_values);
    RUN(test_rms_values);
    RUN(test_layer_norm_transposed);
    RUN(test_empty);
    RUN(test_deterministic);
    RUN(test_residual);
    return test_summary();
}
