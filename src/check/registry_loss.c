/* Registry entries of the 'loss' family: aclnnMseLoss, aclnnL1Loss, aclnnSmoothL1Loss,
 * aclnnBinaryCrossEntropy, aclnnBinaryCrossEntropyWithLogits, each with its backward, for every
 * reduction and the optional weights (see registry.h for how families are listed).
 *
 * attrs = {kind, reduction, beta, weight, posWeight}. The target (and the weights) are not
 * differentiated: the backwards return self's gradient only. Reduction none uses per-element
 * references (the checker sums a broadcast self's gradient itself); mean and sum are tensor-level
 * references over the broadcast shape with a 0-D output (and gradOutput).
 *
 * The kinks of L1 and SmoothL1 are at self = target (and |self - target| = beta), not at fixed
 * values: the entry points round the drawn targets to integers (exact in every dtype) and the
 * references do the same, so `kinks` at the integers (and at integer +- beta) keep self clear of
 * them. BCE with logits maps its target to (round(t) + 4) / 8 in [0, 1] (soft labels, exact in
 * every dtype) and posWeight to |posWeight|: the loss terms then share a sign and the forward is
 * judged relative to its own size. BCE draws every input in (0, 1). */
#include <math.h>
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
#include "check/check.h"
#include "check/compare.h"
#include "check/composite.h"
#include "check/registry.h"
#include "tensor/dtype.h"

enum { MSE, L1, SL1, BCE, BCEL };
#define KIND(op) ((int)(op)->attrs[0])
#define REDUCTION(op) ((int64_t)(op)->attrs[1])
#define BETA(op) ((op)->attrs[2])
#define HAS_W(op) ((op)->attrs[3] != 0)
#define HAS_PW(op) ((op)->attrs[4] != 0)

// ---------------------------------------------------------------------------------------------
// The maps of the non-differentiated inputs (the kernels see the mapped values)

static double map_target(int kind, double t) {
    if (kind == L1 || kind == SL1) return nearbyint(t);
    if (kind == BCEL) return fmin(fmax((nearbyint(t) + 4) / 8, 0), 1);
    // BCE: a probability (PyTorch refuses others); outside [0, 1] the loss is a difference of
    // nearly equal logs times a large target, which no float evaluation keeps
    if (kind == BCE) return fmin(fmax(t, 0), 1);
    return t;
}

static double map_pos_weight(double pw) { return fabs(pw); }

// ---------------------------------------------------------------------------------------------
// Per-element float64 references: the loss of one element and its derivative in self, each with
// a magnitude bound (the same terms made non-negative). v = {self, target, weight, posWeight}
// after the maps; absent weights are 1.

// e^-|x| with |x| clamped at 200, as the kernels do: e^-200 is no float, so this changes no
// result but the limits inf * 0 (a posWeight of inf where |x| is beyond 200), which the kernels
// give as inf
static double exp_neg_abs(double x) { return isnan(x) ? x : exp(-fmin(fabs(x), 200)); }

static double elem_loss(const ogc_op *op, const double *v, double *mag) {
    double x = v[0], t = v[1], w = v[2], pw = v[3], d = x - t, beta = BETA(op);
    double y;
    switch (KIND(op)) {
    case MSE:
        y = d * d;
        *mag = y;
        return y;
    case L1:
        *mag = fabs(d);
        return fabs(d);
    case SL1:
        y = fabs(d) < beta ? 0.5 * d * d / beta : fabs(d) - 0.5 * beta;
        *mag = fabs(d) < beta ? y : fabs(d) + 0.5 * beta;
        return y;
    case BCE: {
        // the clamp at -100 keeps a NaN (x outside [0, 1])
        double lx = log(x), l1x = log1p(-x);
        lx = lx < -100 ? -100 : lx;
        l1x = l1x < -100 ? -100 : l1x;
        *mag = fabs(w) * (fabs(t * lx) + fabs((1 - t) * l1x));
        return -w * (t * lx + (1 - t) * l1x);
    }
    default: {
        // (1 - t) x + lw (log1p(e^-|x|) + max(-x, 0)), lw = 1 + (pw - 1) t, in its form
        // lw log1p(e^-|x|) + (x < 0 ? -pw t x : (1 - t) x) (the same function; at x = -inf the
        // limit +inf for t > 0 where the other form gives inf - inf)
        double lw = pw * t + (1 - t), sp = log1p(exp_neg_abs(x));
        y = w * (lw * sp + (x < 0 ? -pw * t * x : (1 - t) * x));
        double lin = x < 0 ? fabs(pw * t * x) : (1 + fabs(t)) * fabs(x);
        *mag = fabs(w) * (lin + (1 + (fabs(pw) + 1) * fabs(t)) * sp);
        return y;
    }
    }
}

static double elem_grad(const ogc_op *op, const double *v, double *mag) {
    double x = v[0], t = v[1], w = v[2], pw = v[3], d = x - t, beta = BETA(op);
    double sgn = d > 0 ? 1 : d < 0 ? -1 : 0;
    switch (KIND(op)) {
    case MSE:
        *mag = fabs(2 * d);
        return 2 * d;
    case L1:
        *mag = 1;
        return sgn;
    case SL1:
        *mag = fabs(d) < beta ? fabs(d) / beta : 1;
        return fabs(d) < beta ? d / beta : sgn;
    case BCE: {
        double den = fmax(x * (1 - x), 1e-12);
        *mag = fabs(w) * (fabs(x) + fabs(t)) / den;
        return w * d / den;
    }
    default: {
        // lw sigmoid(x) - pw t as (lw / 2 - pw t) + lw h, h = sigmoid(x) - 1/2 = tanh(x / 2) / 2
        // (sigmoid itself would round a small x's h away beside 1/2)
        double h = 0.5 * tanh(0.5 * x), lw = pw * t + (1 - t);
        *mag = fabs(w) * ((1 + (fabs(pw) + 1) * fabs(t)) * (0.5 + fabs(h)) + fabs(pw * t));
        return w * ((0.5 * lw - pw * t) + lw * h);
    }
    }
}

// The element values of one entry from the checker's inputs (in order self, target[, weight]
// [, posWeight]).
static void elem_values(const ogc_op *op, const double *x, double *v) {
    int k = 2;
    v[0] = x[0];
    v[1] = map_target(KIND(op), x[1]);
    v[2] = HAS_W(op) ? x[k++] : 1;
    v[3] = HAS_PW(op) ? map_pos_weight(x[k]) : 1;
}

static double loss_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)saved;
    double v[4], mag;
    elem_values(op, x, v);
    return elem_loss(op, v, &mag);
}

static void loss_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                              double *gx, double *mag) {
    (void)saved;
    double v[4], m;
    elem_values(op, x, v);
    gx[0] = gy * elem_grad(op, v, &m);
    mag[0] = fabs(gy) * m;
}

// ---------------------------------------------------------------------------------------------
// Tensor-level references (mean, sum): the broadcast shape of the inputs, walked row-major

typedef struct bcast {
    int ndim, nin;
    int64_t dims[OG_MAX_DIMS];
    int64_t strides[OGC_MAX_IN][OG_MAX_DIMS]; // per input over dims, 0 where broadcast
    int64_t n;
} bcast;

static bcast bcast_of(int nin, const ogc_shape *in) {
    bcast b = {.nin = nin, .n = 1};
    for (int k = 0; k < nin; k++)
        if (in[k].ndim > b.ndim) b.ndim = in[k].ndim;
    for (int d = 0; d < b.ndim; d++) {
        b.dims[d] = 1;
        for (int k = 0; k < nin; k++) {
            int e = d - (b.ndim - in[k].ndim);
            if (e >= 0 && in[k].dims[e] != 1) b.dims[d] = in[k].dims[e];
        }
        b.n *= b.dims[d];
    }
    for (int k = 0; k < nin; k++) {
        int64_t s = 1;
        for (int d = b.ndim - 1; d >= 0; d--) {
            int e = d - (b.ndim - in[k].ndim);
            bool real = e >= 0 && in[k].dims[e] != 1;
            b.strides[k][d] = real ? s : 0;
            if (e >= 0) s *= in[k].dims[e];
        }
    }
    return b;
}

// The offset of input k at flat index i of the broadcast shape.
static int64_t bcast_offset(const bcast *b, int k, int64_t i) {
    int64_t off = 0;
    for (int d = b->ndim - 1; d >= 0; d--) {
        off += (i % b->dims[d]) * b->strides[k][d];
        i /= b->dims[d];
    }
    return off;
}

static bool loss_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)layout;
    if (KIND(op) == BCE || KIND(op) == BCEL) {
        // self and target have one shape (the broadcast one); the weights broadcast to it
        bcast b = bcast_of(op->nin, in);
        ogc_shape full = {.ndim = b.ndim};
        for (int d = 0; d < b.ndim; d++) full.dims[d] = b.dims[d];
        in[0] = in[1] = full;
        *out = full;
    }
    if (REDUCTION(op) != 0) *out = (ogc_shape){.ndim = 0};
    return true;
}

static void loss_ref_forward_tensor(const ogc_op *op, const ogc_shape *in, const double *const *x,
                                    const ogc_shape *out, double *y, double *const *saved,
                                    double *mag, int64_t *terms) {
    (void)out, (void)saved;
    bcast b = bcast_of(op->nin, in);
    ogc_ksum ks = {0, 0}; // (compensated: far below the float64 kernels' error too)
    double msum = 0;
    for (int64_t i = 0; i < b.n; i++) {
        double xi[OGC_MAX_IN], v[4], m;
        for (int k = 0; k < op->nin; k++) xi[k] = x[k][bcast_offset(&b, k, i)];
        elem_values(op, xi, v);
        ogc_ksum_add(&ks, elem_loss(op, v, &m));
        msum += m;
    }
    double sum = ogc_ksum_value(&ks);
    bool mean = REDUCTION(op) == 1;
    y[0] = mean ? sum / (double)b.n : sum; // NaN over nothing, as PyTorch
    mag[0] = mean ? msum / (double)b.n : msum;
    *terms = b.n > 0 ? b.n : 1;
}

static void loss_ref_backward_tensor(const ogc_op *op, const ogc_shape *in, const double *const *x,
                                     const ogc_shape *out, const double *const *saved,
                                     const double *gy, double *const *gx, double *const *mag,
                                     int64_t *terms) {
    (void)out, (void)saved;
    bcast b = bcast_of(op->nin, in);
    double g = REDUCTION(op) == 1 ? gy[0] / (double)b.n : gy[0];
    for (int64_t i = 0; i < b.n; i++) {
        double xi[OGC_MAX_IN], v[4], m;
        for (int k = 0; k < op->nin; k++) xi[k] = x[k][bcast_offset(&b, k, i)];
        elem_values(op, xi, v);
        int64_t o = bcast_offset(&b, 0, i);
        gx[0][o] += g * elem_grad(op, v, &m);
        mag[0][o] += fabs(g) * m;
    }
    int64_t n0 = 1;
    for (int d = 0; d < in[0].ndim; d++) n0 *= in[0].dims[d];
    terms[0] = n0 > 0 && b.n / n0 > 0 ? b.n / n0 : 1;
}

// ---------------------------------------------------------------------------------------------
// Entry points

static double get_value(const void *data, aclDataType dt, int64_t i) {
    if (dt == ACL_FLOAT) return ((const float *)data)[i];
    if (dt == ACL_FLOAT16) return og_f16_to_f32(((const uint16_t *)data)[i]);
    if (dt == ACL_BF16) return og_bf16_to_f32(((const uint16_t *)data)[i]);
    return ((const double *)data)[i];
}

static void set_value(void *data, aclDataType dt, int64_t i, double v) {
    if (dt == ACL_FLOAT)
        ((float *)data)[i] = (float)v;
    else if (dt == ACL_FLOAT16)
        ((uint16_t *)data)[i] = og_f32_to_f16((float)v);
    else if (dt == ACL_BF16)
        ((uint16_t *)data)[i] = og_f32_to_bf16((float)v);
    else
        ((double *)data)[i] = v;
}

// The same view as t over a copy of its storage with f applied to every stored value (every f
// here gives values exact in every dtype). *buf receives the storage to free.
static aclTensor *mapped(const aclTensor *t, int kind, double (*f)(int, double), void **buf) {
    int64_t n = 1;
    for (int d = 0; d < t->storage_ndim; d++) n *= t->storage_dims[d];
    size_t es = t->dtype == ACL_FLOAT ? 4 : t->dtype == ACL_DOUBLE ? 8 : 2;
    *buf = calloc((size_t)(n > 0 ? n : 1), es);
    if (!*buf) return NULL;
    for (int64_t i = 0; i < n; i++)
        set_value(*buf, t->dtype, i, f(kind, get_value(t->data, t->dtype, i)));
    return aclCreateTensor(t->dims, (uint64_t)t->ndim, t->dtype, t->strides, t->offset, t->format,
                           t->storage_dims, (uint64_t)t->storage_ndim, *buf);
}

static double pw_map(int kind, double v) {
    (void)kind;
    return map_pos_weight(v);
}

typedef struct operands {
    aclTensor *self, *target, *weight, *pos_weight;
    aclTensor *owned[2];
    void *bufs[2];
} operands;

static operands operands_of(const ogc_call *c) {
    const ogc_op *op = c->op;
    operands o = {.self = c->in[0]};
    int k = 2;
    o.target = o.owned[0] = mapped(c->in[1], KIND(op), map_target, &o.bufs[0]);
    if (HAS_W(op)) o.weight = c->in[k++];
    if (HAS_PW(op)) o.pos_weight = o.owned[1] = mapped(c->in[k], KIND(op), pw_map, &o.bufs[1]);
    return o;
}

static void operands_free(operands *o) {
    for (int k = 0; k < 2; k++) {
        if (o->owned[k]) aclDestroyTensor(o->owned[k]);
        free(o->bufs[k]);
    }
}

static int call_forward(const ogc_op *op, const operands *o, aclTensor *out) {
    uint64_t ws;
    aclOpExecutor *ex;
    int64_t r = REDUCTION(op);
    switch (KIND(op)) {
    case MSE: {
        int st = aclnnMseLossGetWorkspaceSize(o->self, o->target, r, out, &ws, &ex);
        return st ? st : ogc_launch(ws, ex, aclnnMseLoss);
    }
    case L1: {
        int st = aclnnL1LossGetWorkspaceSize(o->self, o->target, r, out, &ws, &ex);
        return st ? st : ogc_launch(ws, ex, aclnnL1Loss);
    }
    case SL1: {
        int st = aclnnSmoothL1LossGetWorkspaceSize(o->self, o->target, r, (float)BETA(op), out, &ws,
                                                   &ex);
        return st ? st : ogc_launch(ws, ex, aclnnSmoothL1Loss);
    }
    case BCE: {
        int st = aclnnBinaryCrossEntropyGetWorkspaceSize(o->self, o->target, o->weight, r, out, &ws,
                                                         &ex);
        return st ? st : ogc_launch(ws, ex, aclnnBinaryCrossEntropy);
    }
    default: {
        int st = aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(o->self, o->target, o->weight,
                                                                   o->pos_weight, r, out, &ws, &ex);
        return st ? st : ogc_launch(ws, ex, aclnnBinaryCrossEntropyWithLogits);
    }
    }
}

static int call_backward(const ogc_op *op, const aclTensor *g, const operands *o, aclTensor *out) {
    uint64_t ws;
    aclOpExecutor *ex;
    int64_t r = REDUCTION(op);
    switch (KIND(op)) {
    case MSE: {
        int st = aclnnMseLossBackwardGetWorkspaceSize(g, o->self, o->target, r, out, &ws, &ex);
        return st ? st : ogc_launch(ws, ex, aclnnMseLossBackward);
    }
    case L1: {
        int st = aclnnL1LossBackwardGetWorkspaceSize(g, o->self, o->target, r, out, &ws, &ex);
        return st ? st : ogc_launch(ws, ex, aclnnL1LossBackward);
    }
    case SL1: {
        int st = aclnnSmoothL1LossBackwardGetWorkspaceSize(g, o->self, o->target, r,
                                                           (float)BETA(op), out, &ws, &ex);
        return st ? st : ogc_launch(ws, ex, aclnnSmoothL1LossBackward);
    }
    case BCE: {
        int st = aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(g, o->self, o->target, o->weight,
                                                                 r, out, &ws, &ex);
        return st ? st : ogc_launch(ws, ex, aclnnBinaryCrossEntropyBackward);
    }
    default: {
        int st = aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
            g, o->self, o->target, o->weight, o->pos_weight, r, out, &ws, &ex);
        return st ? st : ogc_launch(ws, ex, aclnnBinaryCrossEntropyWithLogitsBackward);
    }
    }
}

static int loss_forward(ogc_call *c) {
    operands o = operands_of(c);
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    int st = o.target && (!HAS_PW(c->op) || o.pos_weight) ? call_forward(c->op, &o, out) : 1;
    aclDestroyTensor(out);
    operands_free(&o);
    return st;
}

// gradInput has the broadcast shape of gradOutput and the inputs; a broadcast self's gradient is
// that summed down to self's shape (in fp32, rounded once by ogc_sum_to).
static int loss_backward(ogc_call *c) {
    operands o = operands_of(c);
    if (!o.target || (HAS_PW(c->op) && !o.pos_weight)) {
        operands_free(&o);
        return 1;
    }
    int64_t dims[OG_MAX_DIMS] = {0}, nd = 0;
    const aclTensor *all[OGC_MAX_IN + 1];
    int n = 0;
    all[n++] = c->grad_out;
    for (int k = 0; k < c->op->nin; k++) all[n++] = c->in[k];
    for (int k = 0; k < n; k++)
        if (all[k]->ndim > nd) nd = all[k]->ndim;
    int64_t total = 1;
    for (int d = 0; d < nd; d++) {
        dims[d] = 1;
        for (int k = 0; k < n; k++) {
            int e = d - (int)(nd - all[k]->ndim);
            if (e >= 0 && all[k]->dims[e] != 1) dims[d] = all[k]->dims[e];
        }
        total *= dims[d];
    }
    ogc_result *r = &c->results[0];
    int64_t rn = 1;
    for (int d = 0; d < r->ndim; d++) rn *= r->dims[d];
    int st;
    if (rn == total) {
        aclTensor *res = ogc_result_tensor(r);
        aclTensor *view = ogc_reshaped(res, dims, (int)nd);
        st = call_backward(c->op, c->grad_out, &o, view);
        aclDestroyTensor(view);
        aclDestroyTensor(res);
    } else {
        // The operator rounds each element's gradient to the promoted dtype (aclnn's cast of the
        // result), so a 16-bit sum of them would be rounded twice: the composite runs it on the
        // fp32-widened operands (exact) and rounds once, after the sum.
        // (float64 operands: everything in float64)
        ogc_tmp wide[5] = {{0}};
        aclTensor **ops[5] = {&o.self, &o.target, &o.weight, &o.pos_weight, NULL};
        const aclTensor *g = c->grad_out;
        aclDataType wdt = c->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
        st = 0;
        for (int k = 0; k < 5 && !st; k++) {
            const aclTensor *t = k < 4 ? *ops[k] : g;
            if (!t || t->dtype == wdt) continue;
            wide[k] = ogc_tmp_new(t->dims, t->ndim, wdt);
            st = wide[k].t ? ogc_muls(t, 1.0, wide[k].t) : 1;
            if (k < 4)
                *ops[k] = wide[k].t;
            else
                g = wide[k].t;
        }
        ogc_tmp full = ogc_tmp_new(dims, (int)nd, wdt);
        if (!st) st = full.t ? call_backward(c->op, g, &o, full.t) : 1;
        if (!st) st = ogc_sum_to(full.t, 1.0, r);
        ogc_tmp_free(&full);
        for (int k = 0; k < 5; k++)
            if (wide[k].t) ogc_tmp_free(&wide[k]);
    }
    operands_free(&o);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Entries

// L1 and SmoothL1 kinks: self at an integer target, and at integer +- beta (beta = 0.5)
static const double int_kinks[] = {-4, -3, -2, -1, 0, 1, 2, 3, 4};
// the sum entries draw in [-0.5, 0.5] (an fp16 sum of the large layout stays finite): targets 0
static const double small_kinks[] = {-0.25, 0, 0.25};
static const double half_kinks[] = {-4,  -3.5, -3,  -2.5, -2,  -1.5, -1,  -0.5, 0,
                                    0.5, 1,    1.5, 2,    2.5, 3,    3.5, 4};

#define ATTRS(name, kind, red, beta, w, pw) static const double name[] = {kind, red, beta, w, pw};
ATTRS(a_mse_none, MSE, 0, 0, 0, 0)
ATTRS(a_mse_mean, MSE, 1, 0, 0, 0)
ATTRS(a_mse_sum, MSE, 2, 0, 0, 0)
ATTRS(a_l1_none, L1, 0, 0, 0, 0)
ATTRS(a_l1_mean, L1, 1, 0, 0, 0)
ATTRS(a_l1_sum, L1, 2, 0, 0, 0)
ATTRS(a_sl1_none, SL1, 0, 1, 0, 0)
ATTRS(a_sl1_half_none, SL1, 0, 0.5, 0, 0)
ATTRS(a_sl1_zero_none, SL1, 0, 0, 0, 0)
ATTRS(a_sl1_half_mean, SL1, 1, 0.5, 0, 0)
ATTRS(a_sl1_sum, SL1, 2, 0.25, 0, 0)
ATTRS(a_bce_none, BCE, 0, 0, 0, 0)
ATTRS(a_bce_w_none, BCE, 0, 0, 1, 0)
ATTRS(a_bce_mean, BCE, 1, 0, 0, 0)
ATTRS(a_bce_w_sum, BCE, 2, 0, 1, 0)
ATTRS(a_bcel_none, BCEL, 0, 0, 0, 0)
ATTRS(a_bcel_w_none, BCEL, 0, 0, 1, 0)
ATTRS(a_bcel_pw_none, BCEL, 0, 0, 0, 1)
ATTRS(a_bcel_wpw_none, BCEL, 0, 0, 1, 1)
ATTRS(a_bcel_mean, BCEL, 1, 0, 0, 0)
ATTRS(a_bcel_pw_sum, BCEL, 2, 0, 0, 1)
ATTRS(a_bcel_wpw_mean, BCEL, 1, 0, 1, 1)
ATTRS(a_bcel_w_sum, BCEL, 2, 0, 1, 0)

// reduced: 1 for the mean / sum entries (tensor-level references; a literal, so that the
// initializer stays a constant expression)
#define ENTRY(entry_name, api_name, attr, reduced, n_in, lo_, hi_, kinks_, ulps, ...)              \
    {                                                                                              \
        .name = entry_name, .api = api_name, .nin = n_in, .in = {__VA_ARGS__}, .attrs = attr,      \
        .dtypes = OG_DTS_FLOATING64, .lo = lo_, .hi = hi_, kinks_, .fp32_ulps = ulps,              \
        .forward = loss_forward, .backward = loss_backward, .shapes = loss_shapes,                 \
        .ref_forward = loss_ref_forward, .ref_backward = loss_ref_backward,                        \
        .ref_forward_tensor = (reduced) ? loss_ref_forward_tensor : NULL,                          \
        .ref_backward_tensor = (reduced) ? loss_ref_backward_tensor : NULL,                        \
    }

#define SELF_TARGET                                                                                \
    {"self", true}, { "target", false }
#define MSE_API "aclnnMseLoss + aclnnMseLossBackward"
#define L1_API "aclnnL1Loss + aclnnL1LossBackward"
#define SL1_API "aclnnSmoothL1Loss + aclnnSmoothL1LossBackward"
#define BCE_API "aclnnBinaryCrossEntropy + aclnnBinaryCrossEntropyBackward"
#define BCEL_API "aclnnBinaryCrossEntropyWithLogits + aclnnBinaryCrossEntropyWithLogitsBackward"
#define KINKS(a) .kinks = a, .nkinks = (int)(sizeof a / sizeof *a)
#define no_kinks .nkinks = 0

static const ogc_op loss_ops[] = {
    ENTRY("mse_loss", MSE_API, a_mse_none, 0, 2, -4, 4, no_kinks, 4, SELF_TARGET),
    ENTRY("mse_loss_mean", MSE_API, a_mse_mean, 1, 2, -4, 4, no_kinks, 4, SELF_TARGET),
    ENTRY("mse_loss_sum", MSE_API, a_mse_sum, 1, 2, -0.5, 0.5, no_kinks, 4, SELF_TARGET),
    ENTRY("l1_loss", L1_API, a_l1_none, 0, 2, -4, 4, KINKS(int_kinks), 4, SELF_TARGET),
    ENTRY("l1_loss_mean", L1_API, a_l1_mean, 1, 2, -4, 4, KINKS(int_kinks), 4, SELF_TARGET),
    ENTRY("l1_loss_sum", L1_API, a_l1_sum, 1, 2, -0.5, 0.5, KINKS(small_kinks), 4, SELF_TARGET),
    ENTRY("smooth_l1_loss", SL1_API, a_sl1_none, 0, 2, -4, 4, KINKS(int_kinks), 4, SELF_TARGET),
    ENTRY("smooth_l1_loss_beta05", SL1_API, a_sl1_half_none, 0, 2, -4, 4, KINKS(half_kinks), 4,
          SELF_TARGET),
    ENTRY("smooth_l1_loss_beta0", SL1_API, a_sl1_zero_none, 0, 2, -4, 4, KINKS(int_kinks), 4,
          SELF_TARGET),
    ENTRY("smooth_l1_loss_beta05_mean", SL1_API, a_sl1_half_mean, 1, 2, -4, 4, KINKS(half_kinks), 4,
          SELF_TARGET),
    ENTRY("smooth_l1_loss_sum", SL1_API, a_sl1_sum, 1, 2, -0.5, 0.5, KINKS(small_kinks), 4,
          SELF_TARGET),
    ENTRY("binary_cross_entropy", BCE_API, a_bce_none, 0, 2, 0.01, 0.99, no_kinks, 8, SELF_TARGET),
    ENTRY("binary_cross_entropy_weight", BCE_API, a_bce_w_none, 0, 3, 0.01, 0.99, no_kinks, 8,
          SELF_TARGET, {"weight", false}),
    ENTRY("binary_cross_entropy_mean", BCE_API, a_bce_mean, 1, 2, 0.01, 0.99, no_kinks, 8,
          SELF_TARGET),
    ENTRY("binary_cross_entropy_weight_sum", BCE_API, a_bce_w_sum, 1, 3, 0.01, 0.99, no_kinks, 8,
          SELF_TARGET, {"weight", false}),
    ENTRY("bce_with_logits", BCEL_API, a_bcel_none, 0, 2, -8, 8, no_kinks, 8, SELF_TARGET),
    ENTRY("bce_with_logits_weight", BCEL_API, a_bcel_w_none, 0, 3, -8, 8, no_kinks, 8, SELF_TARGET,
          {"weight", false}),
    ENTRY("bce_with_logits_pos_weight", BCEL_API, a_bcel_pw_none, 0, 3, -8, 8, no_kinks, 8,
          SELF_TARGET, {"posWeight", false}),
    ENTRY("bce_with_logits_weights", BCEL_API, a_bcel_wpw_none, 0, 4, -8, 8, no_kinks, 8,
          SELF_TARGET, {"weight", false}, {"posWeight", false}),
    ENTRY("bce_with_logits_mean", BCEL_API, a_bcel_mean, 1, 2, -8, 8, no_kinks, 8, SELF_TARGET),
    ENTRY("bce_with_logits_pos_weight_sum", BCEL_API, a_bcel_pw_sum, 1, 3, -0.75, 0.75, no_kinks, 8,
          SELF_TARGET, {"posWeight", false}),
    ENTRY("bce_with_logits_weights_mean", BCEL_API, a_bcel_wpw_mean, 1, 4, -8, 8, no_kinks, 8,
          SELF_TARGET, {"weight", false}, {"posWeight", false}),
    ENTRY("bce_with_logits_weight_sum", BCEL_API, a_bcel_w_sum, 1, 3, -8, 8, no_kinks, 8,
          SELF_TARGET, {"weight", false}),
};

OGC_DEFINE_FAMILY(loss, loss_ops)
