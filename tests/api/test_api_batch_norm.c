/* The batch_norm family through the public API: aclnnBatchNorm, aclnnBatchNormBackward,
 * aclnnGroupNorm, aclnnGroupNormBackward.
 *  - status paths: NULLs (161001, eval without running statistics, a selected gradient NULL),
 *    ranks, shapes of the per-channel tensors, outputMask size, group not dividing C, N / C / HxW
 *    not matching self, [N, group] statistics, a too-small workspace; the argument named;
 *  - values on small hand-checkable cases against float64 (training and eval, the running
 *    statistics with momentum and the unbiased variance, weight NULL), every outputMask;
 *  - strided (transposed) and NHWC inputs equal the contiguous NCHW results bitwise; empty input;
 *    1 vs 2 threads bitwise;
 *  - GroupNorm by rows (contiguous rows of >= 8 values) and by REDUCE (padded rows) against
 *    float64 with a large mean, 1 vs 2 threads bitwise;
 *  - bf16 / fp16 rows computed in place equal the buffered path bitwise on every ISA. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_batch_norm.h"
#include "aclnnop/aclnn_batch_norm_backward.h"
#include "aclnnop/aclnn_group_norm.h"
#include "aclnnop/aclnn_group_norm_backward.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

// A contiguous fp32 tensor with values v (or zeros); its memory is freed by del().
static aclTensor *mk(int ndim, const int64_t *dims, const float *v) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= dims[d];
    float *p = test_dev_alloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (v) memcpy(p, v, (size_t)n * sizeof(float));
    return test_tensor(dims, ndim, ACL_FLOAT, p);
}
static aclTensor *mk1(int64_t c, const float *v) { return mk(1, &c, v); }
static float *data(const aclTensor *t) {
    void *p = NULL;
    aclGetRawTensorAddr(t, &p);
    return p;
}
static void del(aclTensor *t) {
    if (!t) return;
    void *p = data(t);
    aclDestroyTensor(t);
    aclrtFree(p);
}

static aclnnStatus bn(const aclTensor *x, const aclTensor *w, const aclTensor *b, aclTensor *rm,
                      aclTensor *rv, bool training, aclTensor *y, aclTensor *mean,
                      aclTensor *rstd) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnBatchNormGetWorkspaceSize(x, w, b, rm, rv, training, 0.1, 1e-5, y, mean,
                                                    rstd, &ws, &e);
    return test_run(st, ws, e, aclnnBatchNorm, NULL);
}

static aclnnStatus bn_bwd(const aclTensor *g, const aclTensor *x, const aclTensor *w,
                          const aclTensor *rm, const aclTensor *rv, const aclTensor *mean,
                          const aclTensor *rstd, bool training, const bool *mask, aclTensor *gx,
                          aclTensor *gw, aclTensor *gb) {
    aclBoolArray *m = aclCreateBoolArray(mask, 3);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnBatchNormBackwardGetWorkspaceSize(g, x, w, rm, rv, mean, rstd, training,
                                                            1e-5, m, gx, gw, gb, &ws, &e);
    st = test_run(st, ws, e, aclnnBatchNormBackward, NULL);
    aclDestroyBoolArray(m);
    return st;
}

static void close_to(const float *got, const double *want, int64_t n, double tol,
                     const char *what) {
    for (int64_t i = 0; i < n; i++)
        CHECKF(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])), "%s[%lld] = %.9g, want %.9g",
               what, (long long)i, got[i], want[i]);
}

// x [2, 2, 3] (N, C, L)
static const int64_t X3[] = {2, 2, 3};
static const float XV[] = {1, 2, 4, -1, 0, 3, 2, 2, 7, 5, -3, 1};
static const float GV[] = {0.5f, -1, 2, 1, 1, -2, 3, 0.25f, -1, 2, -0.5f, 1};

static void test_statuses(void) {
    aclTensor *x = mk(3, X3, XV), *y = mk(3, X3, NULL), *m = mk1(2, NULL), *r = mk1(2, NULL);
    aclTensor *w3 = mk1(3, NULL), *rm = mk1(2, NULL), *rv = mk1(2, NULL);
    int64_t d1 = 6;
    aclTensor *x1 = mk(1, &d1, NULL);
    CHECK_EQ(bn(NULL, NULL, NULL, NULL, NULL, true, y, m, r), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("input");
    CHECK_EQ(bn(x, NULL, NULL, NULL, NULL, true, y, NULL, r), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("saveMean");
    CHECK_EQ(bn(x1, NULL, NULL, NULL, NULL, true, x1, m, r), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank");
    CHECK_EQ(bn(x, w3, NULL, NULL, NULL, true, y, m, r), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weight");
    CHECK_EQ(bn(x, NULL, NULL, rm, NULL, false, y, m, r), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("runningVar is NULL: with training false the input is normalised with runningMean "
              "and runningVar, which are required");
    CHECK_EQ(bn(x, NULL, NULL, NULL, NULL, true, y, w3, r), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("saveMean");
    // eval does not write saveMean / saveInvstd: their shape is free
    CHECK_EQ(bn(x, NULL, NULL, rm, rv, false, y, w3, w3), ACLNN_SUCCESS);
    // outputs in one place
    CHECK_EQ(bn(x, NULL, NULL, NULL, NULL, true, y, m, m), ACLNN_ERR_PARAM_INVALID);

    // backward
    bool all[3] = {true, true, true};
    CHECK_EQ(bn_bwd(x, x, NULL, NULL, NULL, m, r, true, all, NULL, m, r), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("gradInput");
    aclBoolArray *two = aclCreateBoolArray(all, 2);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnBatchNormBackwardGetWorkspaceSize(x, x, NULL, NULL, NULL, m, r, true, 1e-5, two,
                                                    y, rm, rv, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("outputMask");
    aclDestroyBoolArray(two);
    CHECK_EQ(bn_bwd(x, x, NULL, NULL, NULL, m, r, false, all, y, rm, rv), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("runningMean is NULL: with training false the gradients use runningMean and "
              "runningVar, which are required");
    CHECK_EQ(bn_bwd(x, x, w3, NULL, NULL, m, r, true, all, y, rm, rv), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weight");

    // GroupNorm
    int64_t s2[2] = {2, 1}, s3[2] = {2, 3};
    aclTensor *gm = mk(2, s2, NULL), *gr = mk(2, s2, NULL), *bad = mk(2, s3, NULL);
    CHECK_EQ(aclnnGroupNormGetWorkspaceSize(x, NULL, NULL, 2, 2, 3, 3, 1e-5, y, gm, gr, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("group");
    CHECK_EQ(aclnnGroupNormGetWorkspaceSize(x, NULL, NULL, 2, 2, 4, 1, 1e-5, y, gm, gr, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("HxW");
    CHECK_EQ(aclnnGroupNormGetWorkspaceSize(x, NULL, NULL, 2, 2, 3, 1, 1e-5, y, bad, gr, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("meanOut");
    CHECK_EQ(aclnnGroupNormGetWorkspaceSize(x, NULL, NULL, 2, 2, 3, 1, 1e-5, NULL, gm, gr, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out");
    // a workspace too small is refused in phase 2
    CHECK_EQ(aclnnGroupNormGetWorkspaceSize(x, NULL, NULL, 2, 2, 3, 1, 1e-5, y, gm, gr, &ws, &e),
             ACLNN_SUCCESS);
    if (ws > 0) {
        void *wsp = test_dev_alloc(ws);
        CHECK(aclnnGroupNorm(wsp, ws - 1, e, NULL) != ACLNN_SUCCESS);
        aclrtFree(wsp);
    }
    aclDestroyAclOpExecutor(e);
    del(gm), del(gr), del(bad), del(x), del(y), del(m), del(r), del(w3), del(rm), del(rv), del(x1);
}

// float64 BatchNorm of x [N, C, L] per channel
typedef struct bn_ref {
    double y[12], mean[2], rstd[2], var[2], gx[12], gw[2], gb[2];
} bn_ref;

static bn_ref reference(const float *x, const float *g, const float *w, const float *b) {
    bn_ref r = {0};
    int64_t N = 2, C = 2, L = 3, K = N * L;
    for (int64_t c = 0; c < C; c++) {
        double s = 0, q = 0, sg = 0, sgx = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t l = 0; l < L; l++) s += x[(n * C + c) * L + l];
        double mean = s / K;
        for (int64_t n = 0; n < N; n++)
            for (int64_t l = 0; l < L; l++) q += pow(x[(n * C + c) * L + l] - mean, 2);
        double var = q / K, rstd = 1 / sqrt(var + 1e-5);
        r.mean[c] = mean, r.var[c] = var, r.rstd[c] = rstd;
        for (int64_t n = 0; n < N; n++)
            for (int64_t l = 0; l < L; l++) {
                int64_t i = (n * C + c) * L + l;
                double xh = (x[i] - mean) * rstd;
                r.y[i] = xh * (w ? w[c] : 1) + (b ? b[c] : 0);
                sg += g[i], sgx += g[i] * xh;
            }
        r.gw[c] = sgx, r.gb[c] = sg;
        for (int64_t n = 0; n < N; n++)
            for (int64_t l = 0; l < L; l++) {
                int64_t i = (n * C + c) * L + l;
                double xh = (x[i] - mean) * rstd;
                r.gx[i] = (w ? w[c] : 1) * rstd * (g[i] - sg / K - xh * sgx / K);
            }
    }
    return r;
}

static void test_values(void) {
    static const float W[] = {1.5f, -0.5f}, B[] = {0.25f, 2}, RM[] = {0.5f, -1}, RV[] = {2, 0.5f};
    bn_ref r = reference(XV, GV, W, B);
    aclTensor *x = mk(3, X3, XV), *g = mk(3, X3, GV), *y = mk(3, X3, NULL);
    aclTensor *w = mk1(2, W), *b = mk1(2, B), *rm = mk1(2, RM), *rv = mk1(2, RV);
    aclTensor *m = mk1(2, NULL), *s = mk1(2, NULL);
    CHECK_EQ(bn(x, w, b, rm, rv, true, y, m, s), ACLNN_SUCCESS);
    close_to(data(y), r.y, 12, 1e-6, "y");
    close_to(data(m), r.mean, 2, 1e-6, "saveMean");
    close_to(data(s), r.rstd, 2, 1e-6, "saveInvstd");
    double want_rm[2], want_rv[2];
    for (int c = 0; c < 2; c++) {
        want_rm[c] = 0.9 * RM[c] + 0.1 * r.mean[c];
        want_rv[c] = 0.9 * RV[c] + 0.1 * r.var[c] * 6 / 5; // unbiased: K / (K - 1)
    }
    close_to(data(rm), want_rm, 2, 1e-6, "runningMean");
    close_to(data(rv), want_rv, 2, 1e-6, "runningVar");

    // backward, training, every mask
    for (int bits = 0; bits < 8; bits++) {
        bool mask[3] = {bits & 1, bits & 2, bits & 4};
        aclTensor *gx = mask[0] ? mk(3, X3, NULL) : NULL, *gw = mask[1] ? mk1(2, NULL) : NULL,
                  *gb = mask[2] ? mk1(2, NULL) : NULL;
        CHECK_EQ(bn_bwd(g, x, w, NULL, NULL, m, s, true, mask, gx, gw, gb), ACLNN_SUCCESS);
        double gw_want[2] = {r.gw[0], r.gw[1]};
        if (gx) close_to(data(gx), r.gx, 12, 1e-5, "gradInput");
        if (gw) close_to(data(gw), gw_want, 2, 1e-5, "gradWeight");
        if (gb) close_to(data(gb), r.gb, 2, 1e-6, "gradBias");
        del(gx), del(gw), del(gb);
    }

    // weight NULL (= 1), bias NULL (= 0)
    bn_ref r1 = reference(XV, GV, NULL, NULL);
    CHECK_EQ(bn(x, NULL, NULL, NULL, NULL, true, y, m, s), ACLNN_SUCCESS);
    close_to(data(y), r1.y, 12, 1e-6, "y (no affine)");
    aclTensor *gx = mk(3, X3, NULL);
    bool all[3] = {true, false, false};
    CHECK_EQ(bn_bwd(g, x, NULL, NULL, NULL, m, s, true, all, gx, NULL, NULL), ACLNN_SUCCESS);
    close_to(data(gx), r1.gx, 12, 1e-5, "gradInput (no weight)");

    // eval: the running statistics, constants for the gradient
    float *rmv = data(rm), *rvv = data(rv);
    double ye[12], gxe[12], gwe[2] = {0, 0};
    for (int64_t i = 0; i < 12; i++) {
        int64_t c = i / 3 % 2;
        double rs = 1 / sqrt((double)rvv[c] + 1e-5), xh = (XV[i] - rmv[c]) * rs;
        ye[i] = xh * W[c] + B[c];
        gxe[i] = GV[i] * W[c] * rs;
        gwe[c] += GV[i] * xh;
    }
    CHECK_EQ(bn(x, w, b, rm, rv, false, y, m, s), ACLNN_SUCCESS);
    close_to(data(y), ye, 12, 1e-6, "y (eval)");
    aclTensor *gw = mk1(2, NULL), *gb = mk1(2, NULL);
    bool every[3] = {true, true, true};
    CHECK_EQ(bn_bwd(g, x, w, rm, rv, m, s, false, every, gx, gw, gb), ACLNN_SUCCESS);
    close_to(data(gx), gxe, 12, 1e-6, "gradInput (eval)");
    close_to(data(gw), gwe, 2, 1e-5, "gradWeight (eval)");
    close_to(data(gb), r.gb, 2, 1e-6, "gradBias (eval)");
    del(x), del(g), del(y), del(w), del(b), del(rm), del(rv), del(m), del(s), del(gx), del(gw),
        del(gb);
}

// GroupNorm of the upstream example's shape [2, 3, 4], 1 group, and [2, 4, 3] with 2 groups
static void test_group_norm(void) {
    int64_t dims[3] = {2, 4, 3}, ng[2] = {2, 2}, c4 = 4;
    float xv[24], gv[24], gam[4] = {1, -2, 0.5f, 3}, bet[4] = {0, 1, -1, 2};
    for (int i = 0; i < 24; i++)
        xv[i] = (float)((i * 7) % 11) - 4, gv[i] = (float)((i * 5) % 7) - 3;
    aclTensor *x = mk(3, dims, xv), *g = mk(3, dims, gv), *y = mk(3, dims, NULL);
    aclTensor *ga = mk1(4, gam), *be = mk1(4, bet), *m = mk(2, ng, NULL), *r = mk(2, ng, NULL);
    uint64_t ws;
    aclOpExecutor *e;
    aclnnStatus st = aclnnGroupNormGetWorkspaceSize(x, ga, be, 2, 4, 3, 2, 1e-5, y, m, r, &ws, &e);
    CHECK_EQ(test_run(st, ws, e, aclnnGroupNorm, NULL), ACLNN_SUCCESS);
    double yw[24], gxw[24], ggw[4] = {0}, gbw[4] = {0}, mw[4], rw[4];
    for (int n = 0; n < 2; n++)
        for (int gr = 0; gr < 2; gr++) {
            int base = n * 12 + gr * 6;
            double s = 0, q = 0, sgh = 0, sghx = 0;
            for (int j = 0; j < 6; j++) s += xv[base + j];
            double mean = s / 6;
            for (int j = 0; j < 6; j++) q += pow(xv[base + j] - mean, 2);
            double rs = 1 / sqrt(q / 6 + 1e-5);
            mw[n * 2 + gr] = mean, rw[n * 2 + gr] = rs;
            for (int j = 0; j < 6; j++) {
                int c = gr * 2 + j / 3;
                double xh = (xv[base + j] - mean) * rs, gh = gv[base + j] * gam[c];
                yw[base + j] = xh * gam[c] + bet[c];
                sgh += gh, sghx += gh * xh;
                ggw[c] += gv[base + j] * xh, gbw[c] += gv[base + j];
            }
            for (int j = 0; j < 6; j++) {
                int c = gr * 2 + j / 3;
                double xh = (xv[base + j] - mean) * rs, gh = gv[base + j] * gam[c];
                gxw[base + j] = rs * (gh - sgh / 6 - xh * sghx / 6);
            }
        }
    close_to(data(y), yw, 24, 1e-6, "GroupNorm out");
    close_to(data(m), mw, 4, 1e-6, "meanOut");
    close_to(data(r), rw, 4, 1e-6, "rstdOut");
    for (int bits = 1; bits < 8; bits++) {
        bool mask[3] = {bits & 1, bits & 2, bits & 4};
        aclTensor *gx = mask[0] ? mk(3, dims, NULL) : NULL, *gg = mask[1] ? mk1(c4, NULL) : NULL,
                  *gb = mask[2] ? mk1(c4, NULL) : NULL;
        aclBoolArray *mk3 = aclCreateBoolArray(mask, 3);
        st = aclnnGroupNormBackwardGetWorkspaceSize(g, x, m, r, ga, 2, 4, 3, 2, mk3, gx, gg, gb,
                                                    &ws, &e);
        CHECK_EQ(test_run(st, ws, e, aclnnGroupNormBackward, NULL), ACLNN_SUCCESS);
        if (gx) close_to(data(gx), gxw, 24, 1e-5, "GroupNorm gradInput");
        if (gg) close_to(data(gg), ggw, 4, 1e-5, "gradGammaOut");
        if (gb) close_to(data(gb), gbw, 4, 1e-6, "gradBetaOut");
        aclDestroyBoolArray(mk3);
        del(gx), del(gg), del(gb);
    }
    del(x), del(g), del(y), del(ga), del(be), del(m), del(r);
}

// GroupNorm run on `x` (any view of [N, C, H, W]) with gamma / beta; outputs contiguous.
static void gn_run(const aclTensor *x, const aclTensor *g, const aclTensor *ga, const aclTensor *be,
                   const int64_t *d, int64_t G, aclTensor *y, aclTensor *m, aclTensor *r,
                   aclTensor *gx, aclTensor *gg, aclTensor *gb) {
    uint64_t ws;
    aclOpExecutor *e;
    int64_t hw = d[2] * d[3];
    aclnnStatus st =
        aclnnGroupNormGetWorkspaceSize(x, ga, be, d[0], d[1], hw, G, 1e-5, y, m, r, &ws, &e);
    CHECK_EQ(test_run(st, ws, e, aclnnGroupNorm, NULL), ACLNN_SUCCESS);
    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    st = aclnnGroupNormBackwardGetWorkspaceSize(g, x, m, r, ga, d[0], d[1], hw, G, mask, gx, gg, gb,
                                                &ws, &e);
    CHECK_EQ(test_run(st, ws, e, aclnnGroupNormBackward, NULL), ACLNN_SUCCESS);
    aclDestroyBoolArray(mask);
}

// GroupNorm of [3, 6, 4, 5] in 3 groups: contiguous rows (n, c) of HxW = 20 >= 8 values take the
// row engine, the same values with each row padded (spatial dims not one progression) the
// REDUCE path; both against float64, with x around 100 (the per-row sums are shifted by the row's
// first x: a mean that large must not cost the gradients their accuracy); the row path with 1
// and 2 threads bit for bit.
static void test_group_norm_rows(void) {
    enum { N = 3, C = 6, H = 4, W = 5, G = 3, HW = H * W, CG = C / G, NE = N * C * HW };
    int64_t d[4] = {N, C, H, W}, ng[2] = {N, G}, pd[4] = {N, C, H, W + 3};
    test_rng rng;
    test_rng_seed(&rng, 11);
    static float xv[NE], gv[NE], xp[N * C * H * (W + 3)], gp[N * C * H * (W + 3)];
    float gam[C], bet[C];
    for (int i = 0; i < NE; i++)
        xv[i] = (float)test_rng_uniform(&rng, 99, 101),
        gv[i] = (float)test_rng_uniform(&rng, -1, 1);
    for (int c = 0; c < C; c++) gam[c] = 0.5f + 0.25f * (float)c, bet[c] = (float)c - 2.5f;
    for (int i = 0; i < NE; i++) { // the padded copy: element (n, c, h, w) at row i / W, column w
        int row = i / W, w = i % W;
        xp[row * (W + 3) + w] = xv[i], gp[row * (W + 3) + w] = gv[i];
    }
    // float64 reference
    static double yw[NE], gxw[NE];
    double ggw[C] = {0}, gbw[C] = {0}, mw[N * G], rw[N * G];
    for (int n = 0; n < N; n++)
        for (int gr = 0; gr < G; gr++) {
            int base = (n * C + gr * CG) * HW, M = CG * HW;
            double s = 0, q = 0, sgh = 0, sghx = 0;
            for (int j = 0; j < M; j++) s += xv[base + j];
            double mean = s / M;
            for (int j = 0; j < M; j++) q += pow(xv[base + j] - mean, 2);
            double rs = 1 / sqrt(q / M + 1e-5);
            mw[n * G + gr] = mean, rw[n * G + gr] = rs;
            for (int j = 0; j < M; j++) {
                int c = gr * CG + j / HW;
                double xh = (xv[base + j] - mean) * rs, gh = gv[base + j] * gam[c];
                yw[base + j] = xh * gam[c] + bet[c];
                sgh += gh, sghx += gh * xh;
                ggw[c] += gv[base + j] * xh, gbw[c] += gv[base + j];
            }
            for (int j = 0; j < M; j++) {
                int c = gr * CG + j / HW;
                double xh = (xv[base + j] - mean) * rs, gh = gv[base + j] * gam[c];
                gxw[base + j] = rs * (gh - sgh / M - xh * sghx / M);
            }
        }
    aclTensor *x = mk(4, d, xv), *g = mk(4, d, gv), *ga = mk1(C, gam), *be = mk1(C, bet);
    aclTensor *xpt = mk(4, pd, xp), *gpt = mk(4, pd, gp);
    int64_t pst[4] = {C * H * (W + 3), H * (W + 3), W + 3, 1};
    aclTensor *xs = aclCreateTensor(d, 4, ACL_FLOAT, pst, 0, ACL_FORMAT_ND, pd, 4, data(xpt));
    aclTensor *gs = aclCreateTensor(d, 4, ACL_FLOAT, pst, 0, ACL_FORMAT_ND, pd, 4, data(gpt));
    aclTensor *out[3][6]; // rows (2 threads), padded (REDUCE), rows (1 thread): y m r gx gg gb
    for (int k = 0; k < 3; k++) {
        out[k][0] = mk(4, d, NULL), out[k][1] = mk(2, ng, NULL), out[k][2] = mk(2, ng, NULL);
        out[k][3] = mk(4, d, NULL), out[k][4] = mk1(C, NULL), out[k][5] = mk1(C, NULL);
    }
    int threads = opgrad_get_num_threads();
    opgrad_set_num_threads(2);
    gn_run(x, g, ga, be, d, G, out[0][0], out[0][1], out[0][2], out[0][3], out[0][4], out[0][5]);
    gn_run(xs, gs, ga, be, d, G, out[1][0], out[1][1], out[1][2], out[1][3], out[1][4], out[1][5]);
    opgrad_set_num_threads(1);
    gn_run(x, g, ga, be, d, G, out[2][0], out[2][1], out[2][2], out[2][3], out[2][4], out[2][5]);
    opgrad_set_num_threads(threads);
    for (int k = 0; k < 2; k++) {
        close_to(data(out[k][0]), yw, NE, 2e-5, k ? "padded: out" : "rows: out");
        close_to(data(out[k][1]), mw, N * G, 1e-6, k ? "padded: meanOut" : "rows: meanOut");
        close_to(data(out[k][2]), rw, N * G, 2e-5, k ? "padded: rstdOut" : "rows: rstdOut");
        close_to(data(out[k][3]), gxw, NE, 1e-4, k ? "padded: gradInput" : "rows: gradInput");
        close_to(data(out[k][4]), ggw, C, 1e-4, k ? "padded: gradGamma" : "rows: gradGamma");
        close_to(data(out[k][5]), gbw, C, 1e-5, k ? "padded: gradBeta" : "rows: gradBeta");
    }
    int64_t sizes[6] = {NE, N * G, N * G, NE, C, C};
    for (int j = 0; j < 6; j++)
        CHECKF(!memcmp(data(out[0][j]), data(out[2][j]), (size_t)sizes[j] * sizeof(float)),
               "rows: output %d differs between 1 and 2 threads", j);
    aclDestroyTensor(xs), aclDestroyTensor(gs);
    del(x), del(g), del(ga), del(be), del(xpt), del(gpt);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 6; j++) del(out[k][j]);
}

// BatchNorm (training) and GroupNorm, forward and backward, on one 16-bit buffer set: the row
// kernels' 16-bit entry points (contiguous rows of one 16-bit dtype, read and written in place)
// against the buffered path (OPGRAD_FUSED16=0: rows widened into fp32 and rounded back) at the
// scalar level, bit for bit on every ISA level this CPU has. Rows of 35 values: 2 groups of 16
// and a tail.
enum { F16_N = 3, F16_C = 4, F16_H = 5, F16_W = 7, F16_NE = F16_N * F16_C * F16_H * F16_W };
enum { F16_RES = 4 * F16_NE + 12 * F16_C };

static void run_norms16(aclDataType dt, uint16_t *x, uint16_t *g, uint16_t *gam, uint16_t *bet,
                        uint16_t *res) {
    int64_t d[4] = {F16_N, F16_C, F16_H, F16_W}, c1 = F16_C, ng[2] = {F16_N, 2};
    uint16_t *at = res;
#define NEXT(nd, dims, n) (at += (n), test_tensor(dims, nd, dt, at - (n)))
    aclTensor *tx = test_tensor(d, 4, dt, x), *tg = test_tensor(d, 4, dt, g);
    aclTensor *tw = test_tensor(&c1, 1, dt, gam), *tb = test_tensor(&c1, 1, dt, bet);
    aclTensor *y = NEXT(4, d, F16_NE), *sm = NEXT(1, &c1, F16_C), *si = NEXT(1, &c1, F16_C);
    aclTensor *rm = NEXT(1, &c1, F16_C), *rv = NEXT(1, &c1, F16_C);
    aclTensor *gx = NEXT(4, d, F16_NE), *gw = NEXT(1, &c1, F16_C), *gb = NEXT(1, &c1, F16_C);
    aclTensor *gy = NEXT(4, d, F16_NE), *gm = NEXT(2, ng, 2 * F16_N), *gr = NEXT(2, ng, 2 * F16_N);
    aclTensor *ggx = NEXT(4, d, F16_NE), *ggg = NEXT(1, &c1, F16_C), *ggb = NEXT(1, &c1, F16_C);
#undef NEXT
    bool all[3] = {true, true, true};
    CHECK_EQ(bn(tx, tw, tb, rm, rv, true, y, sm, si), ACLNN_SUCCESS);
    CHECK_EQ(bn_bwd(tg, tx, tw, rm, rv, sm, si, true, all, gx, gw, gb), ACLNN_SUCCESS);
    gn_run(tx, tg, tw, tb, d, 2, gy, gm, gr, ggx, ggg, ggb);
    aclTensor *ts[] = {tx, tg, tw, tb, y, sm, si, rm, rv, gx, gw, gb, gy, gm, gr, ggx, ggg, ggb};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) aclDestroyTensor(ts[i]);
}

static void test_fused16_bitwise(void) {
    static uint16_t x[F16_NE], g[F16_NE], gam[F16_C], bet[F16_C], want[F16_RES], got[F16_RES];
    aclDataType dts[2] = {ACL_BF16, ACL_FLOAT16};
    for (int d = 0; d < 2; d++) {
        test_rng rng;
        test_rng_seed(&rng, 5 + d);
        test_fill(x, 0, F16_NE, dts[d], &rng, -3, 5);
        test_fill(g, 0, F16_NE, dts[d], &rng, -1, 1);
        test_fill(gam, 0, F16_C, dts[d], &rng, 0.5, 2);
        test_fill(bet, 0, F16_C, dts[d], &rng, -1, 1);
        memset(want, 0, sizeof want);
        setenv("OPGRAD_FUSED16", "0", 1);
        opgrad_set_max_isa(OPGRAD_ISA_SCALAR);
        run_norms16(dts[d], x, g, gam, bet, want);
        unsetenv("OPGRAD_FUSED16");
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            opgrad_set_max_isa((opgrad_isa)isa);
            memset(got, 0, sizeof got);
            run_norms16(dts[d], x, g, gam, bet, got);
            CHECKF(!memcmp(got, want, sizeof got), "%s at ISA level %d: not the buffered bits",
                   dts[d] == ACL_BF16 ? "bf16" : "fp16", isa);
        }
        opgrad_set_max_isa((opgrad_isa)(OPGRAD_ISA_COUNT - 1));
    }
}

// A [4, 6, 5, 7] input: transposed (strided) and NHWC views give the NCHW results bit for bit;
// 1 and 2 threads too; an empty batch runs.
static void test_layouts_threads(void) {
    int64_t d[4] = {4, 6, 5, 7}, n = 4 * 6 * 5 * 7;
    test_rng rng;
    test_rng_seed(&rng, 7);
    float *xv = malloc((size_t)n * sizeof(float)), *gv = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        xv[i] = (float)test_rng_uniform(&rng, -3, 3), gv[i] = (float)test_rng_uniform(&rng, -1, 1);
    aclTensor *x = mk(4, d, xv), *g = mk(4, d, gv), *y = mk(4, d, NULL), *m = mk1(6, NULL),
              *s = mk1(6, NULL), *gx = mk(4, d, NULL), *gw = mk1(6, NULL), *gb = mk1(6, NULL);
    bool all[3] = {true, true, true};
    CHECK_EQ(bn(x, NULL, NULL, NULL, NULL, true, y, m, s), ACLNN_SUCCESS);
    CHECK_EQ(bn_bwd(g, x, NULL, NULL, NULL, m, s, true, all, gx, gw, gb), ACLNN_SUCCESS);

    // the same values as an NHWC tensor: memory [N, H, W, C], format NHWC, shape [N, H, W, C]
    int64_t dn[4] = {4, 5, 7, 6};
    float *xn = malloc((size_t)n * sizeof(float)), *gn = malloc((size_t)n * sizeof(float));
    for (int64_t i0 = 0; i0 < 4; i0++)
        for (int64_t c = 0; c < 6; c++)
            for (int64_t h = 0; h < 5; h++)
                for (int64_t w = 0; w < 7; w++) {
                    int64_t src = ((i0 * 6 + c) * 5 + h) * 7 + w,
                            dst = ((i0 * 5 + h) * 7 + w) * 6 + c;
                    xn[dst] = xv[src], gn[dst] = gv[src];
                }
    aclTensor *xnh = mk(4, dn, xn), *gnh = mk(4, dn, gn), *ynh = mk(4, dn, NULL),
              *gxnh = mk(4, dn, NULL);
    int64_t st[4] = {5 * 7 * 6, 7 * 6, 6, 1};
    aclTensor *xf = aclCreateTensor(dn, 4, ACL_FLOAT, st, 0, ACL_FORMAT_NHWC, dn, 4, data(xnh));
    aclTensor *gf = aclCreateTensor(dn, 4, ACL_FLOAT, st, 0, ACL_FORMAT_NHWC, dn, 4, data(gnh));
    aclTensor *yf = aclCreateTensor(dn, 4, ACL_FLOAT, st, 0, ACL_FORMAT_NHWC, dn, 4, data(ynh));
    aclTensor *gxf = aclCreateTensor(dn, 4, ACL_FLOAT, st, 0, ACL_FORMAT_NHWC, dn, 4, data(gxnh));
    aclTensor *m2 = mk1(6, NULL), *s2 = mk1(6, NULL), *gw2 = mk1(6, NULL), *gb2 = mk1(6, NULL);
    // an NHWC input with an ND output of the same shape: the channels would not agree
    CHECK_EQ(bn(xf, NULL, NULL, NULL, NULL, true, ynh, m2, s2), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("format");
    CHECK_EQ(bn(xf, NULL, NULL, NULL, NULL, true, yf, m2, s2), ACLNN_SUCCESS);
    CHECK_EQ(bn_bwd(gf, xf, NULL, NULL, NULL, m2, s2, true, all, gxf, gw2, gb2), ACLNN_SUCCESS);
    CHECK(!memcmp(data(m), data(m2), 6 * sizeof(float)));
    CHECK(!memcmp(data(s), data(s2), 6 * sizeof(float)));
    CHECK(!memcmp(data(gw), data(gw2), 6 * sizeof(float)));
    CHECK(!memcmp(data(gb), data(gb2), 6 * sizeof(float)));
    int bad = 0;
    for (int64_t i0 = 0; i0 < 4; i0++)
        for (int64_t c = 0; c < 6; c++)
            for (int64_t h = 0; h < 5; h++)
                for (int64_t w = 0; w < 7; w++) {
                    int64_t a = ((i0 * 6 + c) * 5 + h) * 7 + w, b = ((i0 * 5 + h) * 7 + w) * 6 + c;
                    bad += data(y)[a] != data(ynh)[b] || data(gx)[a] != data(gxnh)[b];
                }
    CHECK_EQ(bad, 0);

    // 1 vs 2 threads
    int threads = opgrad_get_num_threads();
    opgrad_set_num_threads(1);
    aclTensor *y1 = mk(4, d, NULL), *gx1 = mk(4, d, NULL), *gw1 = mk1(6, NULL);
    bool two[3] = {true, true, false};
    CHECK_EQ(bn(x, NULL, NULL, NULL, NULL, true, y1, m2, s2), ACLNN_SUCCESS);
    CHECK_EQ(bn_bwd(g, x, NULL, NULL, NULL, m2, s2, true, two, gx1, gw1, NULL), ACLNN_SUCCESS);
    opgrad_set_num_threads(threads);
    CHECK(!memcmp(data(y), data(y1), (size_t)n * sizeof(float)));
    CHECK(!memcmp(data(gx), data(gx1), (size_t)n * sizeof(float)));
    CHECK(!memcmp(data(gw), data(gw1), 6 * sizeof(float)));

    // empty batch: runs, nothing to write but zero gradients of the per-channel tensors
    int64_t de[4] = {0, 6, 5, 7};
    aclTensor *xe = mk(4, de, NULL), *ye = mk(4, de, NULL);
    CHECK_EQ(bn(xe, NULL, NULL, NULL, NULL, true, ye, m2, s2), ACLNN_SUCCESS);
    data(gw2)[0] = 5;
    CHECK_EQ(bn_bwd(xe, xe, NULL, NULL, NULL, m2, s2, true, all, ye, gw2, gb2), ACLNN_SUCCESS);
    CHECK(data(gw2)[0] == 0 && data(gb2)[5] == 0);

    aclDestroyTensor(xf), aclDestroyTensor(gf), aclDestroyTensor(yf), aclDestroyTensor(gxf);
    del(x), del(g), del(y), del(m), del(s), del(gx), del(gw), del(gb), del(xnh), del(gnh), del(ynh),
        del(gxnh), del(m2), del(s2), del(gw2), del(gb2), del(y1), del(gx1), del(gw1), del(xe),
        del(ye);
    free(xv), free(gv), free(xn), free(gn);
}

// A transposed input view (strides of [N, C] swapped) equals the contiguous input.
static void test_strided(void) {
    int64_t d[2] = {9, 5}, dt[2] = {5, 9};
    float v[45], gv[45];
    for (int i = 0; i < 45; i++)
        v[i] = (float)((i * 13) % 17) * 0.25f - 2, gv[i] = (float)(i % 7) - 3;
    // xt holds x^T: element (n, c) of the view at c * 9 + n
    float vt[45], gt[45];
    for (int n = 0; n < 9; n++)
        for (int c = 0; c < 5; c++) vt[c * 9 + n] = v[n * 5 + c], gt[c * 9 + n] = gv[n * 5 + c];
    aclTensor *x = mk(2, d, v), *g = mk(2, d, gv), *y = mk(2, d, NULL), *gx = mk(2, d, NULL);
    aclTensor *xs = mk(2, dt, vt), *gs = mk(2, dt, gt);
    int64_t st[2] = {1, 9};
    aclTensor *xv = aclCreateTensor(d, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, dt, 2, data(xs));
    aclTensor *gvw = aclCreateTensor(d, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, dt, 2, data(gs));
    aclTensor *y2 = mk(2, d, NULL), *gx2 = mk(2, d, NULL);
    aclTensor *m = mk1(5, NULL), *s = mk1(5, NULL), *m2 = mk1(5, NULL), *s2 = mk1(5, NULL);
    bool mask[3] = {true, false, false};
    CHECK_EQ(bn(x, NULL, NULL, NULL, NULL, true, y, m, s), ACLNN_SUCCESS);
    CHECK_EQ(bn_bwd(g, x, NULL, NULL, NULL, m, s, true, mask, gx, NULL, NULL), ACLNN_SUCCESS);
    CHECK_EQ(bn(xv, NULL, NULL, NULL, NULL, true, y2, m2, s2), ACLNN_SUCCESS);
    CHECK_EQ(bn_bwd(gvw, xv, NULL, NULL, NULL, m2, s2, true, mask, gx2, NULL, NULL), ACLNN_SUCCESS);
    CHECK(!memcmp(data(y), data(y2), sizeof v));
    CHECK(!memcmp(data(gx), data(gx2), sizeof v));
    CHECK(!memcmp(data(s), data(s2), 5 * sizeof(float)));
    aclDestroyTensor(xv), aclDestroyTensor(gvw);
    del(x), del(g), del(y), del(gx), del(xs), del(gs), del(y2), del(gx2), del(m), del(s), del(m2),
        del(s2);
}

int main(void) {
    aclInit(NULL);
    RUN(test_statuses);
    RUN(test_values);
    RUN(test_group_norm);
    RUN(test_group_norm_rows);
    RUN(test_fused16_bitwise);
    RUN(test_layouts_threads);
    RUN(test_strided);
    return test_summary();
}
