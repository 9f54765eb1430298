/* The MindSpore aot entry points of the 2-D convolution (src/aot/aot_conv.c, docs/aot.md):
 * opgrad_Conv2d, opgrad_Conv2dNoBias and their backwards.
 *
 * - the forward in float32 (spelled both ways), float16, bfloat16 and float64 against a float64
 *   direct convolution computed here with the padding the entry point must read from y's shape
 *   ('same' with odd and even kernels, 'valid', a wider symmetric padding, groups and depthwise, a
 *   batch of 0). Bound per element: 4 u K times the sum of the terms' magnitudes (the naive bound
 *   for K terms; u = 2^-24, 2^-53 for float64) plus one rounding to y's dtype. A wrong
 *   padding split, group or tap is an error of the order of the terms and fails. y is prefilled:
 *   every element must be written;
 * - every result (y, dx, dweight, dbias) bitwise equal to aclnnConvolution /
 *   aclnnConvolutionBackward called here with the explicit attributes (stride 1, dilation 1,
 *   groups, [top, bottom, left, right] padding);
 * - errors: nparam, NULLs, ranks, a weight whose dim 1 does not divide x's channels, a bias of
 *   the wrong shape, y of the wrong rank / too small / wrong batch or channels, dy and gradient
 *   shapes and dtypes, and an aclnn refusal (keeps its message after the entry point's name);
 * - the symbols are exported from the shared library, and a call through it matches bitwise. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "aot_args.h"
#include "opgrad/custom_op.h"
#include "test.h"
#include "testutil.h"

#define ENTRIES(X)                                                                                 \
    X(Conv2d)                                                                                      \
    X(Conv2dBackward)                                                                              \
    X(Conv2dNoBias)                                                                                \
    X(Conv2dNoBiasBackward)
#define DECL(n) int opgrad_##n(int, void **, int *, int64_t **, const char **, void *, void *);
ENTRIES(DECL)
#undef DECL

static const aclDataType DTS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
#define NDTS ((int)(sizeof DTS / sizeof DTS[0]))

typedef struct geo {
    int64_t N, C, H, W, K, kh, kw, G, Ho, Wo;
} geo;

// The padding the entry points must read: total = Ho - H + kh - 1, the odd one at the end.
static void pads(const geo *g, int64_t pad[4]) {
    int64_t th = g->Ho - g->H + g->kh - 1, tw = g->Wo - g->W + g->kw - 1;
    pad[0] = th / 2, pad[1] = th - th / 2, pad[2] = tw / 2, pad[3] = tw - tw / 2;
}

// float64 y and the sum of |terms| per element, from x, w, b (NULL: none) as doubles.
static void ref_conv(const geo *g, const double *x, const double *w, const double *b, double *y,
                     double *mag) {
    int64_t pad[4];
    pads(g, pad);
    const int64_t cg = g->C / g->G, kg = g->K / g->G;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t k = 0; k < g->K; k++)
            for (int64_t oh = 0; oh < g->Ho; oh++)
                for (int64_t ow = 0; ow < g->Wo; ow++) {
                    double s = b ? b[k] : 0.0, m = b ? fabs(b[k]) : 0.0;
                    int64_t grp = k / kg;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t i = 0; i < g->kh; i++)
                            for (int64_t j = 0; j < g->kw; j++) {
                                int64_t ih = oh - pad[0] + i, iw = ow - pad[2] + j;
                                if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) continue;
                                double xv = x[((n * g->C + grp * cg + c) * g->H + ih) * g->W + iw];
                                double wv = w[((k * cg + c) * g->kh + i) * g->kw + j];
                                s += xv * wv;
                                m += fabs(xv * wv);
                            }
                    int64_t o = ((n * g->K + k) * g->Ho + oh) * g->Wo + ow;
                    y[o] = s, mag[o] = m;
                }
}

static aclTensor *tensor_of(const argset *a, int i) {
    return test_tensor(a->dims[i], a->nd[i], a->adt[i], a->p[i]);
}

// Param i of a bitwise equal to buffer want.
static void same_bits(const char *what, const argset *a, int i, const void *want) {
    CHECKF(memcmp(want, a->p[i], bytes_of(a, i)) == 0,
           "%s: params[%d] differs from the aclnn "
           "call's",
           what, i);
}

static void check_case(const geo *g, aclDataType dt, bool bias, uint64_t seed) {
    const int64_t xd[4] = {g->N, g->C, g->H, g->W}, wd[4] = {g->K, g->C / g->G, g->kh, g->kw};
    const int64_t bd[1] = {g->K}, yd[4] = {g->N, g->K, g->Ho, g->Wo};
    char what[200];
    snprintf(what, sizeof what, "%s x [%lld,%lld,%lld,%lld] w [%lld,%lld,%lld,%lld] y %lldx%lld %s",
             bias ? "Conv2d" : "Conv2dNoBias", (long long)g->N, (long long)g->C, (long long)g->H,
             (long long)g->W, (long long)g->K, (long long)(g->C / g->G), (long long)g->kh,
             (long long)g->kw, (long long)g->Ho, (long long)g->Wo, dt_str(dt, false));
    // forward params: x, w, [b], y; backward: x, w, [b], y, dy, dx, dw, [db]
    const int iy = bias ? 3 : 2, idy = iy + 1;
    argset f, b;
    memset(&f, 0, sizeof f);
    memset(&b, 0, sizeof b);
    for (argset *a = &f; a; a = a == &f ? &b : NULL) {
        arg(a, 0, xd, 4, dt, seed + 1, -1, 1);
        arg(a, 1, wd, 4, dt, seed + 2, -1, 1);
        if (bias) arg(a, 2, bd, 1, dt, seed + 3, -1, 1);
        arg(a, iy, yd, 4, dt, seed + 4, 1e3, 2e3); // prefilled: every element must be written
    }
    arg(&b, idy, yd, 4, dt, seed + 5, -1, 1);
    arg(&b, idy + 1, xd, 4, dt, seed + 6, 1e3, 2e3);
    arg(&b, idy + 2, wd, 4, dt, seed + 7, 1e3, 2e3);
    if (bias) arg(&b, idy + 3, bd, 1, dt, seed + 8, 1e3, 2e3);
    int rc = call(bias ? opgrad_Conv2d : opgrad_Conv2dNoBias, &f);
    CHECKF(rc == 0, "%s forward: rc %d: %s", what, rc, aclGetRecentErrMsg());
    rc = call(bias ? opgrad_Conv2dBackward : opgrad_Conv2dNoBiasBackward, &b);
    CHECKF(rc == 0, "%s backward: rc %d: %s", what, rc, aclGetRecentErrMsg());
    // float64 forward
    int64_t ny = f.numel[iy];
    double *xv = values(&f, 0), *wv = values(&f, 1), *bv = bias ? values(&f, 2) : NULL;
    double *yr = malloc(sizeof(double) * (size_t)(ny ? ny : 1));
    double *mag = malloc(sizeof(double) * (size_t)(ny ? ny : 1));
    ref_conv(g, xv, wv, bv, yr, mag);
    const double kterms = (double)(g->C / g->G * g->kh * g->kw + 1);
    int bad = 0;
    for (int64_t k = 0; k < ny; k++) {
        double got = test_load(f.p[iy], k, dt);
        double err = 4 * compute_u(dt) * kterms * mag[k];
        double tol = err + unit_roundoff(dt) * (fabs(yr[k]) + err) + min_subnormal(dt);
        if (!(fabs(got - yr[k]) <= tol) && bad++ < 3)
            CHECKF(false, "%s: y element %lld: %.9g, float64 %.9g (tol %.3g)", what, (long long)k,
                   got, yr[k], tol);
    }
    CHECKF(bad == 0, "%s: %d of %lld elements of y outside the bound", what, bad, (long long)ny);
    // bitwise against the aclnn calls with the explicit attributes
    int64_t pad[4], one[2] = {1, 1}, K = g->K;
    pads(g, pad);
    aclIntArray *st = aclCreateIntArray(one, 2), *dl = aclCreateIntArray(one, 2);
    aclIntArray *pd = aclCreateIntArray(pad, 4), *bs = aclCreateIntArray(&K, 1);
    const bool mv[3] = {true, true, bias};
    aclBoolArray *mask = aclCreateBoolArray(mv, 3);
    aclTensor *x = tensor_of(&f, 0), *w = tensor_of(&f, 1), *bt = bias ? tensor_of(&f, 2) : NULL;
    aclTensor *dy = tensor_of(&b, idy);
    void *ybuf = test_dev_alloc(bytes_of(&f, iy) + 1), *dxb = test_dev_alloc(bytes_of(&b, 0) + 1);
    void *dwb = test_dev_alloc(bytes_of(&b, 1) + 1);
    void *dbb = test_dev_alloc(bias ? bytes_of(&b, 2) + 1 : 1);
    aclTensor *y = test_tensor(yd, 4, dt, ybuf), *dx = test_tensor(xd, 4, dt, dxb);
    aclTensor *dw = test_tensor(wd, 4, dt, dwb), *db = bias ? test_tensor(bd, 1, dt, dbb) : NULL;
    aclnnStatus s;
    OP_RUN(
        s,
        aclnnConvolutionGetWorkspaceSize(x, w, bt, st, pd, dl, false, NULL, g->G, y, 0, &ws_, &ex_),
        aclnnConvolution);
    CHECK_EQ(s, ACLNN_SUCCESS);
    same_bits(what, &f, iy, ybuf);
    OP_RUN(s,
           aclnnConvolutionBackwardGetWorkspaceSize(dy, x, w, bias ? bs : NULL, st, pd, dl, false,
                                                    NULL, (int)g->G, mask, 0, dx, dw, db, &ws_,
                                                    &ex_),
           aclnnConvolutionBackward);
    CHECK_EQ(s, ACLNN_SUCCESS);
    same_bits(what, &b, idy + 1, dxb);
    same_bits(what, &b, idy + 2, dwb);
    if (bias) same_bits(what, &b, idy + 3, dbb);
    aclDestroyTensor(x), aclDestroyTensor(w), aclDestroyTensor(dy), aclDestroyTensor(y);
    aclDestroyTensor(dx), aclDestroyTensor(dw);
    if (bt) aclDestroyTensor(bt);
    if (db) aclDestroyTensor(db);
    aclDestroyIntArray(st), aclDestroyIntArray(dl), aclDestroyIntArray(pd), aclDestroyIntArray(bs);
    aclDestroyBoolArray(mask);
    aclrtFree(ybuf), aclrtFree(dxb), aclrtFree(dwb), aclrtFree(dbb);
    free(xv), free(wv), free(bv), free(yr), free(mag);
    args_free(&f);
    args_free(&b);
}

static void test_values(void) {
    static const geo G[] = {                                 // N, C, H, W, K, kh, kw, G, Ho, Wo
                            {2, 3, 7, 6, 4, 3, 3, 1, 7, 6},  // 'same', odd kernel: padding 1
                            {2, 3, 7, 6, 4, 4, 2, 1, 7, 6},  // 'same', even kernels: [1, 2, 0, 1]
                            {1, 4, 8, 9, 6, 3, 3, 1, 6, 7},  // 'valid'
                            {2, 4, 6, 5, 6, 3, 3, 2, 8, 7},  // padding 2, groups 2
                            {2, 6, 6, 6, 6, 3, 3, 6, 6, 6},  // depthwise
                            {3, 16, 5, 5, 8, 1, 1, 1, 5, 5}, // 1x1
                            {1, 2, 5, 7, 3, 5, 3, 1, 6, 5},  // odd totals: rows 5 (2, 3), cols 0
                            {0, 3, 5, 5, 2, 3, 3, 1, 5, 5},  // no batch: dw, db 0
                            {2, 8, 12, 10, 16, 3, 3, 4, 12, 10}};
    for (size_t c = 0; c < sizeof G / sizeof G[0]; c++)
        for (int d = 0; d < NDTS; d++)
            for (int bias = 0; bias < 2; bias++)
                check_case(&G[c], DTS[d], bias != 0, (uint64_t)(100 * c + 10 * d + bias));
}

/* ---- errors ------------------------------------------------------------------------------------
 */

#define ALL_FNS(n) opgrad_##n,
static const opgrad_aot_fn ALL[] = {ENTRIES(ALL_FNS)};
#undef ALL_FNS

static void test_errors(void) {
    aot_check_called_with_nothing(ALL, sizeof ALL / sizeof ALL[0]);
    // x, w, b, y, dy, dx, dw, db
    static const int64_t xd[] = {2, 4, 5, 5}, wd[] = {6, 2, 3, 3}, bd[] = {6}, yd[] = {2, 6, 5, 5},
                         x3[] = {2, 4, 5}, w3[] = {6, 3, 3, 3}, b7[] = {7}, y3[] = {2, 6, 5},
                         ysm[] = {2, 6, 2, 5}, yn[] = {3, 6, 5, 5}, w5[] = {5, 2, 3, 3},
                         y5[] = {2, 5, 5, 5}, b5[] = {5};
    argset a;
    memset(&a, 0, sizeof a);
    arg(&a, 0, xd, 4, ACL_FLOAT, 2, -1, 1);
    arg(&a, 1, wd, 4, ACL_FLOAT, 4, -1, 1);
    arg(&a, 2, bd, 1, ACL_FLOAT, 6, -1, 1);
    arg(&a, 3, yd, 4, ACL_FLOAT, 8, 0, 0);
    arg(&a, 4, yd, 4, ACL_FLOAT, 10, -1, 1);
    arg(&a, 5, xd, 4, ACL_FLOAT, 12, 0, 0);
    arg(&a, 6, wd, 4, ACL_FLOAT, 14, 0, 0);
    arg(&a, 7, bd, 1, ACL_FLOAT, 16, 0, 0);
    CHECK_EQ(call(opgrad_Conv2dBackward, &a), 0);
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), 0);
    CHECK_EQ(opgrad_Conv2dBackward(5, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2dBackward: nparam is 5; it takes 8 params (x, weight, bias, y, dy, dx, "
              "dweight, dbias)");
    CHECK_EQ(opgrad_Conv2dNoBias(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2dNoBias: nparam is 4; it takes 3 params (x, weight, y)");
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, NULL, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_Conv2d: shapes is NULL");
    void *keep = a.p[1];
    a.p[1] = NULL;
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_Conv2d: params[1] (weight) is NULL");
    a.p[1] = keep;
    a.nd[0] = 3, a.sh[0] = (int64_t *)x3;
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2d: x (params[0]) [2,4,5] and weight (params[1]) [6,2,3,3] must both "
              "have 4 dims");
    a.nd[0] = 4, a.sh[0] = a.dims[0];
    a.sh[1] = (int64_t *)w3;
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2d: weight (params[1]) [6,3,3,3]: its dim 1 (3) must divide x's "
              "channels (4)");
    a.sh[1] = a.dims[1];
    a.sh[2] = (int64_t *)b7;
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2d: bias (params[2]) has shape [7]; it must be [6] (weight's dim 0)");
    a.sh[2] = a.dims[2];
    a.nd[3] = 3, a.sh[3] = (int64_t *)y3;
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2d: y (params[3]) has shape [2,6,5]; it must have 4 dims");
    a.nd[3] = 4, a.sh[3] = (int64_t *)ysm;
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2d: y (params[3]) has shape [2,6,2,5]; with stride 1 and dilation 1 its "
              "spatial dim 0 must be at least 3");
    a.sh[3] = (int64_t *)yn;
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2d: y (params[3]) has shape [3,6,5,5] but the forward output has shape "
              "[2,6,5,5] (x [2,4,5,5] convolved with weight [6,2,3,3], stride 1)");
    a.sh[3] = a.dims[3];
    a.sh[4] = (int64_t *)yn;
    CHECK_EQ(call(opgrad_Conv2dBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2dBackward: dy (params[4]) has shape [3,6,5,5] but y has [2,6,5,5]");
    a.sh[4] = a.dims[4];
    a.dt[6] = "bfloat16";
    CHECK_EQ(call(opgrad_Conv2dBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2dBackward: dweight (params[6]) has dtype bfloat16 but weight is "
              "float32");
    a.dt[6] = "float32";
    a.sh[7] = (int64_t *)b7;
    CHECK_EQ(call(opgrad_Conv2dBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2dBackward: dbias (params[7]) has shape [7] but bias has [6]");
    a.sh[7] = a.dims[7];
    // an aclnn refusal keeps its message: 5 output channels do not split in 2 groups
    a.sh[1] = (int64_t *)w5, a.sh[2] = (int64_t *)b5, a.sh[3] = (int64_t *)y5;
    CHECK_EQ(opgrad_Conv2d(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Conv2d: aclnnConvolutionGetWorkspaceSize:");
    a.sh[1] = a.dims[1], a.sh[2] = a.dims[2], a.sh[3] = a.dims[3];
    CHECK_EQ(call(opgrad_Conv2dBackward, &a), 0); // all fixed again
    args_free(&a);
}

/* ---- exported from the shared library ---------------------------------------------------------
 */

#ifndef OPGRAD_SHARED_LIB
#error "OPGRAD_SHARED_LIB (the built libopgrad.so) must be defined by tests/CMakeLists.txt"
#endif

static void test_exported_from_shared_library(void) {
#define NAME(n) "opgrad_" #n,
    static const char *const names[] = {ENTRIES(NAME)};
#undef NAME
    void *h = aot_open_exported(OPGRAD_SHARED_LIB, names, sizeof names / sizeof names[0]);
    if (!h) return;
    opgrad_aot_fn shared = NULL;
    void *sym = dlsym(h, "opgrad_Conv2dNoBiasBackward");
    memcpy(&shared, &sym, sizeof shared);
    CHECK(shared != NULL);
    if (!shared) return;
    static const int64_t xd[] = {2, 4, 6, 5}, wd[] = {6, 2, 3, 2}, yd[] = {2, 6, 6, 5};
    for (int d = 0; d < NDTS; d++) {
        argset s[2];
        for (int k = 0; k < 2; k++) {
            memset(&s[k], 0, sizeof s[k]);
            arg(&s[k], 0, xd, 4, DTS[d], 1, -1, 1);
            arg(&s[k], 1, wd, 4, DTS[d], 2, -1, 1);
            arg(&s[k], 2, yd, 4, DTS[d], 3, 0, 0);
            arg(&s[k], 3, yd, 4, DTS[d], 4, -1, 1);
            arg(&s[k], 4, xd, 4, DTS[d], 5, 0, 0);
            arg(&s[k], 5, wd, 4, DTS[d], 6, 0, 0);
        }
        CHECK_EQ(call(shared, &s[0]), 0);
        CHECK_EQ(call(opgrad_Conv2dNoBiasBackward, &s[1]), 0);
        for (int i = 4; i < 6; i++)
            CHECKF(memcmp(s[0].p[i], s[1].p[i], bytes_of(&s[0], i)) == 0,
                   "shared library: params[%d] %s differs", i, dt_str(DTS[d], false));
        args_free(&s[0]);
        args_free(&s[1]);
    }
    // No dlclose: see test_aot_builtins.c (the second runtime's process-lifetime state).
}

int main(void) {
    RUN(test_values);
    RUN(test_errors);
    RUN(test_exported_from_shared_library);
    return test_summary();
}
