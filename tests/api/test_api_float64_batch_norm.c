/* float64 BatchNorm and GroupNorm through the aclnn API (opgrad's extension: a DOUBLE input makes
 * the call float64). What the checker's float64 rows do not see: data whose fp32 statistics would
 * lose most digits (a mean of 1e4 with a spread of 1: fp32 holds x to 1e-3), rows long
 * enough for the fp32 row kernels (the float64 call must take its own steps), float32 weights,
 * running statistics and gradOut promoted, the momentum update in double, and the refusal of a
 * DOUBLE tensor with a FLOAT input. References in long double. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_batch_norm.h"
#include "aclnnop/aclnn_batch_norm_backward.h"
#include "aclnnop/aclnn_group_norm.h"
#include "aclnnop/aclnn_group_norm_backward.h"
#include "test.h"
#include "testutil.h"

#define N 2
#define C 3
#define L 10 // rows of 10 >= 8: the fp32 path would take the row kernels
#define EPS 1e-5

typedef test_buf buf;

static double *d(const buf *b) { return (double *)b->data; }
static float *f(const buf *b) { return (float *)b->data; }

static const int64_t XD[3] = {N, C, L}, CD[1] = {C};

// x around 1e4 (per channel c: 1e4 + c + a spread of about 1). Even exact, the mean rounds to
// double within 2^-53 1e4 ~ 1.1e-12, an error every value normalised with it carries (times rstd
// ~ 1.6): hence TOL_X for what depends on x - mean. float32 would be ~1e-4 off.
#define X0 1e4
#define TOL_X 1e-11
static double xval(int i) { return X0 + (i / L % C) + sin(1.7 * i) * (1 + 0.1 * (i % 7)); }
static double gval(int i) { return cos(0.9 * i) - 0.2; }

// |got - want| <= tol |want| + tol, element by element.
static void close_to(const double *got, const long double *want, int n, double tol,
                     const char *what) {
    for (int i = 0; i < n; i++) {
        double e = fabs(got[i] - (double)want[i]);
        CHECKF(e <= tol * (fabsl(want[i]) + 1), "%s[%d]: %.17g, want %.17Lg", what, i, got[i],
               want[i]);
    }
}

// BatchNorm training: statistics, output, running statistics (float32 in, updated in double and
// rounded once), then the backward with a float32 gradOut.
static void test_batch_norm_training(void) {
    buf x = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1),
        y = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1), g = test_buf_new(XD, 3, ACL_FLOAT, NULL, -1);
    buf w = test_buf_new(CD, 1, ACL_FLOAT, NULL, -1), b = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        rm = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        rv = test_buf_new(CD, 1, ACL_FLOAT, NULL, -1),
        sm = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        si = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1);
    buf gx = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1),
        gw = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        gb = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1);
    for (int i = 0; i < N * C * L; i++) d(&x)[i] = xval(i), f(&g)[i] = (float)gval(i);
    for (int c = 0; c < C; c++)
        f(&w)[c] = 0.5f + (float)c, d(&b)[c] = 0.1 * c, d(&rm)[c] = X0, f(&rv)[c] = 2.0f;
    aclnnStatus st;
    OP_RUN(st,
           aclnnBatchNormGetWorkspaceSize(x.t, w.t, b.t, rm.t, rv.t, true, 0.1, EPS, y.t, sm.t,
                                          si.t, &ws_, &ex_),
           aclnnBatchNorm);
    CHECK_EQ(st, ACLNN_SUCCESS);
    long double mean[C], var[C], rstd[C], want_y[N * C * L], want_rm[C], want_rv[C];
    long double want_gx[N * C * L], want_gw[C], want_gb[C];
    const int K = N * L;
    for (int c = 0; c < C; c++) {
        long double s = 0, q = 0, sg = 0, sgx = 0;
        for (int n = 0; n < N; n++)
            for (int l = 0; l < L; l++) s += xval((n * C + c) * L + l);
        mean[c] = s / K;
        for (int n = 0; n < N; n++)
            for (int l = 0; l < L; l++) q += powl(xval((n * C + c) * L + l) - mean[c], 2);
        var[c] = q / K, rstd[c] = 1 / sqrtl(var[c] + EPS);
        want_rm[c] = 0.9L * X0 + 0.1L * mean[c];
        want_rv[c] = 0.9L * 2 + 0.1L * var[c] * K / (K - 1);
        for (int n = 0; n < N; n++)
            for (int l = 0; l < L; l++) {
                int i = (n * C + c) * L + l;
                long double xh = (xval(i) - mean[c]) * rstd[c];
                want_y[i] = xh * f(&w)[c] + d(&b)[c];
                long double gi = (float)gval(i);
                sg += gi, sgx += gi * xh;
            }
        want_gw[c] = sgx, want_gb[c] = sg;
        for (int n = 0; n < N; n++)
            for (int l = 0; l < L; l++) {
                int i = (n * C + c) * L + l;
                long double xh = (xval(i) - mean[c]) * rstd[c], gi = (float)gval(i);
                want_gx[i] = f(&w)[c] * rstd[c] * (gi - sg / K - xh * sgx / K);
            }
    }
    close_to(d(&sm), mean, C, 1e-15, "saveMean");
    close_to(d(&si), rstd, C, TOL_X, "saveInvstd");
    close_to(d(&y), want_y, N * C * L, TOL_X, "output");
    close_to(d(&rm), want_rm, C, 1e-15, "runningMean");
    for (int c = 0; c < C; c++) // a FLOAT runningVar: the double update rounded once
        CHECKF(f(&rv)[c] == (float)want_rv[c], "runningVar[%d]: %.9g, want %.9g", c, f(&rv)[c],
               (float)want_rv[c]);

    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    OP_RUN(st,
           aclnnBatchNormBackwardGetWorkspaceSize(g.t, x.t, w.t, NULL, NULL, sm.t, si.t, true, EPS,
                                                  mask, gx.t, gw.t, gb.t, &ws_, &ex_),
           aclnnBatchNormBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    close_to(d(&gx), want_gx, N * C * L, TOL_X, "gradInput");
    close_to(d(&gw), want_gw, C, TOL_X, "gradWeight");
    close_to(d(&gb), want_gb, C, 1e-15, "gradBias");
    aclDestroyBoolArray(mask);
    TEST_BUFS_FREE(&x, &y, &g, &w, &b, &rm, &rv, &sm, &si, &gx, &gw, &gb);
}

// Eval: the running statistics in double; dx = dy w / sqrt(runningVar + eps).
static void test_batch_norm_eval(void) {
    buf x = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1),
        y = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1),
        g = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1);
    buf w = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        rm = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        rv = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        sm = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        si = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1);
    buf gx = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1);
    for (int i = 0; i < N * C * L; i++) d(&x)[i] = xval(i), d(&g)[i] = gval(i);
    for (int c = 0; c < C; c++)
        d(&w)[c] = 1.0 / 3 + c, d(&rm)[c] = X0 + c, d(&rv)[c] = 0.1 * c + 0.7;
    aclnnStatus st;
    OP_RUN(st,
           aclnnBatchNormGetWorkspaceSize(x.t, w.t, NULL, rm.t, rv.t, false, 0.1, EPS, y.t, sm.t,
                                          si.t, &ws_, &ex_),
           aclnnBatchNorm);
    CHECK_EQ(st, ACLNN_SUCCESS);
    long double want_y[N * C * L], want_gx[N * C * L];
    for (int i = 0; i < N * C * L; i++) {
        int c = i / L % C;
        long double r = 1 / sqrtl((long double)d(&rv)[c] + EPS);
        want_y[i] = ((long double)xval(i) - d(&rm)[c]) * r * d(&w)[c];
        want_gx[i] = (long double)gval(i) * d(&w)[c] * r;
    }
    close_to(d(&y), want_y, N * C * L, TOL_X, "output");
    bool m[3] = {true, false, false};
    aclBoolArray *mask = aclCreateBoolArray(m, 3);
    OP_RUN(st,
           aclnnBatchNormBackwardGetWorkspaceSize(g.t, x.t, w.t, rm.t, rv.t, sm.t, si.t, false, EPS,
                                                  mask, gx.t, NULL, NULL, &ws_, &ex_),
           aclnnBatchNormBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    close_to(d(&gx), want_gx, N * C * L, 1e-15, "gradInput");
    aclDestroyBoolArray(mask);
    TEST_BUFS_FREE(&x, &y, &g, &w, &rm, &rv, &sm, &si, &gx);
}

// GroupNorm, 1 group over [N, C, L] (a group of 30 values at 1e4), forward and backward.
static void test_group_norm(void) {
    const int64_t ND[2] = {N, 1};
    buf x = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1),
        y = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1),
        g = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1);
    buf gm = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        bt = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        mo = test_buf_new(ND, 2, ACL_DOUBLE, NULL, -1),
        ro = test_buf_new(ND, 2, ACL_DOUBLE, NULL, -1);
    buf gx = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1),
        gg = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        gb = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1);
    for (int i = 0; i < N * C * L; i++) d(&x)[i] = xval(i), d(&g)[i] = gval(i);
    for (int c = 0; c < C; c++) d(&gm)[c] = 1.25 - 0.5 * c, d(&bt)[c] = c / 7.0;
    aclnnStatus st;
    OP_RUN(st,
           aclnnGroupNormGetWorkspaceSize(x.t, gm.t, bt.t, N, C, L, 1, EPS, y.t, mo.t, ro.t, &ws_,
                                          &ex_),
           aclnnGroupNorm);
    CHECK_EQ(st, ACLNN_SUCCESS);
    const int M = C * L;
    long double mean[N], rstd[N], want_y[N * C * L], want_gx[N * C * L], want_gg[C] = {0},
                                                                         want_gb[C] = {0};
    for (int n = 0; n < N; n++) {
        long double s = 0, q = 0, m1 = 0, m2 = 0;
        for (int j = 0; j < M; j++) s += xval(n * M + j);
        mean[n] = s / M;
        for (int j = 0; j < M; j++) q += powl(xval(n * M + j) - mean[n], 2);
        rstd[n] = 1 / sqrtl(q / M + EPS);
        for (int j = 0; j < M; j++) {
            int i = n * M + j, c = j / L;
            long double xh = (xval(i) - mean[n]) * rstd[n];
            want_y[i] = xh * d(&gm)[c] + d(&bt)[c];
            want_gg[c] += gval(i) * xh, want_gb[c] += gval(i);
            m1 += gval(i) * d(&gm)[c], m2 += gval(i) * d(&gm)[c] * xh;
        }
        for (int j = 0; j < M; j++) {
            int i = n * M + j, c = j / L;
            long double xh = (xval(i) - mean[n]) * rstd[n];
            want_gx[i] = rstd[n] * (gval(i) * d(&gm)[c] - m1 / M - xh * m2 / M);
        }
    }
    close_to(d(&mo), mean, N, 1e-15, "meanOut");
    close_to(d(&ro), rstd, N, TOL_X, "rstdOut");
    close_to(d(&y), want_y, N * C * L, TOL_X, "out");
    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    OP_RUN(st,
           aclnnGroupNormBackwardGetWorkspaceSize(g.t, x.t, mo.t, ro.t, gm.t, N, C, L, 1, mask,
                                                  gx.t, gg.t, gb.t, &ws_, &ex_),
           aclnnGroupNormBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    close_to(d(&gx), want_gx, N * C * L, TOL_X, "gradInput");
    close_to(d(&gg), want_gg, C, TOL_X, "gradGammaOut");
    close_to(d(&gb), want_gb, C, 1e-15, "gradBetaOut");
    aclDestroyBoolArray(mask);
    TEST_BUFS_FREE(&x, &y, &g, &gm, &bt, &mo, &ro, &gx, &gg, &gb);
}

// A DOUBLE tensor with a FLOAT input: 161002 naming it (float64 runs only in double throughout).
static void test_double_needs_a_double_input(void) {
    const int64_t ND[2] = {N, 1};
    buf x = test_buf_new(XD, 3, ACL_FLOAT, NULL, -1), y = test_buf_new(XD, 3, ACL_FLOAT, NULL, -1),
        w = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        sm = test_buf_new(CD, 1, ACL_FLOAT, NULL, -1),
        si = test_buf_new(CD, 1, ACL_FLOAT, NULL, -1),
        g = test_buf_new(XD, 3, ACL_DOUBLE, NULL, -1),
        mo = test_buf_new(ND, 2, ACL_FLOAT, NULL, -1),
        ro = test_buf_new(ND, 2, ACL_FLOAT, NULL, -1),
        gx = test_buf_new(XD, 3, ACL_FLOAT, NULL, -1);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnBatchNormGetWorkspaceSize(x.t, w.t, NULL, NULL, NULL, true, 0.1, EPS, y.t, sm.t,
                                            si.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weight has dtype float64 but input has dtype float32");
    bool m[3] = {true, false, false};
    aclBoolArray *mask = aclCreateBoolArray(m, 3);
    CHECK_EQ(aclnnGroupNormBackwardGetWorkspaceSize(g.t, x.t, mo.t, ro.t, NULL, N, C, L, 1, mask,
                                                    gx.t, NULL, NULL, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOut has dtype float64 but input has dtype float32");
    aclDestroyBoolArray(mask);
    TEST_BUFS_FREE(&x, &y, &w, &sm, &si, &g, &mo, &ro, &gx);
}

// An empty batch (N = 0) in float64 with a float32 gradOut: the widening has nothing to copy; the
// weight and bias gradients are sums over nothing (0), and nothing crashes (BatchNorm, GroupNorm).
static void test_empty_batch(void) {
    const int64_t ED[3] = {0, C, L};
    buf x = test_buf_new(ED, 3, ACL_DOUBLE, NULL, -1), g = test_buf_new(ED, 3, ACL_FLOAT, NULL, -1),
        gx = test_buf_new(ED, 3, ACL_DOUBLE, NULL, -1);
    buf w = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        sm = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        si = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        gw = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1),
        gb = test_buf_new(CD, 1, ACL_DOUBLE, NULL, -1);
    for (int c = 0; c < C; c++) d(&gw)[c] = d(&gb)[c] = 7;
    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    aclnnStatus st;
    OP_RUN(st,
           aclnnBatchNormBackwardGetWorkspaceSize(g.t, x.t, w.t, NULL, NULL, sm.t, si.t, true, EPS,
                                                  mask, gx.t, gw.t, gb.t, &ws_, &ex_),
           aclnnBatchNormBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int c = 0; c < C; c++) CHECK(d(&gw)[c] == 0 && d(&gb)[c] == 0);
    // GroupNorm's backward alike (its statistics [0, 1])
    const int64_t ND[2] = {0, 1};
    buf mo = test_buf_new(ND, 2, ACL_DOUBLE, NULL, -1),
        ro = test_buf_new(ND, 2, ACL_DOUBLE, NULL, -1);
    for (int c = 0; c < C; c++) d(&gw)[c] = d(&gb)[c] = 7;
    OP_RUN(st,
           aclnnGroupNormBackwardGetWorkspaceSize(g.t, x.t, mo.t, ro.t, w.t, 0, C, L, 1, mask, gx.t,
                                                  gw.t, gb.t, &ws_, &ex_),
           aclnnGroupNormBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int c = 0; c < C; c++) CHECK(d(&gw)[c] == 0 && d(&gb)[c] == 0);
    test_buf_free(&mo), test_buf_free(&ro);
    aclDestroyBoolArray(mask);
    TEST_BUFS_FREE(&x, &g, &gx, &w, &sm, &si, &gw, &gb);
}

int main(void) {
    RUN(test_batch_norm_training);
    RUN(test_batch_norm_eval);
    RUN(test_group_norm);
    RUN(test_double_needs_a_double_input);
    RUN(test_empty_batch);
    return test_summary();
}
