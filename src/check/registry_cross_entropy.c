/* Registry entries of the 'cross_entropy' family:
 *
 *   cross_entropy_*  aclnnCrossEntropyLoss + aclnnCrossEntropyLossGrad
 *   nll_loss_*       aclnnNLLLoss + aclnnNLLLossBackward
 *   nll_loss2d_*     aclnnNLLLoss2d + aclnnNLLLoss2dBackward: x [N, C, 2, 3], target [N, 2, 3]
 *
 * attrs = {reduction (0 none, 1 mean, 2 sum), ignore (rows hit ignoreIndex / an out-of-range
 * class), weighted, labelSmoothing, target dtype (0 INT64, 1 INT32), ignoreIndex}. An
 * ignoreIndex of 1 is a valid class: a kernel that does not compare with it uses those rows
 * (-100 would be ignored as out of range anyway).
 *
 * Inputs: x [N, C] (the layout's 2-d shape), target [N] and, when weighted, weight [C]; target
 * and weight are not differentiable. The checker draws them as doubles v in [lo, hi]; the entry
 * points and the references map each to the same value with u = (v - lo) / (hi - lo):
 *   target: class floor(u C) (clamped to C - 1); in the "ignore" entries the rows n with
 *           n % 5 == 1 get ignoreIndex (a row drawn as that class takes the next one), those with n
 * % 5 == 3 the class C or -1 (out of range: ignored, as the operators document), so that 2 rows in
 * 5 are ignored (more would leave the gradient mostly zero, which the checker rightly mistrusts);
 *   weight: 0.5 + floor(8 u) / 8, exact in every dtype (the entry builds that tensor).
 * The output is the loss ([N] for none; [1] otherwise); the backward entry runs the forward
 * (logProbOut in FLOAT, so that the gradient is judged from the forward's fp32 log-probabilities;
 * DOUBLE in the float64 rows) then the grad with the checker's grad_output (0-d for a reduced
 * loss), and NLL's with the forward's totalWeightOut. The float64 rows give CrossEntropyLoss a
 * DOUBLE weight. References: float64, from the formulas, their sums compensated (ogc_ksum), so
 * that they stay far more accurate than the float64 kernels. */
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
#include "check/check.h"
#include "check/compare.h"
#include "check/registry.h"
#include "tensor/dtype.h"

#define LO (-4.0)
#define HI 4.0

enum { A_RED, A_IGNORE, A_WEIGHTED, A_SMOOTH, A_TKIND, A_IGNIDX };

static bool is_nll(const ogc_op *op) { return !strncmp(op->name, "nll", 3); }
// NLLLoss2d: self [N, C, 2, 3], target [N, 2, 3] (a row per pixel)
static bool is_2d(const ogc_op *op) { return !strncmp(op->name, "nll_loss2d", 10); }

static double unit(double v) { return (v - LO) / (HI - LO); }

static int64_t map_target(const ogc_op *op, double v, int64_t row, int64_t c) {
    double u = unit(v);
    if (op->attrs[A_IGNORE] != 0) {
        if (row % 5 == 1) return (int64_t)op->attrs[A_IGNIDX];
        if (row % 5 == 3) return row % 2 ? c : -1; // out of range: ignored
    }
    int64_t t = (int64_t)floor(u * (double)c);
    t = t < 0 ? 0 : t >= c ? c - 1 : t;
    // only the chosen rows are ignored (a drawn ignoreIndex moves to the next class)
    return op->attrs[A_IGNORE] != 0 && t == (int64_t)op->attrs[A_IGNIDX] ? (t + 1) % c : t;
}

static double map_weight(double v) {
    double q = floor(8.0 * unit(v));
    q = q < 0 ? 0 : q > 7 ? 7 : q;
    return 0.5 + q / 8.0;
}

static bool ce_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    if (!strncmp(layout, "bcast", 5) || in[0].ndim != 2) return false;
    int64_t n = in[0].dims[0], c = in[0].dims[1];
    if (c == 0) return false;
    if (n == 0 && op->attrs[A_RED] == 1) return false; // a mean over nothing is NaN
    in[1] = (ogc_shape){.ndim = 1, .dims = {n}};
    if (is_2d(op)) {
        in[0] = (ogc_shape){.ndim = 4, .dims = {n, c, 2, 3}};
        in[1] = (ogc_shape){.ndim = 3, .dims = {n, 2, 3}};
    }
    if (op->nin > 2) in[2] = (ogc_shape){.ndim = 1, .dims = {c}};
    *out = op->attrs[A_RED] == 0 ? in[1] : (ogc_shape){.ndim = 1, .dims = {1}};
    return true;
}

// ---------------------------------------------------------------------------------------------
// References

typedef struct ce_case {
    int64_t n, c, px; // rows (samples x pixels), classes, pixels per sample
    int red;
    bool nll;
    double keep, smooth; // 1 - eps, eps / C
    int64_t *t;          // class per row, -1 when ignored
    double *w;           // [C]
    double wall;         // sum of w
    double wtotal;       // sum of w[t_n] over the rows not ignored
} ce_case;

static void case_init(const ogc_op *op, const ogc_shape *in, const double *const *x, ce_case *k) {
    k->c = in[0].dims[1], k->px = 1;
    for (int d = 2; d < in[0].ndim; d++) k->px *= in[0].dims[d];
    k->n = in[0].dims[0] * k->px;
    k->red = (int)op->attrs[A_RED];
    k->nll = is_nll(op);
    double eps = k->nll ? 0 : op->attrs[A_SMOOTH];
    k->keep = 1 - eps, k->smooth = eps / (double)k->c;
    k->t = malloc(((size_t)k->n + 1) * sizeof *k->t);
    k->w = malloc(((size_t)k->c + 1) * sizeof *k->w);
    ogc_ksum wall = {0, 0}, wtotal = {0, 0};
    for (int64_t j = 0; j < k->c; j++) {
        k->w[j] = op->nin > 2 ? map_weight(x[2][j]) : 1.0;
        ogc_ksum_add(&wall, k->w[j]);
    }
    for (int64_t i = 0; i < k->n; i++) {
        int64_t t = map_target(op, x[1][i], i, k->c);
        k->t[i] = t >= 0 && t < k->c && t != (int64_t)op->attrs[A_IGNIDX] ? t : -1;
        if (k->t[i] >= 0) ogc_ksum_add(&wtotal, k->w[k->t[i]]);
    }
    k->wall = ogc_ksum_value(&wall), k->wtotal = ogc_ksum_value(&wtotal);
}

static void case_free(ce_case *k) { free(k->t), free(k->w); }

// Element (row i, class j) of an [N, C, pixels...] tensor: rows are (sample, pixel).
static int64_t at(const ce_case *k, int64_t i, int64_t j) {
    return (i / k->px) * k->c * k->px + j * k->px + i % k->px;
}

static void gather(const ce_case *k, const double *x, int64_t i, double *row) {
    for (int64_t j = 0; j < k->c; j++) row[j] = x[at(k, i, j)];
}

// Row i: log-probabilities lp (x itself for NLL), lse, and |x| + |lse| per class (mag).
static double row_logprob(const ce_case *k, const double *x, double *lp, double *lmag) {
    if (k->nll) {
        for (int64_t j = 0; j < k->c; j++) lp[j] = x[j], lmag[j] = fabs(x[j]);
        return 0;
    }
    double m = -INFINITY;
    ogc_ksum s = {0, 0};
    for (int64_t j = 0; j < k->c; j++) m = fmax(m, x[j]);
    for (int64_t j = 0; j < k->c; j++) ogc_ksum_add(&s, exp(x[j] - m));
    double lse = m + log(ogc_ksum_value(&s));
    for (int64_t j = 0; j < k->c; j++) lp[j] = x[j] - lse, lmag[j] = fabs(x[j]) + fabs(lse);
    return lse;
}

static void ce_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                           const ogc_shape *out, double *y, double *const *saved, double *mag,
                           int64_t *terms) {
    (void)out, (void)saved;
    ce_case k;
    case_init(op, in, x, &k);
    double *lp = malloc(((size_t)k.c + 1) * sizeof *lp), *lm = malloc(((size_t)k.c + 1) * 8);
    double *xr = malloc(((size_t)k.c + 1) * sizeof *xr);
    ogc_ksum total = {0, 0};
    double total_mag = 0;
    for (int64_t i = 0; i < k.n; i++) {
        ogc_ksum l = {0, 0};
        double lmag = 0;
        int64_t t = k.t[i];
        if (t >= 0) {
            gather(&k, x[0], i, xr);
            row_logprob(&k, xr, lp, lm);
            ogc_ksum_add(&l, -k.keep * k.w[t] * lp[t]), lmag = k.keep * k.w[t] * lm[t];
            for (int64_t j = 0; j < k.c && k.smooth != 0; j++)
                ogc_ksum_add(&l, -k.smooth * k.w[j] * lp[j]), lmag += k.smooth * k.w[j] * lm[j];
        }
        double li = ogc_ksum_value(&l);
        if (k.red == 0) y[i] = li, mag[i] = lmag;
        ogc_ksum_add(&total, li), total_mag += lmag;
    }
    if (k.red != 0) {
        double d = k.red == 1 ? k.wtotal : 1.0;
        y[0] = ogc_ksum_value(&total) / d, mag[0] = total_mag / d;
    }
    *terms = k.c + (k.red != 0 ? k.n : 0);
    free(lp), free(lm), free(xr);
    case_free(&k);
}

static void ce_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                            const ogc_shape *out, const double *const *saved, const double *gy,
                            double *const *gx, double *const *mag, int64_t *terms) {
    (void)out, (void)saved;
    ce_case k;
    case_init(op, in, x, &k);
    double *lp = malloc(((size_t)k.c + 1) * sizeof *lp), *lm = malloc(((size_t)k.c + 1) * 8);
    double *xr = malloc(((size_t)k.c + 1) * sizeof *xr);
    for (int64_t i = 0; i < k.n; i++) {
        int64_t t = k.t[i];
        double *g = gx[0], *gm = mag[0];
        for (int64_t j = 0; j < k.c; j++) g[at(&k, i, j)] = 0, gm[at(&k, i, j)] = 0;
        if (t < 0) continue;
        double coef = k.red == 0 ? gy[i] : k.red == 2 ? gy[0] : gy[0] / k.wtotal;
        if (k.nll) {
            g[at(&k, i, t)] = -coef * k.w[t], gm[at(&k, i, t)] = fabs(coef * k.w[t]);
            continue;
        }
        gather(&k, x[0], i, xr);
        row_logprob(&k, xr, lp, lm);
        double a = k.keep * k.w[t] + k.smooth * k.wall;
        for (int64_t j = 0; j < k.c; j++) {
            double p = exp(lp[j]), b = k.smooth * k.w[j] + (j == t ? k.keep * k.w[t] : 0);
            g[at(&k, i, j)] = coef * (a * p - b);
            gm[at(&k, i, j)] = fabs(coef) * (a * p + b);
        }
    }
    terms[0] = k.c;
    free(lp), free(lm), free(xr);
    case_free(&k);
}

// ---------------------------------------------------------------------------------------------
// Entry points

typedef struct ce_args {
    aclTensor *target, *weight;
    void *tbuf, *wbuf;
} ce_args;

// The integer target (int64 for the grad when `force64`) and the weight tensor from the drawn
// values, laid out with the drawn target's stride (a strided layout gives a strided target).
static void make_args(ogc_call *c, bool force64, ce_args *a) {
    const ogc_op *op = c->op;
    const aclTensor *x = c->in[0], *tv = c->in[1];
    int64_t n = tv->numel, cls = x->dims[1];
    bool i64 = force64 || op->attrs[A_TKIND] == 0;
    bool strided = false;
    for (int d = 0; d < tv->ndim; d++) strided = strided || (tv->dims[d] > 1 && tv->strides[d] < 0);
    int64_t contiguous_stride = 1;
    for (int d = tv->ndim - 1; d >= 0; d--) {
        if (tv->dims[d] > 1 && tv->strides[d] != contiguous_stride) strided = true;
        contiguous_stride *= tv->dims[d];
    }
    int64_t stride = strided ? 2 : 1;
    size_t es = i64 ? 8 : 4;
    a->tbuf = calloc((size_t)(n * stride + 1), es);
    const char *tdata = (const char *)tv->data + tv->offset * (int64_t)aclDataTypeSize(tv->dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0, rest = i; // element i (row-major) of the drawn target's view
        for (int d = tv->ndim - 1; d >= 0; d--)
            off += (rest % tv->dims[d]) * tv->strides[d], rest /= tv->dims[d];
        double v = ogc_load(tdata, off, tv->dtype);
        int64_t t = map_target(op, v, i, cls);
        if (i64)
            ((int64_t *)a->tbuf)[i * stride] = t;
        else
            ((int32_t *)a->tbuf)[i * stride] = (int32_t)t;
    }
    int64_t tstr[OG_MAX_DIMS], sdims[1] = {n * stride}, st = stride;
    for (int d = tv->ndim - 1; d >= 0; d--) tstr[d] = st, st *= tv->dims[d];
    a->target = aclCreateTensor(tv->dims, (uint64_t)tv->ndim, i64 ? ACL_INT64 : ACL_INT32, tstr, 0,
                                ACL_FORMAT_ND, sdims, 1, a->tbuf);
    a->weight = NULL, a->wbuf = NULL;
    if (op->nin > 2) {
        const aclTensor *wv = c->in[2];
        // CrossEntropyLoss takes a FLOAT weight (DOUBLE in float64); NLLLoss one of self's dtype
        aclDataType wdt = is_nll(op) || x->dtype == ACL_DOUBLE ? x->dtype : ACL_FLOAT;
        a->wbuf = calloc((size_t)cls + 1, 8);
        const char *wdata =
            (const char *)wv->data + wv->offset * (int64_t)aclDataTypeSize(wv->dtype);
        for (int64_t j = 0; j < cls; j++)
            ogc_store(a->wbuf, j, wdt, map_weight(ogc_load(wdata, j * wv->strides[0], wv->dtype)));
        int64_t wdims[1] = {cls};
        a->weight = aclCreateTensor(wdims, 1, wdt, NULL, 0, ACL_FORMAT_ND, wdims, 1, a->wbuf);
    }
}

static void free_args(ce_args *a) {
    aclDestroyTensor(a->target);
    if (a->weight) aclDestroyTensor(a->weight);
    free(a->tbuf), free(a->wbuf);
}

static const char *reduction_name(const ogc_op *op) {
    int r = (int)op->attrs[A_RED];
    return r == 0 ? "none" : r == 1 ? "mean" : "sum";
}

// The dtype of the saved log-probabilities the backward entries judge the gradient from.
static aclDataType lp_dtype(const aclTensor *x) {
    return x->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
}

// The forward into `loss` (and logProb, lp_dtype [N, C], into lp_buf when given).
static int ce_run_forward(ogc_call *c, ce_args *a, aclTensor *loss, void *lp_buf) {
    const aclTensor *x = c->in[0];
    int64_t n = x->dims[0], cls = x->dims[1];
    void *own = lp_buf ? NULL : malloc(((size_t)(n * cls) + 1) * sizeof(double));
    void *lpd = lp_buf ? lp_buf : own;
    aclDataType lp_dt = lp_buf ? lp_dtype(x) : x->dtype;
    int64_t lpdims[2] = {n, cls}, zd[1] = {1}, nd[1] = {n};
    float zbuf[1], *lsebuf = malloc(((size_t)n + 1) * sizeof(float));
    aclTensor *lp = aclCreateTensor(lpdims, 2, lp_dt, NULL, 0, ACL_FORMAT_ND, lpdims, 2, lpd);
    aclTensor *z = aclCreateTensor(zd, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, zd, 1, zbuf);
    aclTensor *lse = aclCreateTensor(nd, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, nd, 1, lsebuf);
    char red[8];
    strcpy(red, reduction_name(c->op));
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnCrossEntropyLossGetWorkspaceSize(
        x, a->target, a->weight, red, (int64_t)c->op->attrs[A_IGNIDX], c->op->attrs[A_SMOOTH], 0.0,
        false, loss, lp, z, lse, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnCrossEntropyLoss);
    aclDestroyTensor(lp), aclDestroyTensor(z), aclDestroyTensor(lse);
    free(own), free(lsebuf);
    return st;
}

static int nll_run_forward(ogc_call *c, ce_args *a, aclTensor *loss, aclTensor *total) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = (is_2d(c->op) ? aclnnNLLLoss2dGetWorkspaceSize : aclnnNLLLossGetWorkspaceSize)(
        c->in[0], a->target, a->weight, (int64_t)c->op->attrs[A_RED],
        (int64_t)c->op->attrs[A_IGNIDX], loss, total, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, is_2d(c->op) ? aclnnNLLLoss2d : aclnnNLLLoss);
    return st;
}

static int ce_forward(ogc_call *c) {
    ce_args a;
    make_args(c, false, &a);
    aclTensor *loss = ogc_result_tensor(&c->results[0]);
    int st;
    if (is_nll(c->op)) {
        double tw[1];
        int64_t d1[1] = {1};
        aclTensor *total =
            aclCreateTensor(d1, 1, c->in[0]->dtype, NULL, 0, ACL_FORMAT_ND, d1, 1, tw);
        st = nll_run_forward(c, &a, loss, total);
        aclDestroyTensor(total);
    } else {
        st = ce_run_forward(c, &a, loss, NULL);
    }
    aclDestroyTensor(loss);
    free_args(&a);
    return st;
}

// grad_out as the grad wants it: [N] for none, 0-d for a reduced loss.
static aclTensor *grad_view(ogc_call *c) {
    const aclTensor *g = c->grad_out;
    if (c->op->attrs[A_RED] == 0) return NULL;
    return aclCreateTensor(NULL, 0, g->dtype, NULL, 0, ACL_FORMAT_ND, NULL, 0,
                           (char *)g->data + g->offset * (int64_t)aclDataTypeSize(g->dtype));
}

static int ce_backward(ogc_call *c) {
    const aclTensor *x = c->in[0];
    int64_t n = x->dims[0], cls = x->dims[1];
    ce_args a;
    make_args(c, !is_nll(c->op), &a);
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    aclTensor *g0 = grad_view(c);
    const aclTensor *g = g0 ? g0 : c->grad_out;
    // the forward's loss: the target's shape for none, else [1]
    bool none = c->op->attrs[A_RED] == 0;
    const aclTensor *tv = c->in[1];
    int64_t one[1] = {1}, ln = none ? tv->numel : 1;
    double *lbuf = malloc(((size_t)ln + 1) * sizeof(double));
    aclTensor *loss = aclCreateTensor(none ? tv->dims : one, none ? (uint64_t)tv->ndim : 1,
                                      lp_dtype(x), NULL, 0, ACL_FORMAT_ND, &ln, 1, lbuf);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st;
    if (is_nll(c->op)) {
        // the forward's totalWeightOut, in self's dtype as the backward wants it
        uint64_t twbuf[1];
        int64_t d1[1] = {1};
        aclTensor *total = aclCreateTensor(d1, 1, x->dtype, NULL, 0, ACL_FORMAT_ND, d1, 1, twbuf);
        st = nll_run_forward(c, &a, loss, total);
        if (!st)
            st = is_2d(c->op) ? aclnnNLLLoss2dBackwardGetWorkspaceSize(
                                    g, x, a.target, a.weight, (int64_t)c->op->attrs[A_RED],
                                    (int64_t)c->op->attrs[A_IGNIDX], total, dx, &ws, &ex)
                              : aclnnNLLLossBackwardGetWorkspaceSize(
                                    g, x, a.target, a.weight, (int64_t)c->op->attrs[A_RED],
                                    (int64_t)c->op->attrs[A_IGNIDX], total, dx, &ws, &ex);
        if (!st)
            st = ogc_launch(ws, ex, is_2d(c->op) ? aclnnNLLLoss2dBackward : aclnnNLLLossBackward);
        aclDestroyTensor(total);
    } else {
        double *lp = malloc(((size_t)(n * cls) + 1) * sizeof(double));
        // the forward's int32 target when the entry draws int32 (the grad takes int64 only)
        ce_args af;
        make_args(c, false, &af);
        st = ce_run_forward(c, &af, loss, lp);
        free_args(&af);
        int64_t lpdims[2] = {n, cls};
        aclTensor *lpt =
            aclCreateTensor(lpdims, 2, lp_dtype(x), NULL, 0, ACL_FORMAT_ND, lpdims, 2, lp);
        char red[8];
        strcpy(red, reduction_name(c->op));
        if (!st)
            st = aclnnCrossEntropyLossGradGetWorkspaceSize(
                g, lpt, a.target, a.weight, NULL, NULL, red, (int64_t)c->op->attrs[A_IGNIDX],
                c->op->attrs[A_SMOOTH], 0.0, dx, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnCrossEntropyLossGrad);
        aclDestroyTensor(lpt);
        free(lp);
    }
    aclDestroyTensor(loss);
    free(lbuf);
    if (g0) aclDestroyTensor(g0);
    aclDestroyTensor(dx);
    free_args(&a);
    return st;
}

// ---------------------------------------------------------------------------------------------

// {reduction, ignore, weighted, labelSmoothing, target dtype (0 INT64, 1 INT32), ignoreIndex}
static const double a_mean[] = {1, 0, 0, 0, 0, -100}, a_none_i32[] = {0, 1, 0, 0, 1, -100},
                    a_sum_w[] = {2, 1, 1, 0, 0, 1}, a_mean_iw[] = {1, 1, 1, 0, 0, 1},
                    a_mean_iw32[] = {1, 1, 1, 0, 1, -100}, a_smooth[] = {1, 1, 1, 0.2, 0, 1},
                    a_smooth_none[] = {0, 0, 0, 0.1, 1, -100},
                    a_smooth_sum[] = {2, 1, 0, 0.3, 0, 1};
static const double n_none[] = {0, 1, 1, 0, 0, 1}, n_mean[] = {1, 1, 1, 0, 1, -100},
                    n_sum[] = {2, 0, 1, 0, 0, -100};

// NLL's gradient has one non-zero per row by definition (-g w[t] at the target): its share of
// zeros is 1 - 1/C and says nothing about the kernel; every element is still compared.
#define NLL_ZERO_TRUST 1.0

#define CE_ENTRY(entry_name, api_name, attr, NIN, ZERO_TRUST)                                      \
    {                                                                                              \
        .name = entry_name, .zero_trust = ZERO_TRUST, .api = api_name, .nin = NIN,                 \
        .in = {{"input", true}, {"target", false}, {"weight", false}}, .attrs = attr,              \
        .dtypes = OG_DTS_FLOATING64, .lo = LO, .hi = HI, .fp32_ulps = 4, .forward = ce_forward,    \
        .backward = ce_backward, .shapes = ce_shapes, .ref_forward_tensor = ce_ref_forward,        \
        .ref_backward_tensor = ce_ref_backward,                                                    \
    }
#define CE_API "aclnnCrossEntropyLoss + aclnnCrossEntropyLossGrad"
#define NLL_API "aclnnNLLLoss + aclnnNLLLossBackward"
#define NLL2D_API "aclnnNLLLoss2d + aclnnNLLLoss2dBackward"

static const ogc_op cross_entropy_ops[] = {
    CE_ENTRY("cross_entropy", CE_API, a_mean, 2, 0),
    CE_ENTRY("cross_entropy_none_int32_ignore", CE_API, a_none_i32, 2, 0),
    CE_ENTRY("cross_entropy_sum_weight_ignore", CE_API, a_sum_w, 3, 0),
    CE_ENTRY("cross_entropy_mean_weight_ignore", CE_API, a_mean_iw, 3, 0),
    CE_ENTRY("cross_entropy_mean_weight_ignore_int32", CE_API, a_mean_iw32, 3, 0),
    CE_ENTRY("cross_entropy_smooth_mean_weight_ignore", CE_API, a_smooth, 3, 0),
    CE_ENTRY("cross_entropy_smooth_none_int32", CE_API, a_smooth_none, 2, 0),
    CE_ENTRY("cross_entropy_smooth_sum_ignore", CE_API, a_smooth_sum, 2, 0),
    CE_ENTRY("nll_loss_none_ignore", NLL_API, n_none, 3, NLL_ZERO_TRUST),
    CE_ENTRY("nll_loss_mean_ignore_int32", NLL_API, n_mean, 3, NLL_ZERO_TRUST),
    CE_ENTRY("nll_loss_sum", NLL_API, n_sum, 3, NLL_ZERO_TRUST),
    CE_ENTRY("nll_loss2d_none_ignore", NLL2D_API, n_none, 3, NLL_ZERO_TRUST),
    CE_ENTRY("nll_loss2d_mean_ignore_int32", NLL2D_API, n_mean, 3, NLL_ZERO_TRUST),
    CE_ENTRY("nll_loss2d_sum", NLL2D_API, n_sum, 3, NLL_ZERO_TRUST),
};

OGC_DEFINE_FAMILY(cross_entropy, cross_entropy_ops)
