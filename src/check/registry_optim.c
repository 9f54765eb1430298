/* Registry entries of the 'optim' family (aclnnApplyAdamWV2, aclnnFusedAdamw, aclnnFusedSgd):
 * forward-only entries (an optimizer step has nothing to differentiate).
 *
 * The float64 references follow PyTorch's documented update rules (torch.optim.AdamW and
 * torch.optim.SGD), not the kernels:
 *   AdamW  t = step + 1; g = (maximize ? -grad : grad) / gradScale; p1 = p (1 - lr wd);
 *          m1 = beta1 m + (1 - beta1) g; v1 = beta2 v + (1 - beta2) g^2; vmax1 = max(vmax, v1);
 *          p2 = p1 - lr / (1 - beta1^t) m1 / (sqrt(amsgrad ? vmax1 : v1) / sqrt(1 - beta2^t)
 *          + eps); skipped entirely (nothing changes) when foundInf = 1.
 *   SGD    g = grad / gradScale; d = (maximize ? -g : g) + wd p; b1 = first ? d : mu b +
 *          (1 - dampening) d; d = nesterov ? d + mu b1 : b1 (with buffers); p1 = p - lr d.
 * Each entry runs the operator in place on copies of the case's tensors (same views over copied
 * storage, so the strided and offset layouts reach the kernels), and reports the updated copies.
 * The second moments v and vmax are drawn as |x| (they are non-negative by definition); the
 * reference applies the same mapping.
 *
 * Tolerances: p2 and m1 (and SGD's p1 and buffer) cancel (terms of either sign), so each is the
 * output of its own entry with a magnitude bound (the same expression with every term made
 * non-negative), and the entries of one configuration come in pairs: "_p" (output the parameter;
 * saved the second moments, which do not cancel, or SGD's rescaled gradient) and "_m" (output
 * the first moment / the momentum buffer). fp32: a chain of about ten separately rounded
 * operations plus the fp32 rounding of the constants (lr / (1 - beta1^t), 1 / sqrt(1 - beta2^t),
 * betas): 8 ulps of the magnitude bound. 16-bit: computed in fp32, rounded once on store.
 *
 * attrs: {which (0 = _p, 1 = _m), lr, beta1, beta2, weightDecay, eps, amsgrad, maximize, step,
 * step is FLOAT, gradScale (0 = none), foundInf (-1 = none)} for AdamW;
 * {which, lr, momentum, dampening, weightDecay, nesterov, maximize, isFirstStep, gradScale}
 * for SGD (momentum 0: no buffers). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_apply_adam_w.h"
#include "aclnnop/aclnn_apply_adam_w_v2.h"
#include "aclnnop/aclnn_fused_adamw.h"
#include "aclnnop/aclnn_fused_sgd.h"
#include "check/check.h"
#include "check/compare.h"
#include "check/registry.h"
#include "tensor/dtype.h"

enum {
    A_WHICH,
    A_LR,
    A_B1,
    A_B2,
    A_WD,
    A_EPS,
    A_AMS,
    A_MAX,
    A_STEP,
    A_STEPF,
    A_SCALE,
    A_INF,
    A_B1POW,
    A_B2POW // ApplyAdamW: beta^(t-1) (its step counter)
};
enum { S_WHICH, S_LR, S_MOM, S_DAMP, S_WD, S_NEST, S_MAX, S_FIRST, S_SCALE };

static int64_t numel_of(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

// Every input has the output's shape (the broadcast layouts become plain ones); the mixed layout
// does not apply (its 16-bit grad with fp32 states is ApplyAdamWV2's mixed mode, tested in
// tests/api/test_api_optim.c).
static bool opt_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    if (strcmp(layout, "mixed") == 0) return false;
    for (int k = 0; k < op->nin; k++) in[k] = *out;
    return true;
}

// ---- references ---------------------------------------------------------------------------

static bool is_v1(const ogc_op *op) { return strcmp(op->api, "aclnnApplyAdamW") == 0; }

// A hyperparameter as the operator receives it: rounded to float where its argument is a float.
static double hyper(bool f32, double v) { return f32 ? (double)(float)v : v; }

static void adam_ref(const ogc_op *op, const ogc_shape *in, const double *const *x,
                     const ogc_shape *out, double *y, double *const *saved, double *mag,
                     int64_t *terms) {
    (void)out;
    const double *a = op->attrs;
    int64_t n = numel_of(&in[0]);
    bool ams = a[A_AMS] != 0, skip = a[A_INF] == 1;
    // ApplyAdamWV2 takes its hyperparameters as float: those are the values it is given
    bool f32 = strstr(op->api, "V2") != NULL;
    double t = a[A_STEP] + 1, lr = hyper(f32, a[A_LR]), b1 = hyper(f32, a[A_B1]),
           b2 = hyper(f32, a[A_B2]), wd = hyper(f32, a[A_WD]), eps = hyper(f32, a[A_EPS]);
    double step_size = lr / (1 - pow(b1, t)), bc2_sqrt = sqrt(1 - pow(b2, t));
    bool old_api = is_v1(op);
    if (old_api) { // beta^t = betaPower * beta
        step_size = lr / (1 - a[A_B1POW] * b1);
        bc2_sqrt = sqrt(1 - a[A_B2POW] * b2);
    }
    for (int64_t i = 0; i < n; i++) {
        double p = x[0][i], g = x[1][i], m = x[2][i], v = fabs(x[3][i]);
        double vx = ams ? fabs(x[4][i]) : 0;
        double p2 = p, m1 = m, v1 = v, vx1 = vx, pmag = fabs(p), mmag = fabs(m);
        if (!skip) {
            if (a[A_MAX] != 0) g = -g;
            if (a[A_SCALE] != 0) g /= a[A_SCALE];
            double p1 = p * (1 - lr * wd);
            m1 = b1 * m + (1 - b1) * g;
            mmag = fabs(b1 * m) + fabs((1 - b1) * g);
            v1 = b2 * v + (1 - b2) * g * g;
            vx1 = vx > v1 ? vx : v1;
            double denom = sqrt(ams ? vx1 : v1) / bc2_sqrt + eps;
            p2 = p1 - step_size * m1 / denom;
            pmag = fabs(p1) + step_size * mmag / denom;
        }
        if (a[A_WHICH] == 0) {
            y[i] = p2, mag[i] = pmag;
            saved[0][i] = v1;
            if (ams && !old_api) saved[1][i] = vx1; // ApplyAdamW reads maxGradNorm, never writes it
        } else {
            y[i] = m1, mag[i] = mmag;
        }
    }
    *terms = 1;
}

static void sgd_ref(const ogc_op *op, const ogc_shape *in, const double *const *x,
                    const ogc_shape *out, double *y, double *const *saved, double *mag,
                    int64_t *terms) {
    (void)out;
    const double *a = op->attrs;
    int64_t n = numel_of(&in[0]);
    // FusedSgd takes its hyperparameters as float: those are the values it is given
    double mu = hyper(true, a[S_MOM]), lr = hyper(true, a[S_LR]), wd = hyper(true, a[S_WD]),
           damp = hyper(true, a[S_DAMP]);
    for (int64_t i = 0; i < n; i++) {
        double p = x[0][i], g = x[1][i], b = mu != 0 ? x[2][i] : 0;
        if (a[S_SCALE] != 0) g /= a[S_SCALE];
        double d = (a[S_MAX] != 0 ? -g : g) + wd * p;
        double dmag = fabs(g) + wd * fabs(p), b1 = b, bmag = fabs(b);
        if (mu != 0) {
            if (a[S_FIRST] != 0) {
                b1 = d, bmag = dmag;
            } else {
                b1 = mu * b + (1 - damp) * d;
                bmag = mu * fabs(b) + (1 - damp) * dmag;
            }
            if (a[S_NEST] != 0) {
                d = d + mu * b1;
                dmag = dmag + mu * bmag;
            } else {
                d = b1, dmag = bmag;
            }
        }
        if (a[S_WHICH] == 0) {
            y[i] = p - lr * d, mag[i] = fabs(p) + lr * dmag;
            if (a[S_SCALE] != 0) saved[0][i] = g;
        } else {
            y[i] = b1, mag[i] = bmag;
        }
    }
    *terms = 1;
}

// ---- entry points -------------------------------------------------------------------------

// Element offset of row-major element i of t's view, from the storage base.
static int64_t elem_offset(const aclTensor *t, int64_t i) {
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->dims[d]) * t->strides[d];
        i /= t->dims[d];
    }
    return off;
}

static int64_t storage_numel(const aclTensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->storage_ndim; d++) n *= t->storage_dims[d];
    return n;
}

// A tensor with t's view over a copy of its storage; absval: the view's values made |x|.
static aclTensor *state_copy(const aclTensor *t, bool absval, void **buf) {
    size_t es = aclDataTypeSize(t->dtype), bytes = (size_t)storage_numel(t) * es;
    *buf = malloc(bytes + 16);
    if (!*buf) return NULL;
    memcpy(*buf, t->data, bytes);
    if (absval)
        for (int64_t i = 0; i < t->numel; i++) {
            int64_t o = elem_offset(t, i);
            ogc_store(*buf, o, t->dtype, fabs(ogc_load(*buf, o, t->dtype)));
        }
    return aclCreateTensor(t->dims, (uint64_t)t->ndim, t->dtype, t->strides, t->offset,
                           ACL_FORMAT_ND, t->storage_dims, (uint64_t)t->storage_ndim, *buf);
}

// The view's values into a result (row-major, the result's dtype).
static void state_result(const aclTensor *t, ogc_result *r) {
    for (int64_t i = 0; i < t->numel; i++)
        ogc_store(r->data, i, r->dtype, ogc_load(t->data, elem_offset(t, i), t->dtype));
}

static aclTensor *scalar_tensor(aclDataType dt, double v, void **buf) {
    int64_t one = 1, stride = 1;
    *buf = calloc(1, 16);
    if (dt == ACL_INT64) {
        int64_t i = (int64_t)v;
        memcpy(*buf, &i, sizeof i);
    } else {
        float f = (float)v;
        memcpy(*buf, &f, sizeof f);
    }
    return aclCreateTensor(&one, 1, dt, &stride, 0, ACL_FORMAT_ND, &one, 1, *buf);
}

// Another tensor of t's view over t's storage (a list takes ownership of its tensors).
static aclTensor *alias(const aclTensor *t) {
    return aclCreateTensor(t->dims, (uint64_t)t->ndim, t->dtype, t->strides, t->offset,
                           ACL_FORMAT_ND, t->storage_dims, (uint64_t)t->storage_ndim, t->data);
}

static bool is_contiguous(const aclTensor *t) {
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->dims[d] != 1 && t->strides[d] != expect) return false;
        expect *= t->dims[d];
    }
    return true;
}

static aclTensorList *list_of(aclTensor *t) {
    const aclTensor *ts[1] = {t};
    return aclCreateTensorList(ts, 1);
}

// A list of np 1-d views over consecutive parts of a contiguous t (np = 1: one alias of t).
static aclTensorList *pieces(const aclTensor *t, int np) {
    if (np == 1) return list_of(alias(t));
    aclTensor *v[3];
    int64_t n = t->numel, one = 1;
    for (int k = 0; k < np; k++) {
        int64_t lo = k * n / np, len = (k + 1) * n / np - lo;
        v[k] = aclCreateTensor(&len, 1, t->dtype, &one, t->offset + lo, ACL_FORMAT_ND,
                               t->storage_dims, (uint64_t)t->storage_ndim, t->data);
    }
    return aclCreateTensorList((const aclTensor *const *)v, (uint64_t)np);
}

static void adam_results(ogc_call *c, const aclTensor *p, const aclTensor *m, const aclTensor *v,
                         const aclTensor *vx) {
    if (c->op->attrs[A_WHICH] == 0) {
        state_result(p, &c->results[0]);
        if (c->nresults > 1) state_result(v, &c->results[1]);
        if (c->nresults > 2 && vx && !is_v1(c->op)) state_result(vx, &c->results[2]);
    } else {
        state_result(m, &c->results[0]);
    }
}

// Copies of p, m, v (|x|), vmax (|x|, amsgrad), the step / gradScale / foundInf tensors; runs
// the operator; the copies' new values become the results.
static int adam_forward(ogc_call *c) {
    const double *a = c->op->attrs;
    bool ams = a[A_AMS] != 0, fused = strstr(c->op->api, "Fused") != NULL;
    void *bp = NULL, *bm = NULL, *bv = NULL, *bx = NULL, *bs = NULL, *bsc = NULL, *bi = NULL;
    aclTensor *p = state_copy(c->in[0], false, &bp), *m = state_copy(c->in[2], false, &bm),
              *v = state_copy(c->in[3], true, &bv),
              *vx = ams ? state_copy(c->in[4], true, &bx) : NULL;
    aclTensor *step = scalar_tensor(a[A_STEPF] != 0 ? ACL_FLOAT : ACL_INT64, a[A_STEP], &bs);
    aclTensor *scale = a[A_SCALE] != 0 ? scalar_tensor(ACL_FLOAT, a[A_SCALE], &bsc) : NULL;
    aclTensor *inf = a[A_INF] >= 0 ? scalar_tensor(ACL_FLOAT, a[A_INF], &bi) : NULL;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st;
    if (is_v1(c->op)) {
        // the hyperparameters as one-element tensors of the case's dtype (values exact in it)
        double hv[7] = {a[A_B1POW], a[A_B2POW], a[A_LR], a[A_WD], a[A_B1], a[A_B2], a[A_EPS]};
        aclTensor *h[7];
        void *hb[7];
        for (int k = 0; k < 7; k++) {
            int64_t one = 1;
            hb[k] = calloc(1, 16);
            ogc_store(hb[k], 0, c->dtype, hv[k]);
            h[k] = aclCreateTensor(&one, 1, c->dtype, &one, 0, ACL_FORMAT_ND, &one, 1, hb[k]);
        }
        st = aclnnApplyAdamWGetWorkspaceSize(p, m, v, h[0], h[1], h[2], h[3], h[4], h[5], h[6],
                                             c->in[1], vx, ams, a[A_MAX] != 0, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnApplyAdamW);
        for (int k = 0; k < 7; k++) aclDestroyTensor(h[k]), free(hb[k]);
    } else if (!fused) {
        st = aclnnApplyAdamWV2GetWorkspaceSize(p, m, v, vx, c->in[1], step, (float)a[A_LR],
                                               (float)a[A_B1], (float)a[A_B2], (float)a[A_WD],
                                               (float)a[A_EPS], ams, a[A_MAX] != 0, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnApplyAdamWV2);
    } else {
        // contiguous state and grad: three list entries over thirds of the elements (the
        // operator walks several tensors, each with its own chunks and tail); else one entry
        const aclTensor *all[5] = {p, c->in[1], m, v, vx};
        bool split = p->numel >= 3;
        for (int k = 0; k < (ams ? 5 : 4); k++) split = split && is_contiguous(all[k]);
        int np = split ? 3 : 1;
        aclTensorList *l[6];
        for (int k = 0; k < 5; k++) l[k] = k == 4 && !ams ? NULL : pieces(all[k], np);
        const aclTensor *steps[3] = {step, step, step};
        aclTensor *sa[3];
        for (int k = 0; k < np; k++) sa[k] = alias(steps[k]);
        l[5] = aclCreateTensorList((const aclTensor *const *)sa, (uint64_t)np);
        st = aclnnFusedAdamwGetWorkspaceSize(l[0], l[1], l[2], l[3], l[4], l[5], scale, inf,
                                             a[A_LR], a[A_B1], a[A_B2], a[A_WD], a[A_EPS], ams,
                                             a[A_MAX] != 0, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnFusedAdamw);
        if (!st) adam_results(c, p, m, v, vx);
        for (int k = 0; k < 6; k++) aclDestroyTensorList(l[k]); // they own their views only
    }
    if (!fused && !st) adam_results(c, p, m, v, vx);
    aclTensor *all[] = {p, m, v, vx, step, scale, inf};
    for (int k = 0; k < 7; k++)
        if (all[k]) aclDestroyTensor(all[k]);
    void *bufs[] = {bp, bm, bv, bx, bs, bsc, bi};
    for (int k = 0; k < 7; k++) free(bufs[k]);
    return st;
}

static int sgd_forward(ogc_call *c) {
    const double *a = c->op->attrs;
    bool mom = a[S_MOM] != 0;
    void *bp = NULL, *bg = NULL, *bb = NULL, *bsc = NULL;
    aclTensor *p = state_copy(c->in[0], false, &bp), *g = state_copy(c->in[1], false, &bg),
              *b = mom ? state_copy(c->in[2], false, &bb) : NULL;
    aclTensor *scale = a[S_SCALE] != 0 ? scalar_tensor(ACL_FLOAT, a[S_SCALE], &bsc) : NULL;
    // contiguous state: lists of three tensors (thirds of the elements), else of one
    bool split = p->numel >= 3 && is_contiguous(p) && is_contiguous(g) && (!b || is_contiguous(b));
    int np = split ? 3 : 1;
    aclTensorList *lp = pieces(p, np), *lg = pieces(g, np), *lb = mom ? pieces(b, np) : NULL;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnFusedSgdGetWorkspaceSize(lp, lg, lb, scale, (float)a[S_WD], (float)a[S_MOM],
                                           (float)a[S_LR], (float)a[S_DAMP], a[S_NEST] != 0,
                                           a[S_MAX] != 0, a[S_FIRST] != 0, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnFusedSgd);
    if (!st) {
        if (a[S_WHICH] == 0) {
            state_result(p, &c->results[0]);
            if (c->nresults > 1) state_result(g, &c->results[1]);
        } else {
            state_result(b, &c->results[0]);
        }
    }
    // the lists own their views only
    aclDestroyTensorList(lp);
    aclDestroyTensorList(lg);
    aclDestroyTensorList(lb);
    aclTensor *own[] = {p, g, b, scale};
    for (int k = 0; k < 4; k++)
        if (own[k]) aclDestroyTensor(own[k]);
    void *bufs[] = {bp, bg, bb, bsc};
    for (int k = 0; k < 4; k++) free(bufs[k]);
    return st;
}

// ---- entries ------------------------------------------------------------------------------

// {which, lr, beta1, beta2, weightDecay, eps, amsgrad, maximize, step, step FLOAT, gradScale,
//  foundInf}
#define ADAM_ATTRS(name, ...)                                                                      \
    static const double name##_p[] = {0, __VA_ARGS__}, name##_m[] = {1, __VA_ARGS__};
// V2: step 0 (t = 1), weight decay, INT64 step
ADAM_ATTRS(v2_plain, 1e-2, 0.9, 0.999, 0.01, 1e-8, 0, 0, 0, 0, 0, -1)
// V2: amsgrad, t = 10, FLOAT step, no weight decay, a visible eps
ADAM_ATTRS(v2_ams, 3e-2, 0.8, 0.99, 0, 1e-3, 1, 0, 9, 1, 0, -1)
// V2: maximize with amsgrad, t = 1000, strong decay
ADAM_ATTRS(v2_max, 1e-1, 0.9, 0.999, 0.5, 1e-8, 1, 1, 999, 0, 0, -1)
// Fused: plain, t = 1
ADAM_ATTRS(fu_plain, 1e-2, 0.9, 0.999, 0.01, 1e-8, 0, 0, 0, 0, 0, -1)
// Fused: amsgrad + maximize, gradScale 3 (not a power of two), foundInf 0 (the step runs), t = 5
ADAM_ATTRS(fu_scale, 2e-2, 0.85, 0.995, 0.1, 1e-3, 1, 1, 4, 1, 3, 0)
// Fused: foundInf 1: nothing changes
ADAM_ATTRS(fu_inf, 1e-2, 0.9, 0.999, 0.01, 1e-8, 1, 0, 7, 0, 1024, 1)

// ApplyAdamW: values exact in float16 and bfloat16 (its hyperparameters are tensors of the
// case's dtype): lr 2^-7, beta1 7/8, beta2 63/64, weightDecay 2^-5, eps 2^-10, beta1Power 49/64,
// beta2Power 31/32; amsgrad + maximize: lr 2^-5, beta1 3/4, beta2 31/32, no decay, powers 3/4 and
// 1/2 (t = 2 for beta1)
static const double v1_plain_p[] = {0, 0x1p-7, 0.875, 0.984375, 0x1p-5, 0x1p-10,  0,
                                    0, 0,      0,     0,        -1,     0.765625, 0.96875},
                    v1_plain_m[] = {1, 0x1p-7, 0.875, 0.984375, 0x1p-5, 0x1p-10,  0,
                                    0, 0,      0,     0,        -1,     0.765625, 0.96875},
                    v1_ams_p[] = {0, 0x1p-5, 0.75, 0.96875, 0,  0x1p-10, 1,
                                  1, 0,      0,    0,       -1, 0.75,    0.5},
                    v1_ams_m[] = {1, 0x1p-5, 0.75, 0.96875, 0,  0x1p-10, 1,
                                  1, 0,      0,    0,       -1, 0.75,    0.5};

// {which, lr, momentum, dampening, weightDecay, nesterov, maximize, isFirstStep, gradScale}
#define SGD_ATTRS(name, ...)                                                                       \
    static const double name##_p[] = {0, __VA_ARGS__}, name##_m[] = {1, __VA_ARGS__};
static const double sgd_plain_p[] = {0, 0.1, 0, 0, 0, 0, 0, 0, 0}; // plain SGD, no buffers
SGD_ATTRS(sgd_mom, 0.05, 0.9, 0.1, 0.01, 0, 0, 0, 0)   // momentum, dampening, weight decay
SGD_ATTRS(sgd_first, 0.05, 0.9, 0.1, 0.01, 0, 1, 1, 8) // first step, maximize, gradScale 8
SGD_ATTRS(sgd_nest, 0.1, 0.5, 0, 0.2, 1, 0, 0, 3)      // nesterov, gradScale 3

#define ADAM_IN(ams)                                                                               \
    .nin = 4 + (ams), .in = {{"param", false},                                                     \
                             {"grad", false},                                                      \
                             {"exp_avg", false},                                                   \
                             {"exp_avg_sq", false},                                                \
                             {"max_exp_avg_sq", false}}

#define ADAM_ENTRY(entry_name, api_, attr, which, ams, dts)                                        \
    ADAM_ENTRY_N(entry_name, api_, attr, which, ams, dts, (which) == 0 ? 1 + (ams) : 0)
#define ADAM_ENTRY_N(entry_name, api_, attr, which, ams, dts, nsaved_)                             \
    {                                                                                              \
        .name = entry_name, .api = api_, ADAM_IN(ams), .nsaved = nsaved_,                          \
        .saved_names = {"exp_avg_sq", "max_exp_avg_sq"}, .attrs = attr, .dtypes = dts, .lo = -2,   \
        .hi = 2, .fp32_ulps = 8, .forward = adam_forward, .shapes = opt_shapes,                    \
        .ref_forward_tensor = adam_ref                                                             \
    }

#define ADAM_PAIR(prefix, api_, attr, ams, dts)                                                    \
    ADAM_ENTRY(prefix "_p", api_, attr##_p, 0, ams, dts),                                          \
        ADAM_ENTRY(prefix "_m", api_, attr##_m, 1, ams, dts)

// eps = 1e-8 over a second moment that may be 0 (drawn |x|) gives updates up to 1e8: past
// float16's range, so those entries run in float32 and bfloat16; float16 runs the others.
#define DTS_WIDE (OG_DT(ACL_FLOAT) | OG_DT(ACL_BF16))

#define SGD_ENTRY(entry_name, attr, which, nin_, nsaved_)                                          \
    {                                                                                              \
        .name = entry_name, .api = "aclnnFusedSgd", .nin = nin_,                                   \
        .in = {{"param", false}, {"grad", false}, {"momentum_buffer", false}}, .nsaved = nsaved_,  \
        .saved_names = {"grad_unscaled"}, .attrs = attr, .dtypes = OG_DTS_FLOATING, .lo = -2,      \
        .hi = 2, .fp32_ulps = 8, .forward = sgd_forward, .shapes = opt_shapes,                     \
        .ref_forward_tensor = sgd_ref                                                              \
    }

static const ogc_op optim_ops[] = {
    ADAM_ENTRY("apply_adam_w_p", "aclnnApplyAdamW", v1_plain_p, 0, 0, OG_DTS_FLOATING),
    ADAM_ENTRY("apply_adam_w_m", "aclnnApplyAdamW", v1_plain_m, 1, 0, OG_DTS_FLOATING),
    // (ApplyAdamW never writes maxGradNorm: one saved result)
    ADAM_ENTRY_N("apply_adam_w_amsgrad_p", "aclnnApplyAdamW", v1_ams_p, 0, 1, OG_DTS_FLOATING, 1),
    ADAM_ENTRY("apply_adam_w_amsgrad_m", "aclnnApplyAdamW", v1_ams_m, 1, 1, OG_DTS_FLOATING),
    ADAM_PAIR("apply_adam_w_v2", "aclnnApplyAdamWV2", v2_plain, 0, DTS_WIDE),
    ADAM_PAIR("apply_adam_w_v2_amsgrad", "aclnnApplyAdamWV2", v2_ams, 1, OG_DTS_FLOATING),
    ADAM_PAIR("apply_adam_w_v2_maximize", "aclnnApplyAdamWV2", v2_max, 1, DTS_WIDE),
    ADAM_PAIR("fused_adamw", "aclnnFusedAdamw", fu_plain, 0, DTS_WIDE),
    ADAM_PAIR("fused_adamw_scale", "aclnnFusedAdamw", fu_scale, 1, OG_DTS_FLOATING),
    ADAM_PAIR("fused_adamw_found_inf", "aclnnFusedAdamw", fu_inf, 1, OG_DTS_FLOATING),
    SGD_ENTRY("fused_sgd", sgd_plain_p, 0, 2, 0),
    SGD_ENTRY("fused_sgd_momentum_p", sgd_mom_p, 0, 3, 0),
    SGD_ENTRY("fused_sgd_momentum_m", sgd_mom_m, 1, 3, 0),
    SGD_ENTRY("fused_sgd_first_p", sgd_first_p, 0, 3, 1),
    SGD_ENTRY("fused_sgd_first_m", sgd_first_m, 1, 3, 0),
    SGD_ENTRY("fused_sgd_nesterov_p", sgd_nest_p, 0, 3, 1),
    SGD_ENTRY("fused_sgd_nesterov_m", sgd_nest_m, 1, 3, 0),
};

OGC_DEFINE_FAMILY(optim, optim_ops)
