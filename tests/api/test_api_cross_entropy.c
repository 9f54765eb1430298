/* The cross-entropy family through the public API: aclnnCrossEntropyLoss,
 * aclnnCrossEntropyLossGrad, aclnnNLLLoss, aclnnNLLLossBackward.
 *  - status paths: NULLs (161001), dtypes, ranks and shapes, reduction strings and
 *    labelSmoothing out of range, the unsupported zloss (161002), each message naming the
 *    argument;
 *  - values against float64 (every reduction, class weights, ignoreIndex, label smoothing, int32
 *    and int64 targets) in fp32 / fp16 / bf16, on strided inputs and strided targets, and
 *    upstream's example (loss 1.0937543);
 *  - targets outside [0, C) are ignored rows (no read out of bounds, loss and gradient 0);
 *  - empty batches, a 1-d NLL self, NLLLoss2d (per pixel, strided int32 target), and 1 vs 2
 *    threads and every ISA level bitwise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss2d.h"
#include "aclnnop/aclnn_nll_loss2d_backward.h"
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

// ---- float64 reference -----------------------------------------------------------------------

typedef struct ref_case {
    int64_t n, c;
    const double *x;  // [n, c] (logits, or log-probabilities for NLL)
    const int64_t *t; // [n]
    const double *w;  // [c] or NULL
    int red;          // 0 none, 1 mean, 2 sum
    int64_t ignore;
    double eps;
    bool nll;
} ref_case;

// loss ([n] or [1]) and dx for the incoming gradient g ([n] or [1]).
static void reference(const ref_case *k, const double *g, double *loss, double *dx) {
    double total = 0, wtot = 0, wall = 0;
    for (int64_t j = 0; j < k->c; j++) wall += k->w ? k->w[j] : 1;
    for (int64_t i = 0; i < k->n; i++) {
        int64_t t = k->t[i];
        if (t != k->ignore && t >= 0 && t < k->c) wtot += k->w ? k->w[t] : 1;
    }
    for (int64_t i = 0; i < k->n; i++) {
        const double *x = k->x + i * k->c;
        double lse = 0;
        if (!k->nll) {
            double m = -INFINITY, s = 0;
            for (int64_t j = 0; j < k->c; j++) m = fmax(m, x[j]);
            for (int64_t j = 0; j < k->c; j++) s += exp(x[j] - m);
            lse = m + log(s);
        }
        int64_t t = k->t[i];
        bool ok = t != k->ignore && t >= 0 && t < k->c;
        double l = 0, wt = ok ? (k->w ? k->w[t] : 1) : 0;
        double coef = k->red == 0 ? g[i] : k->red == 2 ? g[0] : g[0] / wtot;
        for (int64_t j = 0; j < k->c; j++) {
            double wj = k->w ? k->w[j] : 1, lp = x[j] - lse;
            if (ok) l -= (j == t ? (1 - k->eps) * wt : 0) * lp + k->eps / k->c * wj * lp;
            double d = 0;
            if (ok && k->nll)
                d = j == t ? -coef * wt : 0;
            else if (ok)
                d = coef * (((1 - k->eps) * wt + k->eps / k->c * wall) * exp(lp) -
                            k->eps / k->c * wj - (j == t ? (1 - k->eps) * wt : 0));
            if (dx) dx[i * k->c + j] = d;
        }
        if (k->red == 0) loss[i] = l;
        total += l;
    }
    if (k->red == 1) loss[0] = total / wtot;
    if (k->red == 2) loss[0] = total;
}

static const char *red_name(int red) { return red == 0 ? "none" : red == 1 ? "mean" : "sum"; }

// ---- runners -----------------------------------------------------------------------------------

typedef struct run_opts {
    aclDataType dt;
    aclDataType tdt; // target dtype of the forward (the grad takes int64)
    bool strided;    // x transposed in memory, target with stride 2
    bool weighted;
} run_opts;

// Builds x [n, c] (strided: stored as [c, n], viewed transposed) and the target tensor.
static aclTensor *make_x(const ref_case *k, aclDataType dt, bool strided, void **buf) {
    *buf = test_dev_alloc((size_t)(k->n * k->c) * 4 + 4);
    for (int64_t i = 0; i < k->n; i++)
        for (int64_t j = 0; j < k->c; j++)
            test_store(*buf, strided ? j * k->n + i : i * k->c + j, dt, k->x[i * k->c + j]);
    int64_t dims[2] = {k->n, k->c}, st[2] = {strided ? 1 : k->c, strided ? k->n : 1};
    int64_t sd[1] = {k->n * k->c};
    return aclCreateTensor(dims, 2, dt, st, 0, ACL_FORMAT_ND, sd, 1, *buf);
}

static aclTensor *make_target(const ref_case *k, aclDataType tdt, bool strided, void **buf) {
    int64_t s = strided ? 2 : 1;
    *buf = test_dev_alloc((size_t)(k->n * s) * 8 + 8);
    for (int64_t i = 0; i < k->n; i++) {
        if (tdt == ACL_INT64)
            ((int64_t *)*buf)[i * s] = k->t[i];
        else
            ((int32_t *)*buf)[i * s] = (int32_t)k->t[i];
    }
    int64_t dims[1] = {k->n}, st[1] = {s}, sd[1] = {k->n * s};
    return aclCreateTensor(dims, 1, tdt, st, 0, ACL_FORMAT_ND, sd, 1, *buf);
}

static aclTensor *make_vec(const double *v, int64_t n, aclDataType dt, void **buf) {
    *buf = test_dev_alloc((size_t)n * 4 + 4);
    for (int64_t i = 0; i < n; i++) test_store(*buf, i, dt, v[i]);
    int64_t dims[1] = {n};
    return test_tensor(dims, 1, dt, *buf);
}

// Worst error of got (dtype dt) against ref in units of the tolerance tol * (|ref| + scale).
static double worst(const void *got, const double *ref, int64_t n, aclDataType dt, double tol,
                    double scale) {
    double w = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(test_load(got, i, dt) - ref[i]) / (tol * (fabs(ref[i]) + scale));
        if (!(e <= w)) w = e;
    }
    return w;
}

static double tol_of(aclDataType dt) {
    return dt == ACL_FLOAT ? 2e-6 : dt == ACL_FLOAT16 ? 2e-3 : 1.6e-2;
}

// The case at the values the kernels see: x (and NLL's weight) rounded to dt. Free with free_q.
static ref_case quantized(const ref_case *k, aclDataType dt) {
    ref_case q = *k;
    double *x = malloc((size_t)(k->n * k->c + 1) * 8), *w = malloc((size_t)(k->c + 1) * 8);
    for (int64_t i = 0; i < k->n * k->c; i++) x[i] = test_round_to(dt, k->x[i]);
    for (int64_t j = 0; j < k->c && k->w; j++)
        w[j] = k->nll ? test_round_to(dt, k->w[j]) : test_round_to(ACL_FLOAT, k->w[j]);
    q.x = x, q.w = k->w ? w : NULL;
    if (!k->w) free(w);
    return q;
}

static void free_q(ref_case *q) { free((void *)q->x), free((void *)q->w); }

// CrossEntropyLoss then CrossEntropyLossGrad (g: [n] or one value), checked against reference.
static void check_ce(const ref_case *k0, const run_opts *o, const double *g) {
    ref_case q = quantized(k0, o->dt), *k = &q;
    void *xb, *tb, *t64b, *wb = NULL, *lb, *lpb, *zb, *lseb, *gb, *dxb;
    aclTensor *x = make_x(k, o->dt, o->strided, &xb);
    aclTensor *t = make_target(k, o->tdt, o->strided, &tb);
    aclTensor *t64 = make_target(k, ACL_INT64, o->strided, &t64b);
    aclTensor *w = o->weighted ? make_vec(k->w, k->c, ACL_FLOAT, &wb) : NULL;
    int64_t ln = k->red == 0 ? k->n : 1, lpd[2] = {k->n, k->c}, ld[1] = {ln}, nd[1] = {k->n};
    lb = test_dev_alloc((size_t)ln * 4), lpb = test_dev_alloc((size_t)(k->n * k->c) * 4 + 4);
    zb = test_dev_alloc((size_t)ln * 4), lseb = test_dev_alloc((size_t)k->n * 4 + 4);
    aclTensor *loss = test_tensor(ld, 1, o->dt, lb), *lp = test_tensor(lpd, 2, o->dt, lpb);
    aclTensor *z = test_tensor(ld, 1, o->dt, zb), *lse = test_tensor(nd, 1, o->dt, lseb);
    char red[8];
    strcpy(red, red_name(k->red));
    aclnnStatus st;
    OP_RUN(st,
           aclnnCrossEntropyLossGetWorkspaceSize(x, t, w, red, k->ignore, k->eps, 0.0, false, loss,
                                                 lp, z, lse, &ws_, &ex_),
           aclnnCrossEntropyLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double *rl = calloc((size_t)k->n + 1, 8), *rdx = calloc((size_t)(k->n * k->c) + 1, 8);
    reference(k, g, rl, rdx);
    double tol = tol_of(o->dt);
    CHECKF(worst(lb, rl, ln, o->dt, tol, 1e-3) <= 1, "%s %s loss: %g tolerances off",
           red_name(k->red), og_dtype_name(o->dt), worst(lb, rl, ln, o->dt, tol, 1e-3));
    // the grad, from the forward's logProb
    int64_t gd[1] = {k->n};
    gb = test_dev_alloc((size_t)k->n * 4 + 4), dxb = test_dev_alloc((size_t)(k->n * k->c) * 4 + 4);
    for (int64_t i = 0; i < ln; i++) test_store(gb, i, o->dt, g[i]);
    aclTensor *gt = k->red == 0 ? test_tensor(gd, 1, o->dt, gb) : test_tensor(NULL, 0, o->dt, gb);
    aclTensor *dx = test_tensor(lpd, 2, o->dt, dxb);
    OP_RUN(st,
           aclnnCrossEntropyLossGradGetWorkspaceSize(gt, lp, t64, w, NULL, NULL, red, k->ignore,
                                                     k->eps, 0.0, dx, &ws_, &ex_),
           aclnnCrossEntropyLossGrad);
    CHECK_EQ(st, ACLNN_SUCCESS);
    // the 16-bit logProb the grad reads is rounded: allow its rounding, relative to the gradient
    double gscale = 1e-3 * fabs(g[0]);
    double e = worst(dxb, rdx, k->n * k->c, o->dt, o->dt == ACL_FLOAT ? tol : 4 * tol, gscale);
    CHECKF(e <= 1, "%s %s eps %g grad: %g tolerances off", red_name(k->red), og_dtype_name(o->dt),
           k->eps, e);
    aclDestroyTensor(x), aclDestroyTensor(t), aclDestroyTensor(t64), aclDestroyTensor(loss);
    aclDestroyTensor(lp), aclDestroyTensor(z), aclDestroyTensor(lse), aclDestroyTensor(gt);
    aclDestroyTensor(dx);
    if (w) aclDestroyTensor(w), aclrtFree(wb);
    aclrtFree(xb), aclrtFree(tb), aclrtFree(t64b), aclrtFree(lb), aclrtFree(lpb), aclrtFree(zb);
    aclrtFree(lseb), aclrtFree(gb), aclrtFree(dxb);
    free(rl), free(rdx);
    free_q(&q);
}

// NLLLoss then NLLLossBackward with the forward's totalWeight.
static void check_nll(const ref_case *k0, const run_opts *o, const double *g) {
    ref_case q = quantized(k0, o->dt), *k = &q;
    void *xb, *tb, *wb, *lb, *twb, *gb, *dxb;
    aclTensor *x = make_x(k, o->dt, o->strided, &xb);
    aclTensor *t = make_target(k, o->tdt, o->strided, &tb);
    aclTensor *w = make_vec(k->w, k->c, o->dt, &wb);
    int64_t ln = k->red == 0 ? k->n : 1, ld[1] = {ln}, one[1] = {1}, xd[2] = {k->n, k->c};
    lb = test_dev_alloc((size_t)ln * 4), twb = test_dev_alloc(4);
    aclTensor *loss = test_tensor(ld, 1, o->dt, lb), *tw = test_tensor(one, 1, o->dt, twb);
    aclnnStatus st;
    OP_RUN(st, aclnnNLLLossGetWorkspaceSize(x, t, w, k->red, k->ignore, loss, tw, &ws_, &ex_),
           aclnnNLLLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double *rl = calloc((size_t)k->n + 1, 8), *rdx = calloc((size_t)(k->n * k->c) + 1, 8);
    reference(k, g, rl, rdx);
    double tol = tol_of(o->dt), wtot = 0;
    for (int64_t i = 0; i < k->n; i++)
        if (k->t[i] != k->ignore && k->t[i] >= 0 && k->t[i] < k->c) wtot += k->w[k->t[i]];
    CHECKF(worst(lb, rl, ln, o->dt, tol, 1e-3) <= 1, "nll %s %s loss", red_name(k->red),
           og_dtype_name(o->dt));
    CHECKF(worst(twb, &wtot, 1, o->dt, tol, 0) <= 1, "nll totalWeight %g want %g",
           test_load(twb, 0, o->dt), wtot);
    gb = test_dev_alloc((size_t)k->n * 4 + 4), dxb = test_dev_alloc((size_t)(k->n * k->c) * 4 + 4);
    for (int64_t i = 0; i < ln; i++) test_store(gb, i, o->dt, g[i]);
    aclTensor *gt = test_tensor(ld, 1, o->dt, gb), *dx = test_tensor(xd, 2, o->dt, dxb);
    OP_RUN(st,
           aclnnNLLLossBackwardGetWorkspaceSize(gt, x, t, w, k->red, k->ignore, tw, dx, &ws_, &ex_),
           aclnnNLLLossBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECKF(worst(dxb, rdx, k->n * k->c, o->dt, tol, 1e-6) <= 1, "nll %s %s grad", red_name(k->red),
           og_dtype_name(o->dt));
    aclDestroyTensor(x), aclDestroyTensor(t), aclDestroyTensor(w), aclDestroyTensor(loss);
    aclDestroyTensor(tw), aclDestroyTensor(gt), aclDestroyTensor(dx);
    aclrtFree(xb), aclrtFree(tb), aclrtFree(wb), aclrtFree(lb), aclrtFree(twb), aclrtFree(gb);
    aclrtFree(dxb);
    free(rl), free(rdx);
    free_q(&q);
}

// ---- tests
// ---------------------------------------------------------------------------------------

enum { N = 7, C = 5 };
static double xs[N * C], ws[C];
static int64_t ts[N] = {0, 4, -100, 2, 1, 3, 2};

static void fill_case(void) {
    test_rng r;
    test_rng_seed(&r, 14);
    for (int i = 0; i < N * C; i++) xs[i] = test_rng_uniform(&r, -3, 3);
    for (int j = 0; j < C; j++) ws[j] = test_rng_uniform(&r, 0.5, 2);
}

static void test_values(void) {
    fill_case();
    static const aclDataType dts[3] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    static const double eps[2] = {0.0, 0.25};
    double g[N] = {0.7, -1.3, 2.0, 0.4, -0.9, 1.1, 0.25};
    for (int d = 0; d < 3; d++)
        for (int red = 0; red < 3; red++)
            for (int e = 0; e < 2; e++)
                for (int variant = 0; variant < 2; variant++) {
                    ref_case k = {N, C, xs, ts, variant ? ws : NULL, red, -100, eps[e], false};
                    run_opts o = {dts[d], variant ? ACL_INT32 : ACL_INT64, variant == 1,
                                  variant == 1};
                    check_ce(&k, &o, g);
                    if (e == 0) {
                        ref_case kn = k;
                        kn.nll = true, kn.w = ws;
                        check_nll(&kn, &o, g);
                    }
                }
}

// ops-nn's example: input [[5,0,3,3,7],[9,3,5,2,4]], targets {0,0}, mean: 1.0937543.
static void test_upstream_example(void) {
    static const double x[10] = {5, 0, 3, 3, 7, 9, 3, 5, 2, 4};
    static const int64_t t[2] = {0, 0};
    ref_case k = {2, 5, x, t, NULL, 1, -100, 0, false};
    double loss[1], g[1] = {1};
    reference(&k, g, loss, NULL);
    CHECK(fabs(loss[0] - 1.0937543) < 1e-6);
    run_opts o = {ACL_FLOAT, ACL_INT64, false, false};
    check_ce(&k, &o, g);
}

// Targets outside [0, C) are ignored rows: loss 0, gradient 0, no read past the weights.
static void test_out_of_range_targets(void) {
    fill_case();
    int64_t t[N] = {5, -1, 1000000, 2, -100, 4, INT64_MIN};
    double g[N] = {1, 1, 1, 1, 1, 1, 1};
    for (int red = 0; red < 3; red++) {
        ref_case k = {N, C, xs, t, ws, red, -100, 0.1, false};
        run_opts o = {ACL_FLOAT, ACL_INT64, false, true};
        check_ce(&k, &o, g);
        k.nll = true, k.eps = 0;
        check_nll(&k, &o, g);
    }
    // int32 targets wrap nothing: 2^31 - 1 is out of range too
    int64_t t32[N] = {2147483647, 0, 1, 2, 3, 4, -2147483647 - 1};
    ref_case k = {N, C, xs, t32, ws, 0, -100, 0, false};
    run_opts o = {ACL_FLOAT, ACL_INT32, false, true};
    check_ce(&k, &o, g);
}

// A row of logits: loss none, then every row ignored: mean is 0 / 0 = NaN (as PyTorch).
static void test_edges(void) {
    fill_case();
    int64_t all_ignored[N] = {-100, -100, -100, -100, -100, -100, -100};
    void *xb, *tb, *lb, *lpb, *zb, *lseb;
    ref_case k = {N, C, xs, all_ignored, NULL, 1, -100, 0, false};
    aclTensor *x = make_x(&k, ACL_FLOAT, false, &xb), *t = make_target(&k, ACL_INT64, false, &tb);
    int64_t one[1] = {1}, lpd[2] = {N, C}, nd[1] = {N};
    lb = test_dev_alloc(4), lpb = test_dev_alloc(N * C * 4), zb = test_dev_alloc(4);
    lseb = test_dev_alloc(N * 4);
    aclTensor *loss = test_tensor(one, 1, ACL_FLOAT, lb), *lp = test_tensor(lpd, 2, ACL_FLOAT, lpb);
    aclTensor *z = test_tensor(one, 1, ACL_FLOAT, zb), *lse = test_tensor(nd, 1, ACL_FLOAT, lseb);
    char mean[] = "mean", sum[] = "sum";
    aclnnStatus st;
    OP_RUN(st,
           aclnnCrossEntropyLossGetWorkspaceSize(x, t, NULL, mean, -100, 0, 0, false, loss, lp, z,
                                                 lse, &ws_, &ex_),
           aclnnCrossEntropyLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(isnan(((float *)lb)[0]));
    OP_RUN(st,
           aclnnCrossEntropyLossGetWorkspaceSize(x, t, NULL, sum, -100, 0, 0, false, loss, lp, z,
                                                 lse, &ws_, &ex_),
           aclnnCrossEntropyLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(((float *)lb)[0] == 0.0f);
    // an empty batch: sum 0, no rows touched
    int64_t e2[2] = {0, C}, e1[1] = {0};
    aclTensor *xe = test_tensor(e2, 2, ACL_FLOAT, xb), *te = test_tensor(e1, 1, ACL_INT64, tb);
    aclTensor *lpe = test_tensor(e2, 2, ACL_FLOAT, lpb),
              *lsee = test_tensor(e1, 1, ACL_FLOAT, lseb);
    ((float *)lb)[0] = 5;
    OP_RUN(st,
           aclnnCrossEntropyLossGetWorkspaceSize(xe, te, NULL, sum, -100, 0, 0, false, loss, lpe, z,
                                                 lsee, &ws_, &ex_),
           aclnnCrossEntropyLoss);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(((float *)lb)[0] == 0.0f);
    aclDestroyTensor(xe), aclDestroyTensor(te), aclDestroyTensor(lpe), aclDestroyTensor(lsee);
    // NLL of a 1-d self [C] with a 0-d target: -w[t] x[t]
    void *wb, *t0b, *twb, *gb, *dxb;
    aclTensor *w = make_vec(ws, C, ACL_FLOAT, &wb);
    int64_t cd[1] = {C};
    aclTensor *x1 = test_tensor(cd, 1, ACL_FLOAT, xb);
    t0b = test_dev_alloc(8), ((int64_t *)t0b)[0] = 3;
    aclTensor *t0 = test_tensor(NULL, 0, ACL_INT64, t0b);
    twb = test_dev_alloc(4);
    aclTensor *tw = test_tensor(one, 1, ACL_FLOAT, twb);
    for (int red = 0; red < 3; red++) {
        OP_RUN(st, aclnnNLLLossGetWorkspaceSize(x1, t0, w, red, -100, loss, tw, &ws_, &ex_),
               aclnnNLLLoss);
        CHECK_EQ(st, ACLNN_SUCCESS);
        double want = red == 1 ? -xs[3] : -ws[3] * xs[3];
        CHECKF(fabs(((float *)lb)[0] - want) <= 1e-6 * (1 + fabs(want)), "1-d nll %d: %g vs %g",
               red, ((float *)lb)[0], want);
        gb = test_dev_alloc(4), ((float *)gb)[0] = 2.0f, dxb = test_dev_alloc(C * 4);
        aclTensor *g = test_tensor(one, 1, ACL_FLOAT, gb), *dx = test_tensor(cd, 1, ACL_FLOAT, dxb);
        OP_RUN(st,
               aclnnNLLLossBackwardGetWorkspaceSize(g, x1, t0, w, red, -100, tw, dx, &ws_, &ex_),
               aclnnNLLLossBackward);
        CHECK_EQ(st, ACLNN_SUCCESS);
        for (int j = 0; j < C; j++) {
            double d = j != 3 ? 0 : red == 1 ? -2.0 : -2.0 * ws[3];
            CHECKF(fabs(((float *)dxb)[j] - d) <= 1e-6, "1-d nll grad %d [%d]", red, j);
        }
        aclDestroyTensor(g), aclDestroyTensor(dx), aclrtFree(gb), aclrtFree(dxb);
    }
    aclDestroyTensor(x1), aclDestroyTensor(t0), aclDestroyTensor(tw), aclDestroyTensor(w);
    aclrtFree(t0b), aclrtFree(twb), aclrtFree(wb);
    aclDestroyTensor(x), aclDestroyTensor(t), aclDestroyTensor(loss), aclDestroyTensor(lp);
    aclDestroyTensor(z), aclDestroyTensor(lse);
    aclrtFree(xb), aclrtFree(tb), aclrtFree(lb), aclrtFree(lpb), aclrtFree(zb), aclrtFree(lseb);
}

// The status paths. Valid arguments: x [N, C] fp32, target int64 [N], loss [1] (mean).
static void test_statuses(void) {
    fill_case();
    void *xb, *tb, *wb, *lb, *lpb, *zb, *lseb, *fb;
    ref_case k = {N, C, xs, ts, ws, 1, -100, 0, false};
    aclTensor *x = make_x(&k, ACL_FLOAT, false, &xb), *t = make_target(&k, ACL_INT64, false, &tb);
    aclTensor *w = make_vec(ws, C, ACL_FLOAT, &wb);
    int64_t one[1] = {1}, lpd[2] = {N, C}, nd[1] = {N}, cd[1] = {C}, d3[3] = {1, N, C};
    lb = test_dev_alloc(N * 4), lpb = test_dev_alloc(N * C * 4), zb = test_dev_alloc(4);
    lseb = test_dev_alloc(N * 4), fb = test_dev_alloc(N * C * 8);
    aclTensor *loss = test_tensor(one, 1, ACL_FLOAT, lb),
              *lossn = test_tensor(nd, 1, ACL_FLOAT, lb);
    aclTensor *lp = test_tensor(lpd, 2, ACL_FLOAT, lpb), *z = test_tensor(one, 1, ACL_FLOAT, zb);
    aclTensor *lse = test_tensor(nd, 1, ACL_FLOAT, lseb);
    aclTensor *tf = test_tensor(nd, 1, ACL_FLOAT, fb), *t32 = test_tensor(nd, 1, ACL_INT32, fb);
    aclTensor *x3 = test_tensor(d3, 3, ACL_FLOAT, fb), *wh = test_tensor(cd, 1, ACL_FLOAT16, fb);
    aclTensor *wn = test_tensor(nd, 1, ACL_FLOAT, fb), *g0 = test_tensor(NULL, 0, ACL_FLOAT, fb);
    aclTensor *tshort = test_tensor(cd, 1, ACL_INT64, fb);
    char mean[] = "mean", none[] = "none", avg[] = "avg";
    uint64_t wsz;
    aclOpExecutor *e;
#define CE(X, T, W, R, LS, Z, RZ, L)                                                               \
    aclnnCrossEntropyLossGetWorkspaceSize(X, T, W, R, -100, LS, Z, RZ, L, lp, z, lse, &wsz, &e)
    CHECK_EQ(CE(x, t, w, mean, 0, 0, false, loss), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(CE(NULL, t, w, mean, 0, 0, false, loss), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("input");
    CHECK_EQ(CE(x, NULL, w, mean, 0, 0, false, loss), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("target");
    CHECK_EQ(CE(x, t, w, NULL, 0, 0, false, loss), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("reductionOptional");
    CHECK_EQ(aclnnCrossEntropyLossGetWorkspaceSize(x, t, w, mean, -100, 0, 0, false, loss, lp, NULL,
                                                   lse, &wsz, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("zlossOut");
    CHECK_EQ(CE(x, tf, w, mean, 0, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("target has dtype");
    CHECK_EQ(CE(x, tshort, w, mean, 0, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("target");
    CHECK_EQ(CE(x3, t, w, mean, 0, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("input must be [N, C]");
    CHECK_EQ(CE(x, t, wh, mean, 0, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weightOptional has dtype");
    CHECK_EQ(CE(x, t, wn, mean, 0, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weightOptional must be [C]");
    CHECK_EQ(CE(x, t, w, avg, 0, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("reductionOptional");
    CHECK_EQ(CE(x, t, w, mean, 1.5, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("labelSmoothing");
    CHECK_EQ(CE(x, t, w, mean, -0.1, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(CE(x, t, w, mean, 0, 0.5, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("zloss is not supported");
    CHECK_EQ(CE(x, t, w, mean, 0, 0, true, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("zloss is not supported");
    CHECK_EQ(CE(x, t, w, mean, 0, 0, false, lossn), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("lossOut");
    CHECK_EQ(CE(x, t, w, none, 0, 0, false, loss), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("lossOut");
    CHECK_EQ(CE(x, t32, w, none, 0, 0, false, lossn), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
#undef CE
    // the grad: int64 targets only, gradLoss 0-d for a reduced loss, [N] for none
#define CEG(G, T, R, GZ, LS, Z)                                                                    \
    aclnnCrossEntropyLossGradGetWorkspaceSize(G, lp, T, w, GZ, NULL, R, -100, LS, Z, lp, &wsz, &e)
    CHECK_EQ(CEG(g0, t, mean, NULL, 0.3, 0), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(CEG(g0, t32, mean, NULL, 0, 0), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("target has dtype int32");
    CHECK_EQ(CEG(loss, t, mean, NULL, 0, 0), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradLoss");
    CHECK_EQ(CEG(g0, t, none, NULL, 0, 0), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradLoss");
    CHECK_EQ(CEG(lossn, t, none, NULL, 0, 0), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(CEG(g0, t, mean, g0, 0, 0), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("zloss");
    CHECK_EQ(CEG(g0, t, mean, NULL, 0, 1), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(CEG(g0, t, mean, NULL, 2, 0), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(CEG(NULL, t, mean, NULL, 0, 0), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("gradLoss");
#undef CEG
    // NLL: weight required, self's dtype; reduction 0..2
    aclTensor *tw = test_tensor(one, 1, ACL_FLOAT, zb);
    CHECK_EQ(aclnnNLLLossGetWorkspaceSize(x, t, w, 1, -100, loss, tw, &wsz, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(aclnnNLLLossGetWorkspaceSize(x, t, NULL, 1, -100, loss, tw, &wsz, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("weight");
    CHECK_EQ(aclnnNLLLossGetWorkspaceSize(x, t, w, 3, -100, loss, tw, &wsz, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("reduction is 3");
    CHECK_EQ(aclnnNLLLossGetWorkspaceSize(x, t, wh, 1, -100, loss, tw, &wsz, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("weight has dtype");
    CHECK_EQ(aclnnNLLLossGetWorkspaceSize(x, t, w, 0, -100, loss, tw, &wsz, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    CHECK_EQ(aclnnNLLLossGetWorkspaceSize(x3, t, w, 1, -100, loss, tw, &wsz, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has rank 3");
    CHECK_EQ(aclnnNLLLossBackwardGetWorkspaceSize(loss, x, t, w, 1, -100, tw, lp, &wsz, &e),
             ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(aclnnNLLLossBackwardGetWorkspaceSize(loss, x, t, w, 0, -100, tw, lp, &wsz, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput");
    CHECK_EQ(aclnnNLLLossBackwardGetWorkspaceSize(loss, x, t, w, 1, -100, tw, lossn, &wsz, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    aclDestroyTensor(tw);
    aclTensor *all[] = {x, t, w, loss, lossn, lp, z, lse, tf, t32, x3, wh, wn, g0, tshort};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
    aclrtFree(xb), aclrtFree(tb), aclrtFree(wb), aclrtFree(lb), aclrtFree(lpb), aclrtFree(zb);
    aclrtFree(lseb), aclrtFree(fb);
}

// 1 vs 2 threads and every ISA level bitwise, rows long enough for several vectors and a tail,
// mean with weights and smoothing.
static void test_threads_bitwise(void) {
    enum { TN = 67, TC = 1003 };
    double *x = malloc(TN * TC * 8), w[TC];
    int64_t t[TN];
    test_rng r;
    test_rng_seed(&r, 7);
    for (int i = 0; i < TN * TC; i++) x[i] = test_rng_uniform(&r, -8, 8);
    for (int j = 0; j < TC; j++) w[j] = test_rng_uniform(&r, 0.1, 3);
    for (int i = 0; i < TN; i++) t[i] = i % 9 == 4 ? -100 : (int64_t)test_rng_uniform(&r, 0, TC);
    ref_case k = {TN, TC, x, t, w, 1, -100, 0.1, false};
    void *xb, *tb, *wb;
    aclTensor *xt = make_x(&k, ACL_FLOAT, false, &xb), *tt = make_target(&k, ACL_INT64, false, &tb);
    aclTensor *wt = make_vec(w, TC, ACL_FLOAT, &wb);
    int64_t one[1] = {1}, lpd[2] = {TN, TC}, nd[1] = {TN};
    enum { MAXRUNS = 2 + OPGRAD_ISA_COUNT };
    void *res[MAXRUNS][3] = {{NULL}};
    int runs = 2 + (int)opgrad_cpu_isa() + 1;
    for (int pass = 0; pass < runs; pass++) {
        // passes 0, 1: 1 and 2 threads at the best level; then 2 threads at each level
        opgrad_set_num_threads(pass == 0 ? 1 : 2);
        opgrad_set_max_isa(pass < 2 ? opgrad_cpu_isa() : (opgrad_isa)(pass - 2));
        res[pass][0] = test_dev_alloc(4), res[pass][1] = test_dev_alloc(TN * TC * 4);
        res[pass][2] = test_dev_alloc(TN * TC * 4);
        void *zb = test_dev_alloc(4), *lseb = test_dev_alloc(TN * 4), *gb = test_dev_alloc(4);
        ((float *)gb)[0] = 1.5f;
        aclTensor *loss = test_tensor(one, 1, ACL_FLOAT, res[pass][0]);
        aclTensor *lp = test_tensor(lpd, 2, ACL_FLOAT, res[pass][1]);
        aclTensor *dx = test_tensor(lpd, 2, ACL_FLOAT, res[pass][2]);
        aclTensor *z = test_tensor(one, 1, ACL_FLOAT, zb),
                  *lse = test_tensor(nd, 1, ACL_FLOAT, lseb);
        aclTensor *g = test_tensor(NULL, 0, ACL_FLOAT, gb);
        char mean[] = "mean";
        aclnnStatus st;
        OP_RUN(st,
               aclnnCrossEntropyLossGetWorkspaceSize(xt, tt, wt, mean, -100, 0.1, 0, false, loss,
                                                     lp, z, lse, &ws_, &ex_),
               aclnnCrossEntropyLoss);
        CHECK_EQ(st, ACLNN_SUCCESS);
        OP_RUN(st,
               aclnnCrossEntropyLossGradGetWorkspaceSize(g, lp, tt, wt, NULL, NULL, mean, -100, 0.1,
                                                         0, dx, &ws_, &ex_),
               aclnnCrossEntropyLossGrad);
        CHECK_EQ(st, ACLNN_SUCCESS);
        aclDestroyTensor(loss), aclDestroyTensor(lp), aclDestroyTensor(dx), aclDestroyTensor(z);
        aclDestroyTensor(lse), aclDestroyTensor(g);
        aclrtFree(zb), aclrtFree(lseb), aclrtFree(gb);
    }
    opgrad_set_num_threads(2);
    opgrad_set_max_isa((opgrad_isa)(OPGRAD_ISA_COUNT - 1));
    for (int pass = 1; pass < runs; pass++) {
        CHECKF(!memcmp(res[0][0], res[pass][0], 4), "loss differs in run %d", pass);
        CHECKF(!memcmp(res[0][1], res[pass][1], TN * TC * 4), "logProb differs in run %d", pass);
        CHECKF(!memcmp(res[0][2], res[pass][2], TN * TC * 4), "gradient differs in run %d", pass);
    }
    double g[1] = {1.5}, loss[1];
    reference(&k, g, loss, NULL);
    CHECKF(fabs(((float *)res[0][0])[0] - loss[0]) <= 1e-5 * fabs(loss[0]), "loss %g vs %g",
           ((float *)res[0][0])[0], loss[0]);
    for (int pass = 0; pass < runs; pass++)
        for (int j = 0; j < 3; j++) aclrtFree(res[pass][j]);
    aclDestroyTensor(xt), aclDestroyTensor(tt), aclDestroyTensor(wt);
    aclrtFree(xb), aclrtFree(tb), aclrtFree(wb);
    free(x);
}

// NLLLoss2d: self [N, C, H, W], target [N, H, W] (int32, strided), per pixel as NLLLoss.
static void test_nll2d(void) {
    enum { BN = 2, BC = 3, BH = 2, BW = 2, P = BH * BW };
    test_rng r;
    test_rng_seed(&r, 21);
    void *xb = test_dev_alloc(BN * BC * P * 4), *wb = test_dev_alloc(BC * 4);
    void *tb = test_dev_alloc(BN * P * 2 * 4), *ob = test_dev_alloc(BN * P * 4);
    void *twb = test_dev_alloc(4), *gb = test_dev_alloc(BN * P * 4),
         *dxb = test_dev_alloc(BN * BC * P * 4);
    float *x = xb, *w = wb, *o = ob, *tw = twb, *g = gb, *dx = dxb;
    int32_t *t = tb;
    for (int i = 0; i < BN * BC * P; i++) x[i] = (float)test_rng_uniform(&r, -3, 0);
    for (int j = 0; j < BC; j++) w[j] = (float)test_rng_uniform(&r, 0.5, 2);
    static const int32_t cls[BN * P] = {0, 2, -100, 1, 1, 7, 0, 2};
    for (int i = 0; i < BN * P; i++) t[2 * i] = cls[i], g[i] = (float)(0.5 + i);
    int64_t xd[4] = {BN, BC, BH, BW}, td[3] = {BN, BH, BW}, ts[3] = {2 * P, 2 * BW, 2};
    int64_t tsd[1] = {2 * BN * P}, cd[1] = {BC}, one[1] = {1};
    aclTensor *xt = test_tensor(xd, 4, ACL_FLOAT, xb), *wt = test_tensor(cd, 1, ACL_FLOAT, wb);
    aclTensor *tt = aclCreateTensor(td, 3, ACL_INT32, ts, 0, ACL_FORMAT_ND, tsd, 1, tb);
    aclTensor *twt = test_tensor(one, 1, ACL_FLOAT, twb), *dxt = test_tensor(xd, 4, ACL_FLOAT, dxb);
    for (int red = 0; red < 3; red++) {
        aclTensor *ot =
            red == 0 ? test_tensor(td, 3, ACL_FLOAT, ob) : test_tensor(one, 1, ACL_FLOAT, ob);
        aclTensor *gt =
            red == 0 ? test_tensor(td, 3, ACL_FLOAT, gb) : test_tensor(one, 1, ACL_FLOAT, gb);
        aclnnStatus st;
        OP_RUN(st, aclnnNLLLoss2dGetWorkspaceSize(xt, tt, wt, red, -100, ot, twt, &ws_, &ex_),
               aclnnNLLLoss2d);
        CHECK_EQ(st, ACLNN_SUCCESS);
        OP_RUN(
            st,
            aclnnNLLLoss2dBackwardGetWorkspaceSize(gt, xt, tt, wt, red, -100, twt, dxt, &ws_, &ex_),
            aclnnNLLLoss2dBackward);
        CHECK_EQ(st, ACLNN_SUCCESS);
        double total = 0, wtot = 0;
        for (int i = 0; i < BN * P; i++) {
            int n = i / P, p = i % P, c = cls[i];
            bool ok = c >= 0 && c < BC;
            double l = ok ? -(double)w[c] * x[(n * BC + c) * P + p] : 0;
            wtot += ok ? w[c] : 0, total += l;
            if (red == 0)
                CHECKF(fabs(o[i] - l) <= 1e-6 * (1 + fabs(l)), "pixel %d: %g vs %g", i, o[i], l);
        }
        if (red) {
            double want = red == 1 ? total / wtot : total;
            CHECKF(fabs(o[0] - want) <= 1e-6 * (1 + fabs(want)), "red %d: %g vs %g", red, o[0],
                   want);
        }
        CHECK(fabs(tw[0] - wtot) <= 1e-6 * wtot);
        for (int i = 0; i < BN * BC * P; i++) {
            int n = i / (BC * P), c = i / P % BC, p = i % P, k = n * P + p;
            double coef = red == 0 ? g[k] : red == 2 ? g[0] : g[0] / wtot;
            double want = cls[k] == c ? -coef * w[c] : 0;
            CHECKF(fabs(dx[i] - want) <= 1e-6 * (1 + fabs(want)), "red %d dx[%d]: %g vs %g", red, i,
                   dx[i], want);
        }
        aclDestroyTensor(ot), aclDestroyTensor(gt);
    }
    aclDestroyTensor(xt), aclDestroyTensor(wt), aclDestroyTensor(tt), aclDestroyTensor(twt);
    aclDestroyTensor(dxt);
    aclrtFree(xb), aclrtFree(wb), aclrtFree(tb), aclrtFree(ob), aclrtFree(twb), aclrtFree(gb);
    aclrtFree(dxb);
}

int main(void) {
    aclInit(NULL);
    RUN(test_statuses);
    RUN(test_values);
    RUN(test_upstream_example);
    RUN(test_out_of_range_targets);
    RUN(test_edges);
    RUN(test_threads_bitwise);
    RUN(test_nll2d);
    return test_summary();
}
