/* Registry entries of the 'softmax' family (see registry.h for how families are listed):
 *
 *   softmax            aclnnSoftmax + aclnnSoftmaxBackward, dim -1
 *   softmax_dim0       the same along dim 0 (strided rows)
 *   softmax_large      dim -1, inputs in [5000, 5008]: exp(x) overflows, exp(x - max) does not
 *   log_softmax        aclnnLogSoftmax + aclnnLogSoftmaxBackward, dim -1
 *   log_softmax_dim0   the same along dim 0
 *   log_softmax_large  dim -1, inputs in [5000, 5008]
 *
 * attrs = {dim}. Both backwards read the forward's output (backward_uses_output). The float64
 * references (ref_softmax.c) work on one row; here they are applied along `dim` of any shape.
 * A layout whose rows have one element (the 0-d one) is SKIPPED: softmax is 1 there and its
 * gradient identically 0, which proves nothing. */
#include <stdlib.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"
#include "check/check.h"
#include "check/ref_softmax.h"
#include "check/registry.h"
#include "tensor/dtype.h"

static const double dim_last[] = {-1}, dim_first[] = {0};

// The row axis of a shape for dim (a 0-d shape is one row of one element).
static int axis_of(const ogc_op *op, const ogc_shape *s) {
    int rank = s->ndim > 0 ? s->ndim : 1, dim = (int)op->attrs[0];
    return dim < 0 ? dim + rank : dim;
}

static bool sm_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)layout, (void)out;
    int64_t n = 1;
    for (int d = 0; d < in[0].ndim; d++) n *= in[0].dims[d];
    return !(n > 0 && (in[0].ndim == 0 || in[0].dims[axis_of(op, &in[0])] == 1));
}

// Rows of shape s along the axis: outer x R x inner, row r = (o, i) starts at o R inner + i and
// steps by inner.
typedef struct rows {
    int64_t outer, R, inner;
} rows;

static rows rows_of(const ogc_op *op, const ogc_shape *s) {
    rows r = {1, 1, 1};
    int axis = axis_of(op, s);
    for (int d = 0; d < s->ndim; d++) {
        if (d < axis)
            r.outer *= s->dims[d];
        else if (d == axis)
            r.R = s->dims[d];
        else
            r.inner *= s->dims[d];
    }
    return r;
}

typedef void (*row_ref1)(size_t n, const double *x, double *y, double *mag);
typedef void (*row_ref2)(size_t n, const double *g, const double *y, double *dx, double *mag);

// Applies a one-row reference to every row: gathers a (and b), runs f, scatters out and mag.
static void each_row(const rows *r, const double *a, const double *b, double *out, double *mag,
                     row_ref1 f1, row_ref2 f2) {
    double *buf = malloc((size_t)(4 * r->R + 4) * sizeof(double));
    double *ra = buf, *rb = buf + r->R, *ro = buf + 2 * r->R, *rm = buf + 3 * r->R;
    for (int64_t o = 0; o < r->outer; o++)
        for (int64_t i = 0; i < r->inner; i++) {
            int64_t base = o * r->R * r->inner + i;
            for (int64_t j = 0; j < r->R; j++) {
                ra[j] = a[base + j * r->inner];
                if (b) rb[j] = b[base + j * r->inner];
            }
            if (f1)
                f1((size_t)r->R, ra, ro, rm);
            else
                f2((size_t)r->R, ra, rb, ro, rm);
            for (int64_t j = 0; j < r->R; j++) {
                out[base + j * r->inner] = ro[j];
                mag[base + j * r->inner] = rm[j];
            }
        }
    free(buf);
}

static void ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                        const ogc_shape *out, double *y, double *const *saved, double *mag,
                        int64_t *terms, row_ref1 f) {
    (void)out, (void)saved;
    rows r = rows_of(op, &in[0]);
    each_row(&r, x[0], NULL, y, mag, f, NULL);
    *terms = r.R;
}

static void ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *saved,
                         const double *gy, double *const *gx, double *const *mag, int64_t *terms,
                         row_ref2 f) {
    rows r = rows_of(op, &in[0]);
    each_row(&r, gy, saved[0], gx[0], mag[0], NULL, f);
    terms[0] = r.R;
}

static void sm_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                           const ogc_shape *out, double *y, double *const *saved, double *mag,
                           int64_t *terms) {
    ref_forward(op, in, x, out, y, saved, mag, terms, og_ref_softmax);
}
static void lsm_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                            const ogc_shape *out, double *y, double *const *saved, double *mag,
                            int64_t *terms) {
    ref_forward(op, in, x, out, y, saved, mag, terms, og_ref_log_softmax);
}
static void sm_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                            const ogc_shape *out, const double *const *saved, const double *gy,
                            double *const *gx, double *const *mag, int64_t *terms) {
    (void)x, (void)out;
    ref_backward(op, in, saved, gy, gx, mag, terms, og_ref_softmax_grad);
}
static void lsm_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                             const ogc_shape *out, const double *const *saved, const double *gy,
                             double *const *gx, double *const *mag, int64_t *terms) {
    (void)x, (void)out;
    ref_backward(op, in, saved, gy, gx, mag, terms, og_ref_log_softmax_grad);
}

typedef aclnnStatus (*fwd1_fn)(const aclTensor *, int64_t, aclTensor *, uint64_t *,
                               aclOpExecutor **);
typedef aclnnStatus (*bwd1_fn)(const aclTensor *, const aclTensor *, int64_t, aclTensor *,
                               uint64_t *, aclOpExecutor **);
typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

static int run_forward(ogc_call *c, fwd1_fn p1, phase2_fn p2) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = p1(c->in[0], (int64_t)c->op->attrs[0], out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, p2);
    aclDestroyTensor(out);
    return st;
}

static int run_backward(ogc_call *c, bwd1_fn p1, phase2_fn p2) {
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = p1(c->grad_out, c->saved[0], (int64_t)c->op->attrs[0], dx, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, p2);
    aclDestroyTensor(dx);
    return st;
}

static int sm_forward(ogc_call *c) {
    return run_forward(c, aclnnSoftmaxGetWorkspaceSize, aclnnSoftmax);
}
static int sm_backward(ogc_call *c) {
    return run_backward(c, aclnnSoftmaxBackwardGetWorkspaceSize, aclnnSoftmaxBackward);
}
static int lsm_forward(ogc_call *c) {
    return run_forward(c, aclnnLogSoftmaxGetWorkspaceSize, aclnnLogSoftmax);
}
static int lsm_backward(ogc_call *c) {
    return run_backward(c, aclnnLogSoftmaxBackwardGetWorkspaceSize, aclnnLogSoftmaxBackward);
}

#define SOFTMAX_ENTRY(entry_name, prefix, api_name, attr, LO, HI)                                  \
    {                                                                                              \
        .name = entry_name, .api = api_name, .nin = 1, .in = {{"self", true}},                     \
        .backward_uses_output = true, .attrs = attr, .dtypes = OG_DTS_FLOATING64, .lo = LO,        \
        .hi = HI, .fp32_ulps = 4, .forward = prefix##_forward, .backward = prefix##_backward,      \
        .shapes = sm_shapes, .ref_forward_tensor = prefix##_ref_forward,                           \
        .ref_backward_tensor = prefix##_ref_backward,                                              \
    }

static const ogc_op softmax_ops[] = {
    SOFTMAX_ENTRY("softmax", sm, "aclnnSoftmax + aclnnSoftmaxBackward", dim_last, -4, 4),
    SOFTMAX_ENTRY("softmax_dim0", sm, "aclnnSoftmax + aclnnSoftmaxBackward", dim_first, -4, 4),
    SOFTMAX_ENTRY("softmax_large", sm, "aclnnSoftmax + aclnnSoftmaxBackward", dim_last, 5000, 5008),
    SOFTMAX_ENTRY("log_softmax", lsm, "aclnnLogSoftmax + aclnnLogSoftmaxBackward", dim_last, -4, 4),
    SOFTMAX_ENTRY("log_softmax_dim0", lsm, "aclnnLogSoftmax + aclnnLogSoftmaxBackward", dim_first,
                  -4, 4),
    SOFTMAX_ENTRY("log_softmax_large", lsm, "aclnnLogSoftmax + aclnnLogSoftmaxBackward", dim_last,
                  5000, 5008),
};

OGC_DEFINE_FAMILY(softmax, softmax_ops)
