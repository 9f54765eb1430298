/* The loss family through the public API: aclnnMseLoss, aclnnL1Loss, aclnnSmoothL1Loss,
 * aclnnBinaryCrossEntropy, aclnnBinaryCrossEntropyWithLogits and their backwards.
 *  - status paths: NULLs (161001), reduction out of range, a negative beta, integer dtypes,
 *    shapes that do not broadcast, BCE's target of another shape, a weight that does not
 *    broadcast to self, a 1-D out for MseLoss's mean (161002), [1] accepted where the docs say so;
 *  - values on hand-checkable cases: each reduction, BCE's log clamp at -100, SmoothL1 with
 *    beta = 0 (L1), BCE with logits with weight and posWeight (one program through a temporary),
 *    broadcast and strided targets, mean over nothing (NaN) and sum over nothing (0), a 0-D
 *    gradOutput broadcast by the backwards, bf16 inputs summed in fp32 and rounded once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_binary_cross_entropy.h"
#include "aclnnop/aclnn_binary_cross_entropy_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_l1_loss.h"
#include "aclnnop/aclnn_l1_loss_backward.h"
#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_mse_loss_backward.h"
#include "aclnnop/aclnn_smooth_l1_loss.h"
#include "aclnnop/aclnn_smooth_l1_loss_backward.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

#define NEAR(a, b)                                                                                 \
    CHECKF(fabs((double)(a) - (double)(b)) <= 1e-6 * fmax(1, fabs((double)(b))), "%.9g vs %.9g",   \
           (double)(a), (double)(b))

static void test_statuses(void) {
    int64_t d23[] = {2, 3}, d32[] = {3, 2}, d1[] = {1}, d2[] = {2};
    float a[6] = {0}, b[6] = {0}, c[6] = {0}, o[6] = {0}, s1[1] = {0}, w2[2] = {0};
    int32_t ints[6] = {0};
    aclTensor *x = test_tensor(d23, 2, ACL_FLOAT, a), *t = test_tensor(d23, 2, ACL_FLOAT, b);
    aclTensor *z = test_tensor(d32, 2, ACL_FLOAT, c), *out = test_tensor(d23, 2, ACL_FLOAT, o);
    aclTensor *xi = test_tensor(d23, 2, ACL_INT32, ints), *sc = test_tensor(NULL, 0, ACL_FLOAT, s1);
    aclTensor *one = test_tensor(d1, 1, ACL_FLOAT, s1), *w = test_tensor(d2, 1, ACL_FLOAT, w2);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMseLossGetWorkspaceSize(NULL, t, 1, sc, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self is NULL");
    CHECK_EQ(aclnnL1LossGetWorkspaceSize(x, NULL, 1, sc, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("target is NULL");
    CHECK_EQ(aclnnMseLossBackwardGetWorkspaceSize(sc, x, t, 1, NULL, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out is NULL");
    CHECK_EQ(aclnnMseLossGetWorkspaceSize(x, t, 3, sc, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("reduction is 3; it must be 0 (none), 1 (mean) or 2 (sum)");
    CHECK_EQ(aclnnSmoothL1LossGetWorkspaceSize(x, t, 1, -0.5f, sc, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("beta is -0.5; it must be >= 0");
    CHECK_EQ(aclnnSmoothL1LossBackwardGetWorkspaceSize(sc, x, t, 1, NAN, out, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("beta is nan");
    CHECK_EQ(aclnnMseLossGetWorkspaceSize(xi, t, 0, out, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has dtype int32");
    CHECK_EQ(aclnnMseLossGetWorkspaceSize(x, z, 0, out, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("does not broadcast");
    CHECK_EQ(aclnnMseLossGetWorkspaceSize(x, t, 0, z, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has shape [3,2] but the inputs broadcast to [2,3]");
    // mean / sum: MseLoss and L1Loss take a 0-D out only; SmoothL1 and the BCEs [1] as well
    CHECK_EQ(aclnnMseLossGetWorkspaceSize(x, t, 1, one, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has shape [1] but reduction 1 (mean) gives one value: out must be 0-D");
    CHECK_EQ(aclnnL1LossGetWorkspaceSize(x, t, 2, out, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnSmoothL1LossGetWorkspaceSize(x, t, 1, 1.0f, one, &ws, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(x, t, NULL, 2, one, &ws, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    // BCE: target of self's shape; the weights broadcast to self
    CHECK_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(x, one, NULL, 0, out, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has shape [2,3] but target has shape [1]");
    CHECK_EQ(aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(x, t, w, NULL, 0, out, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weightOptional [2] cannot be broadcast to self's shape [2,3]");
    CHECK_EQ(aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(sc, x, t, NULL, w, 1, out,
                                                                       &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("posWeightOptional [2] cannot be broadcast");
    aclTensor *all[] = {x, t, z, out, xi, sc, one, w};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

// One forward / backward over contiguous fp32 data; returns the status.
typedef struct io {
    aclTensor *t;
    float *v;
} io;

static io fp32(const int64_t *dims, int nd, const float *vals) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= dims[d];
    io r;
    r.v = test_dev_alloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (vals) memcpy(r.v, vals, (size_t)n * sizeof(float));
    r.t = test_tensor(dims, nd, ACL_FLOAT, r.v);
    return r;
}

static void drop(io *r) {
    aclDestroyTensor(r->t);
    aclrtFree(r->v);
}

static void test_values(void) {
    int64_t d4[] = {4}, d22[] = {2, 2}, d2[] = {2};
    io x = fp32(d4, 1, (float[]){0, 1, 2, 3}), t = fp32(d4, 1, (float[]){1, 1, 1, 1});
    io y = fp32(NULL, 0, NULL), g0 = fp32(NULL, 0, (float[]){2}), gx = fp32(d4, 1, NULL);
    aclnnStatus st;
    OP_RUN(st, aclnnMseLossGetWorkspaceSize(x.t, t.t, 1, y.t, &ws_, &ex_), aclnnMseLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    NEAR(y.v[0], 1.5); // (1 + 0 + 1 + 4) / 4
    OP_RUN(st, aclnnMseLossGetWorkspaceSize(x.t, t.t, 2, y.t, &ws_, &ex_), aclnnMseLoss);
    NEAR(y.v[0], 6);
    OP_RUN(st, aclnnL1LossGetWorkspaceSize(x.t, t.t, 1, y.t, &ws_, &ex_), aclnnL1Loss);
    NEAR(y.v[0], 1);
    // SmoothL1 with beta 0 is L1; beta 2: d = -1, 0, 1, 2 -> 0.25, 0, 0.25, 1
    OP_RUN(st, aclnnSmoothL1LossGetWorkspaceSize(x.t, t.t, 2, 0.0f, y.t, &ws_, &ex_),
           aclnnSmoothL1Loss);
    NEAR(y.v[0], 4);
    OP_RUN(st, aclnnSmoothL1LossGetWorkspaceSize(x.t, t.t, 2, 2.0f, y.t, &ws_, &ex_),
           aclnnSmoothL1Loss);
    NEAR(y.v[0], 1.5);
    // backwards with a 0-D gradOutput of 2: mean scales by 1/4
    OP_RUN(st, aclnnMseLossBackwardGetWorkspaceSize(g0.t, x.t, t.t, 1, gx.t, &ws_, &ex_),
           aclnnMseLossBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    NEAR(gx.v[0], -1);
    NEAR(gx.v[1], 0);
    NEAR(gx.v[2], 1);
    NEAR(gx.v[3], 2);
    OP_RUN(st, aclnnL1LossBackwardGetWorkspaceSize(g0.t, x.t, t.t, 2, gx.t, &ws_, &ex_),
           aclnnL1LossBackward);
    NEAR(gx.v[0], -2);
    NEAR(gx.v[1], 0);
    NEAR(gx.v[2], 2);
    NEAR(gx.v[3], 2);
    OP_RUN(st, aclnnSmoothL1LossBackwardGetWorkspaceSize(g0.t, x.t, t.t, 0, 2.0f, gx.t, &ws_, &ex_),
           aclnnSmoothL1LossBackward);
    NEAR(gx.v[0], -1);
    NEAR(gx.v[1], 0);
    NEAR(gx.v[2], 1);
    NEAR(gx.v[3], 2);
    // BCE: the logs clamped at -100 (x = 0 with t = 1, x = 1 with t = 0), weighted
    io p = fp32(d4, 1, (float[]){0, 1, 0.5f, 0.25f}), q = fp32(d4, 1, (float[]){1, 0, 1, 0});
    io w = fp32(d4, 1, (float[]){1, 2, 1, 4}), l = fp32(d4, 1, NULL);
    OP_RUN(st, aclnnBinaryCrossEntropyGetWorkspaceSize(p.t, q.t, w.t, 0, l.t, &ws_, &ex_),
           aclnnBinaryCrossEntropy);
    CHECK_EQ(st, ACLNN_SUCCESS);
    NEAR(l.v[0], 100);
    NEAR(l.v[1], 200);
    NEAR(l.v[2], log(2.0));
    NEAR(l.v[3], -4 * log(0.75));
    OP_RUN(
        st,
        aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(g0.t, p.t, q.t, w.t, 1, gx.t, &ws_, &ex_),
        aclnnBinaryCrossEntropyBackward);
    // g w (x - t) / max(x (1 - x), 1e-12) / 4 with g = 2
    NEAR(gx.v[0], -0.5e12);
    NEAR(gx.v[1], 1e12);
    NEAR(gx.v[2], -1);
    NEAR(gx.v[3], 0.5 * 4 / 0.75);
    // BCE with logits, weight [2] broadcast over [2,2] rows' columns and posWeight [2]
    io xl = fp32(d22, 2, (float[]){0, 2, -3, 40}), tl = fp32(d22, 2, (float[]){1, 0, 0.5f, 1});
    io wl = fp32(d2, 1, (float[]){0.5f, 2}), pl = fp32(d2, 1, (float[]){3, 0.25f});
    io ll = fp32(d22, 2, NULL), gl = fp32(d22, 2, NULL);
    double ref[4], gref[4];
    for (int i = 0; i < 4; i++) {
        double xv = xl.v[i], tv = tl.v[i], wv = wl.v[i % 2], pv = pl.v[i % 2];
        double lw = 1 + (pv - 1) * tv, sp = log1p(exp(-fabs(xv))) + fmax(-xv, 0);
        ref[i] = wv * ((1 - tv) * xv + lw * sp);
        gref[i] = 2 * wv * (lw / (1 + exp(-xv)) - pv * tv) / 4; // mean, g = 2
    }
    OP_RUN(st,
           aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(xl.t, tl.t, wl.t, pl.t, 0, ll.t, &ws_,
                                                             &ex_),
           aclnnBinaryCrossEntropyWithLogits);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 4; i++) NEAR(ll.v[i], ref[i]);
    OP_RUN(st,
           aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(xl.t, tl.t, wl.t, pl.t, 1, y.t, &ws_,
                                                             &ex_),
           aclnnBinaryCrossEntropyWithLogits);
    NEAR(y.v[0], (ref[0] + ref[1] + ref[2] + ref[3]) / 4);
    OP_RUN(st,
           aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(g0.t, xl.t, tl.t, wl.t, pl.t,
                                                                     1, gl.t, &ws_, &ex_),
           aclnnBinaryCrossEntropyWithLogitsBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 4; i++) NEAR(gl.v[i], gref[i]);
    io *all[] = {&x, &t, &y, &g0, &gx, &p, &q, &w, &l, &xl, &tl, &wl, &pl, &ll, &gl};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) drop(all[k]);
}

// Broadcast and strided targets, empty inputs, bf16 summed in fp32.
static void test_layouts(void) {
    int64_t d23[] = {2, 3}, d3[] = {3}, d0[] = {0, 3};
    io x = fp32(d23, 2, (float[]){1, 2, 3, 4, 5, 6}), tb = fp32(d3, 1, (float[]){1, 1, 1});
    io y = fp32(NULL, 0, NULL), out = fp32(d23, 2, NULL);
    aclnnStatus st;
    OP_RUN(st, aclnnMseLossGetWorkspaceSize(x.t, tb.t, 2, y.t, &ws_, &ex_), aclnnMseLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    NEAR(y.v[0], 0 + 1 + 4 + 9 + 16 + 25);
    // target = the transposed view of a [3,2] buffer: t[i][j] = buf[j * 2 + i]
    float buf[6] = {1, 4, 2, 5, 3, 6};
    aclTensor *tt = aclCreateTensor(d23, 2, ACL_FLOAT, (int64_t[]){1, 2}, 0, ACL_FORMAT_ND,
                                    (int64_t[]){6}, 1, buf);
    OP_RUN(st, aclnnL1LossGetWorkspaceSize(x.t, tt, 0, out.t, &ws_, &ex_), aclnnL1Loss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) NEAR(out.v[i], 0);
    aclDestroyTensor(tt);
    // empty: mean is NaN, sum 0 (as PyTorch)
    io e1 = fp32(d0, 2, NULL), e2 = fp32(d0, 2, NULL);
    OP_RUN(st, aclnnMseLossGetWorkspaceSize(e1.t, e2.t, 1, y.t, &ws_, &ex_), aclnnMseLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(isnan(y.v[0]));
    OP_RUN(st,
           aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(e1.t, e2.t, NULL, NULL, 2, y.t, &ws_,
                                                             &ex_),
           aclnnBinaryCrossEntropyWithLogits);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(y.v[0] == 0);
    // bf16: 4099 values of 1/4 (exact) against 0, summed in fp32: 4099 / 16 rounded once
    int64_t dn[] = {4099};
    uint16_t *hb = test_dev_alloc(4099 * 2), *zb = test_dev_alloc(4099 * 2),
             *yb = test_dev_alloc(2);
    for (int i = 0; i < 4099; i++) hb[i] = og_f32_to_bf16(0.25f);
    aclTensor *h = test_tensor(dn, 1, ACL_BF16, hb), *zt = test_tensor(dn, 1, ACL_BF16, zb);
    aclTensor *yt = test_tensor(NULL, 0, ACL_BF16, yb);
    OP_RUN(st, aclnnMseLossGetWorkspaceSize(h, zt, 2, yt, &ws_, &ex_), aclnnMseLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(yb[0] == og_f32_to_bf16(4099.0f / 16));
    aclDestroyTensor(h), aclDestroyTensor(zt), aclDestroyTensor(yt);
    aclrtFree(hb), aclrtFree(zb), aclrtFree(yb);
    io *all[] = {&x, &tb, &y, &out, &e1, &e2};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) drop(all[k]);
}

// The losses and their backwards with reduction none on bf16 / fp16 operands run the fused
// 16-bit kernels; they must give the buffered path's bits (OPGRAD_FUSED16=0: widened into fp32
// tiles, the fp32 kernel, rounded once) on every ISA, for every variant of each kernel (BCE with
// and without weight, BCE with logits with weight, posWeight, both), over inputs that reach
// each branch (|x - t| on both sides of SmoothL1's beta, probabilities near 0 and 1, logits of
// both signs and large magnitude, NaN, signed zeros), from an odd element on (tails). The
// backwards also with the 0-d gradOutput of a mean or sum loss (one value for every element: a
// splat operand, read from runs of its value).
enum { LN = 1029 };

static aclnnStatus loss_run(int which, aclTensor *const *t, int64_t red, aclTensor *out) {
    aclnnStatus st;
    aclTensor *g = t[0], *x = t[1], *y = t[2], *w = t[3], *pw = t[4];
    switch (which) {
    case 0:
        OP_RUN(st, aclnnMseLossGetWorkspaceSize(x, y, 0, out, &ws_, &ex_), aclnnMseLoss);
        break;
    case 1:
        OP_RUN(st, aclnnL1LossGetWorkspaceSize(x, y, 0, out, &ws_, &ex_), aclnnL1Loss);
        break;
    case 2:
        OP_RUN(st, aclnnSmoothL1LossGetWorkspaceSize(x, y, 0, 0.5f, out, &ws_, &ex_),
               aclnnSmoothL1Loss);
        break;
    case 3:
        OP_RUN(st, aclnnBinaryCrossEntropyGetWorkspaceSize(x, y, w, 0, out, &ws_, &ex_),
               aclnnBinaryCrossEntropy);
        break;
    case 4:
        OP_RUN(st,
               aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(x, y, w, pw, 0, out, &ws_, &ex_),
               aclnnBinaryCrossEntropyWithLogits);
        break;
    case 5:
        OP_RUN(st, aclnnMseLossBackwardGetWorkspaceSize(g, x, y, red, out, &ws_, &ex_),
               aclnnMseLossBackward);
        break;
    case 6:
        OP_RUN(st, aclnnL1LossBackwardGetWorkspaceSize(g, x, y, red, out, &ws_, &ex_),
               aclnnL1LossBackward);
        break;
    case 7:
        OP_RUN(st, aclnnSmoothL1LossBackwardGetWorkspaceSize(g, x, y, red, 0.5f, out, &ws_, &ex_),
               aclnnSmoothL1LossBackward);
        break;
    case 8:
        OP_RUN(st,
               aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(g, x, y, w, red, out, &ws_, &ex_),
               aclnnBinaryCrossEntropyBackward);
        break;
    default:
        OP_RUN(st,
               aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(g, x, y, w, pw, red, out,
                                                                         &ws_, &ex_),
               aclnnBinaryCrossEntropyWithLogitsBackward);
        break;
    }
    return st;
}

static void test_fused16_equals_buffered(void) {
    static const char *const names[] = {"MseLoss",        "L1Loss",
                                        "SmoothL1Loss",   "BCE",
                                        "BCEWithLogits",  "MseLossBackward",
                                        "L1LossBackward", "SmoothL1LossBackward",
                                        "BCEBackward",    "BCEWithLogitsBackward"};
    long runs = 0, bad = 0;
    for (int dti = 0; dti < 2; dti++) {
        aclDataType dt = dti ? ACL_FLOAT16 : ACL_BF16;
        uint16_t *buf[5], *o[2];
        for (int k = 0; k < 5; k++) buf[k] = test_dev_alloc(LN * 2);
        for (int k = 0; k < 2; k++) o[k] = test_dev_alloc(LN * 2);
        test_rng r;
        test_rng_seed(&r, 77 + (uint64_t)dti);
        for (int which = 0; which < 10; which++) {
            bool bce = which == 3 || which == 8, logits = which == 4 || which == 9;
            for (int i = 0; i < LN; i++) {
                float g = (float)test_rng_uniform(&r, -3, 3), w = (float)test_rng_uniform(&r, 0, 2);
                float x = (float)test_rng_uniform(&r, -4, 4),
                      y = (float)test_rng_uniform(&r, -4, 4);
                if (bce)
                    x = (float)test_rng_uniform(&r, 0, 1), y = (float)test_rng_uniform(&r, 0, 1);
                if (bce && i % 7 == 0) x = i % 14 ? 1e-30f : 0.999f; // near 0 and 1
                if (logits && i % 5 == 0) x *= 30.0f;                // large logits
                if (!bce && i % 9 == 0) y = x + 0.25f;               // |x - t| below beta
                if (i == 11) x = NAN;
                if (i == 12) x = -0.0f, y = 0.0f;
                float v[5] = {g, x, y, w, 2.0f - w};
                for (int k = 0; k < 5; k++)
                    buf[k][i] = dt == ACL_BF16 ? og_f32_to_bf16(v[k]) : og_f32_to_f16(v[k]);
            }
            int variants = bce ? 2 : logits ? 4 : 1;
            for (int var = 0; var < variants; var++)
                for (int off = 0; off < 2 * (which >= 5 ? 3 : 1); off++) {
                    int64_t red = off / 2; // the backwards: reduction none, mean, sum
                    int64_t d[1] = {LN - off % 2};
                    aclTensor *t[5];
                    for (int k = 0; k < 5; k++) t[k] = test_tensor(d, 1, dt, buf[k] + off % 2);
                    aclTensor *g0 = test_tensor(d, 0, dt, buf[0] + 5);
                    aclTensor *ts[5] = {red ? g0 : t[0], t[1], t[2], (var & 1) ? t[3] : NULL,
                                        (var & 2) ? t[4] : NULL};
                    aclTensor *to[2] = {test_tensor(d, 1, dt, o[0] + off % 2),
                                        test_tensor(d, 1, dt, o[1] + off % 2)};
                    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                        if (!test_isa_available(isa)) continue;
                        opgrad_set_max_isa((opgrad_isa)isa);
                        for (int fused = 0; fused < 2; fused++) {
                            if (!fused) setenv("OPGRAD_FUSED16", "0", 1);
                            memset(o[fused], 0xcd, LN * 2);
                            CHECK_EQ(loss_run(which, ts, red, to[fused]), ACLNN_SUCCESS);
                            unsetenv("OPGRAD_FUSED16");
                        }
                        for (int i = off % 2; i < LN; i++)
                            if (o[0][i] != o[1][i] && bad++ < 5)
                                fprintf(stderr,
                                        "    %s %s variant %d reduction %d isa %d: [%d] fused "
                                        "0x%04x, buffered 0x%04x\n",
                                        names[which], og_dtype_name(dt), var, (int)red, isa, i,
                                        o[1][i], o[0][i]);
                        runs++;
                    }
                    for (int k = 0; k < 5; k++) aclDestroyTensor(t[k]);
                    aclDestroyTensor(g0), aclDestroyTensor(to[0]), aclDestroyTensor(to[1]);
                }
        }
        // the fused path is the one planned: no tile buffers (the buffered path needs some)
        int64_t d[1] = {LN};
        aclTensor *a = test_tensor(d, 1, dt, buf[1]), *b = test_tensor(d, 1, dt, buf[2]),
                  *y = test_tensor(d, 1, dt, o[0]);
        uint64_t ws[2] = {7, 0};
        aclOpExecutor *ex[2] = {NULL, NULL};
        CHECK_EQ(aclnnMseLossGetWorkspaceSize(a, b, 0, y, &ws[0], &ex[0]), ACLNN_SUCCESS);
        setenv("OPGRAD_FUSED16", "0", 1);
        CHECK_EQ(aclnnMseLossGetWorkspaceSize(a, b, 0, y, &ws[1], &ex[1]), ACLNN_SUCCESS);
        unsetenv("OPGRAD_FUSED16");
        CHECKF(ws[0] == 0 && ws[1] > 0, "%s MseLoss workspace: fused %llu, buffered %llu",
               og_dtype_name(dt), (unsigned long long)ws[0], (unsigned long long)ws[1]);
        aclDestroyAclOpExecutor(ex[0]), aclDestroyAclOpExecutor(ex[1]);
        // so is the backward of a mean loss, whose gradOutput is 0-d
        aclTensor *g0 = test_tensor(d, 0, dt, buf[0]);
        for (int fused = 1; fused >= 0; fused--) {
            if (!fused) setenv("OPGRAD_FUSED16", "0", 1);
            CHECK_EQ(aclnnMseLossBackwardGetWorkspaceSize(g0, a, b, 1, y, &ws[fused], &ex[fused]),
                     ACLNN_SUCCESS);
            unsetenv("OPGRAD_FUSED16");
        }
        CHECKF(ws[1] == 0 && ws[0] > 0,
               "%s MseLossBackward (mean) workspace: fused %llu, buffered %llu", og_dtype_name(dt),
               (unsigned long long)ws[1], (unsigned long long)ws[0]);
        aclDestroyAclOpExecutor(ex[0]), aclDestroyAclOpExecutor(ex[1]), aclDestroyTensor(g0);
        aclDestroyTensor(a), aclDestroyTensor(b), aclDestroyTensor(y);
        for (int k = 0; k < 5; k++) aclrtFree(buf[k]);
        aclrtFree(o[0]), aclrtFree(o[1]);
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    CHECKF(bad == 0, "%ld elements differ", bad);
    printf("  %ld loss runs on 16-bit operands: fused = buffered, bit for bit\n", runs);
}

int main(void) {
    aclInit(NULL);
    RUN(test_statuses);
    RUN(test_values);
    RUN(test_layouts);
    RUN(test_fused16_equals_buffered);
    return test_summary();
}
