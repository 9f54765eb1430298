/* float64 through the aclnn API for the cross-entropy family (an opgrad extension: ops-nn lists no
 * DOUBLE): CrossEntropyLoss / CrossEntropyLossGrad / NLLLoss / NLLLoss2d and the backwards. What is
 * tested here is what the checker's float64 rows do not see: int64 targets past 2^53 and an
 * ignoreIndex that equals one as a double (the targets reach the float64 kernels as integers),
 * strided int32 targets, promotion (a DOUBLE weight or output makes the program float64; a
 * float64 log-probability rounded once into fp16), 4-d NLLLoss2d, the same bits on any thread
 * count and ISA level, and the dtype refusals. (The
 * kernels' accuracy against the float64 references: `opgrad check --dtype float64`.) */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss2d.h"
#include "aclnnop/aclnn_nll_loss2d_backward.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

typedef test_buf buf;

static double *d(const buf *b) { return (double *)b->data; }

enum { N = 5, C = 7 };
static const double EPS = 0.2; // label smoothing

// log_softmax of row x[0..C) in long double.
static void logprob(const double *x, long double *lp) {
    long double m = -INFINITY, s = 0;
    for (int j = 0; j < C; j++) m = fmaxl(m, x[j]);
    for (int j = 0; j < C; j++) s += expl(x[j] - m);
    for (int j = 0; j < C; j++) lp[j] = x[j] - m - logl(s);
}

// The smoothed, weighted loss of row x with class t (t < 0: ignored) and its weight w[t].
static long double row_loss(const double *x, int64_t t, const double *w, long double *wt) {
    long double lp[C], l = 0;
    if (t < 0) return *wt = 0, 0;
    logprob(x, lp);
    *wt = w[t];
    l = -(1 - EPS) * w[t] * lp[t];
    for (int j = 0; j < C; j++) l -= EPS / C * w[j] * lp[j];
    return l;
}

static void fill(double *x, int n, double k) {
    for (int i = 0; i < n; i++) x[i] = sin(k * (i + 1)) * 3;
}

// CrossEntropyLoss (mean, DOUBLE weight, smoothing) with int64 targets: 2^53 + 1 is out of range
// (ignored) although ignoreIndex 2^53 equals it as a double, and a row on ignoreIndex 3 (a
// valid class) is ignored; then CrossEntropyLossGrad from the float64 log-probabilities.
static void test_ce_int64_targets_and_grad(void) {
    int64_t dnc[2] = {N, C}, dn[1] = {N}, dc[1] = {C}, d1[1] = {1};
    buf x = test_buf_new(dnc, 2, ACL_DOUBLE, NULL, N * C),
        t = test_buf_new(dn, 1, ACL_INT64, NULL, N), w = test_buf_new(dc, 1, ACL_DOUBLE, NULL, C),
        loss = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1),
        lp = test_buf_new(dnc, 2, ACL_DOUBLE, NULL, N * C),
        z = test_buf_new(d1, 1, ACL_FLOAT, NULL, 1), lse = test_buf_new(dn, 1, ACL_FLOAT, NULL, N);
    fill(d(&x), N * C, 0.7);
    for (int j = 0; j < C; j++) d(&w)[j] = 0.5 + 0.125 * j;
    int64_t tv[N] = {2, (1LL << 53) + 1, 6, 3, 0}, eff[N] = {2, -1, 6, -1, 0};
    memcpy(t.data, tv, sizeof tv);
    char red[] = "mean";
    aclnnStatus st;
    OP_RUN(st,
           aclnnCrossEntropyLossGetWorkspaceSize(x.t, t.t, w.t, red, 3, EPS, 0.0, false, loss.t,
                                                 lp.t, z.t, lse.t, &ws_, &ex_),
           aclnnCrossEntropyLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    long double total = 0, wsum = 0, wt;
    for (int i = 0; i < N; i++) total += row_loss(d(&x) + i * C, eff[i], d(&w), &wt), wsum += wt;
    long double want = total / wsum;
    CHECKF(fabsl(d(&loss)[0] - want) <= 16 * 0x1p-53L * fabsl(want), "loss %.17g, want %.17Lg",
           d(&loss)[0], want);
    for (int i = 0; i < N; i++) {
        long double lr[C];
        logprob(d(&x) + i * C, lr);
        for (int j = 0; j < C; j++)
            CHECKF(fabsl(d(&lp)[i * C + j] - lr[j]) <= 8 * 0x1p-53L * (fabsl(lr[j]) + 4),
                   "lp[%d][%d]", i, j);
    }
    // the grad: int64 targets only; dx = g / W ((A p - smooth w) - keep w[t] [c = t])
    buf g = test_buf_new(NULL, 0, ACL_DOUBLE, NULL, 1),
        dx = test_buf_new(dnc, 2, ACL_DOUBLE, NULL, N * C);
    d(&g)[0] = 0.75;
    OP_RUN(st,
           aclnnCrossEntropyLossGradGetWorkspaceSize(g.t, lp.t, t.t, w.t, NULL, NULL, red, 3, EPS,
                                                     0.0, dx.t, &ws_, &ex_),
           aclnnCrossEntropyLossGrad);
    CHECK_EQ(st, ACLNN_SUCCESS);
    long double wall = 0;
    for (int j = 0; j < C; j++) wall += d(&w)[j];
    for (int i = 0; i < N; i++) {
        long double lr[C];
        logprob(d(&x) + i * C, lr);
        for (int j = 0; j < C; j++) {
            long double want_g = 0;
            if (eff[i] >= 0) {
                long double a = (1 - EPS) * d(&w)[eff[i]] + EPS / C * wall;
                long double b = EPS / C * d(&w)[j] + (j == eff[i] ? (1 - EPS) * d(&w)[eff[i]] : 0);
                want_g = 0.75L / wsum * (a * expl(lr[j]) - b);
            }
            CHECKF(fabsl(d(&dx)[i * C + j] - want_g) <= 16 * 0x1p-53L * 0.75L,
                   "dx[%d][%d] %.17g, want %.17Lg", i, j, d(&dx)[i * C + j], want_g);
        }
    }
    test_buf_free(&g), test_buf_free(&dx);
    test_buf_free(&x), test_buf_free(&t), test_buf_free(&w), test_buf_free(&loss),
        test_buf_free(&lp), test_buf_free(&z), test_buf_free(&lse);
}

// A float32 input with a DOUBLE weight computes in float64 (reduction none, int32 targets of
// stride 2); logProbOut in fp16 is the float64 log-probability rounded once.
static void test_ce_promotion_strided_int32(void) {
    int64_t dnc[2] = {N, C}, dn[1] = {N}, dc[1] = {C}, d1[1] = {1}, s2[1] = {2};
    buf x = test_buf_new(dnc, 2, ACL_FLOAT, NULL, N * C),
        t = test_buf_new(dn, 1, ACL_INT32, s2, 2 * N), w = test_buf_new(dc, 1, ACL_DOUBLE, NULL, C),
        loss = test_buf_new(dn, 1, ACL_DOUBLE, NULL, N),
        lp = test_buf_new(dnc, 2, ACL_FLOAT16, NULL, N * C),
        z = test_buf_new(d1, 1, ACL_FLOAT, NULL, 1), lse = test_buf_new(dn, 1, ACL_FLOAT, NULL, N);
    double xd[N * C]; // values exact in float
    for (int i = 0; i < N * C; i++) xd[i] = ((i * 37) % 61 - 30) / 8.0 + 0x1p-20 * i;
    for (int i = 0; i < N * C; i++) ((float *)x.data)[i] = (float)xd[i];
    for (int j = 0; j < C; j++) d(&w)[j] = 1.0 / (j + 1);
    int32_t *tw = t.data;
    for (int i = 0; i < 2 * N; i++) tw[i] = i % 2 ? -5 : (i / 2 * 3) % C; // odd words: not read
    char red[] = "none";
    aclnnStatus st;
    OP_RUN(st,
           aclnnCrossEntropyLossGetWorkspaceSize(x.t, t.t, w.t, red, -100, EPS, 0.0, false, loss.t,
                                                 lp.t, z.t, lse.t, &ws_, &ex_),
           aclnnCrossEntropyLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < N; i++) {
        long double wt, want = row_loss(xd + i * C, tw[2 * i], d(&w), &wt);
        CHECKF(fabsl(d(&loss)[i] - want) <= 16 * 0x1p-53L * fabsl(want),
               "loss[%d] %.17g, want %.17Lg", i, d(&loss)[i], want);
        long double lr[C];
        logprob(xd + i * C, lr);
        for (int j = 0; j < C; j++) {
            double got = test_load(lp.data, i * C + j, ACL_FLOAT16);
            CHECKF(fabsl(got - lr[j]) <= 0x1p-11L * fabsl(lr[j]), "lp[%d][%d]", i, j);
        }
    }
    test_buf_free(&x), test_buf_free(&t), test_buf_free(&w), test_buf_free(&loss),
        test_buf_free(&lp), test_buf_free(&z), test_buf_free(&lse);
}

// NLLLoss2d on [2, C, 2, 3] in float64 (sum) and its backward, ignoreIndex 1.
static void test_nll2d(void) {
    enum { B = 2, H = 2, W = 3 };
    int64_t dx4[4] = {B, C, H, W}, dt3[3] = {B, H, W}, dc[1] = {C}, d1[1] = {1};
    buf x = test_buf_new(dx4, 4, ACL_DOUBLE, NULL, B * C * H * W),
        t = test_buf_new(dt3, 3, ACL_INT64, NULL, B * H * W),
        w = test_buf_new(dc, 1, ACL_DOUBLE, NULL, C),
        out = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1),
        tot = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1);
    fill(d(&x), B * C * H * W, 0.37);
    for (int j = 0; j < C; j++) d(&w)[j] = 0.1 * (j + 1);
    int64_t *tv = t.data;
    for (int i = 0; i < B * H * W; i++) tv[i] = (i * 5) % C; // row 3 (pixel) hits class 1
    aclnnStatus st;
    OP_RUN(st, aclnnNLLLoss2dGetWorkspaceSize(x.t, t.t, w.t, 2, 1, out.t, tot.t, &ws_, &ex_),
           aclnnNLLLoss2d);
    CHECK_EQ(st, ACLNN_SUCCESS);
    long double want = 0, wsum = 0;
    for (int b = 0; b < B; b++)
        for (int p = 0; p < H * W; p++) {
            int64_t c = tv[b * H * W + p];
            if (c == 1) continue;
            want -= d(&w)[c] * d(&x)[(b * C + c) * H * W + p], wsum += d(&w)[c];
        }
    CHECKF(fabsl(d(&out)[0] - want) <= 8 * 0x1p-53L * fabsl(want), "nll2d %.17g, want %.17Lg",
           d(&out)[0], want);
    CHECK(d(&tot)[0] == (double)wsum);
    buf g = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1),
        dx = test_buf_new(dx4, 4, ACL_DOUBLE, NULL, B * C * H * W);
    d(&g)[0] = 1.0 / 3;
    OP_RUN(
        st,
        aclnnNLLLoss2dBackwardGetWorkspaceSize(g.t, x.t, t.t, w.t, 2, 1, tot.t, dx.t, &ws_, &ex_),
        aclnnNLLLoss2dBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < H * W; p++) {
                int64_t tc = tv[b * H * W + p];
                double want_g = tc == c && tc != 1 ? -(1.0 / 3 * d(&w)[c]) : 0.0;
                CHECK(d(&dx)[(b * C + c) * H * W + p] == want_g);
            }
    test_buf_free(&g), test_buf_free(&dx);
    test_buf_free(&x), test_buf_free(&t), test_buf_free(&w), test_buf_free(&out),
        test_buf_free(&tot);
}

// The same bits on 1 and 2 threads and at every ISA level: CrossEntropyLoss (mean, weight,
// smoothing, ignored rows) and its grad over 67 rows of 1003 classes.
static void test_threads_and_isas_bitwise(void) {
    enum { TN = 67, TC = 1003, MAXRUNS = 2 + OPGRAD_ISA_COUNT };
    int64_t dnc[2] = {TN, TC}, dn[1] = {TN}, dc[1] = {TC}, d1[1] = {1};
    buf x = test_buf_new(dnc, 2, ACL_DOUBLE, NULL, TN * TC),
        t = test_buf_new(dn, 1, ACL_INT64, NULL, TN), w = test_buf_new(dc, 1, ACL_DOUBLE, NULL, TC),
        g = test_buf_new(NULL, 0, ACL_DOUBLE, NULL, 1), z = test_buf_new(d1, 1, ACL_FLOAT, NULL, 1),
        lse = test_buf_new(dn, 1, ACL_FLOAT, NULL, TN);
    fill(d(&x), TN * TC, 0.61);
    for (int j = 0; j < TC; j++) d(&w)[j] = 0.5 + (j % 13) / 8.0;
    for (int i = 0; i < TN; i++) ((int64_t *)t.data)[i] = i % 9 == 4 ? -100 : (i * 389) % TC;
    d(&g)[0] = 1.5;
    buf res[MAXRUNS][3];
    int runs = 2 + (int)opgrad_cpu_isa() + 1;
    for (int pass = 0; pass < runs; pass++) {
        // passes 0, 1: 1 and 2 threads at the best level; then 2 threads at each level
        opgrad_set_num_threads(pass == 0 ? 1 : 2);
        opgrad_set_max_isa(pass < 2 ? opgrad_cpu_isa() : (opgrad_isa)(pass - 2));
        buf *r = res[pass];
        r[0] = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1),
        r[1] = test_buf_new(dnc, 2, ACL_DOUBLE, NULL, TN * TC);
        r[2] = test_buf_new(dnc, 2, ACL_DOUBLE, NULL, TN * TC);
        char mean[] = "mean";
        aclnnStatus st;
        OP_RUN(st,
               aclnnCrossEntropyLossGetWorkspaceSize(x.t, t.t, w.t, mean, -100, 0.1, 0, false,
                                                     r[0].t, r[1].t, z.t, lse.t, &ws_, &ex_),
               aclnnCrossEntropyLoss);
        CHECK_EQ(st, ACLNN_SUCCESS);
        OP_RUN(st,
               aclnnCrossEntropyLossGradGetWorkspaceSize(g.t, r[1].t, t.t, w.t, NULL, NULL, mean,
                                                         -100, 0.1, 0, r[2].t, &ws_, &ex_),
               aclnnCrossEntropyLossGrad);
        CHECK_EQ(st, ACLNN_SUCCESS);
        if (pass > 0) {
            CHECKF(!memcmp(r[0].data, res[0][0].data, 8), "pass %d: loss", pass);
            CHECKF(!memcmp(r[1].data, res[0][1].data, TN * TC * 8), "pass %d: logProb", pass);
            CHECKF(!memcmp(r[2].data, res[0][2].data, TN * TC * 8), "pass %d: dx", pass);
        }
    }
    opgrad_set_num_threads(2);
    opgrad_set_max_isa((opgrad_isa)(OPGRAD_ISA_COUNT - 1));
    for (int pass = 0; pass < runs; pass++)
        for (int k = 0; k < 3; k++) test_buf_free(&res[pass][k]);
    test_buf_free(&x), test_buf_free(&t), test_buf_free(&w), test_buf_free(&g), test_buf_free(&z),
        test_buf_free(&lse);
}

// Dtype combinations that stay refused, naming the argument.
static void test_refusals(void) {
    int64_t dnc[2] = {N, C}, dn[1] = {N}, dc[1] = {C}, d1[1] = {1};
    buf x = test_buf_new(dnc, 2, ACL_DOUBLE, NULL, N * C),
        t = test_buf_new(dn, 1, ACL_INT64, NULL, N), tf = test_buf_new(dn, 1, ACL_DOUBLE, NULL, N),
        w32 = test_buf_new(dc, 1, ACL_FLOAT, NULL, C),
        w16 = test_buf_new(dc, 1, ACL_FLOAT16, NULL, C),
        out = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1),
        tot = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1),
        lp = test_buf_new(dnc, 2, ACL_DOUBLE, NULL, N * C),
        lse = test_buf_new(dn, 1, ACL_FLOAT, NULL, N);
    uint64_t ws;
    aclOpExecutor *e;
    // NLLLoss: the weight must have self's dtype
    CHECK_EQ(aclnnNLLLossGetWorkspaceSize(x.t, t.t, w32.t, 1, -100, out.t, tot.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weight has dtype float32; it must be float64");
    // CrossEntropyLoss: a FLOAT or DOUBLE weight only
    char red[] = "mean";
    CHECK_EQ(aclnnCrossEntropyLossGetWorkspaceSize(x.t, t.t, w16.t, red, -100, 0.0, 0.0, false,
                                                   out.t, lp.t, out.t, lse.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weightOptional has dtype");
    // a floating target
    CHECK_EQ(aclnnCrossEntropyLossGetWorkspaceSize(x.t, tf.t, NULL, red, -100, 0.0, 0.0, false,
                                                   out.t, lp.t, out.t, lse.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("target has dtype");
    test_buf_free(&x), test_buf_free(&t), test_buf_free(&tf), test_buf_free(&w32),
        test_buf_free(&w16), test_buf_free(&out), test_buf_free(&tot), test_buf_free(&lp);
    test_buf_free(&lse);
}

int main(void) {
    RUN(test_ce_int64_targets_and_grad);
    RUN(test_ce_promotion_strided_int32);
    RUN(test_nll2d);
    RUN(test_threads_and_isas_bitwise);
    RUN(test_refusals);
    return test_summary();
}
