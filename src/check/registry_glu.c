/* Registry entries of the 'glu' family (see registry.h):
 *
 *   swiglu            aclnnSwiGlu + aclnnSwiGluGrad, dim -1
 *   swiglu_dim0       the same along dim 0 (the halves are strided views)
 *   geglu_tanh        aclnnGeGlu + aclnnGeGluBackward, dim -1, approximate 1 (tanh)
 *   geglu_erf         the same, approximate 0 (erf)
 *   geglu_erf_dim0    approximate 0 along dim 0
 *   geglu_v3_left     aclnnGeGluV3 + aclnnGeGluV3Backward, activateLeft (gelu of the first half),
 *                     dim -1, approximate 1
 *
 * attrs = {dim, approximate, activateLeft}. The shape hook doubles the layout's extent along dim
 * for x, so the output has the layout's shape (odd extents elsewhere: 5 x 7 is the base layout);
 * the 0-d layout is SKIPPED (nothing to split), and so is "mixed" (see glu_shapes). GeGlu saves
 * outGelu (saved[0]), which its backward reads for the gradient of the linear half, as ops-nn's
 * does; the reference backward reads it too, so a kernel that recomputed it differently would still
 * be judged on its own input. The references (ref_activation.c's silu and gelu, float64) are
 * applied per output element to the element pair (A, B) along dim.
 *
 * Error bound: 5 fp32 ulps, the activation entries' (silu 3.5, gelu 4) plus the product with
 * the other half (one more rounding; the backward also rounds dy B or dy L first). */
#include <stdbool.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_geglu.h"
#include "aclnnop/aclnn_geglu_backward.h"
#include "aclnnop/aclnn_swi_glu.h"
#include "aclnnop/aclnn_swi_glu_grad.h"
#include "check/check.h"
#include "check/ref_activation.h"
#include "check/registry.h"
#include "tensor/dtype.h"

static int axis_of(const ogc_op *op, int ndim) {
    int dim = (int)op->attrs[0];
    return dim < 0 ? dim + ndim : dim;
}

static bool glu_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    // ops-nn requires the gradient in x's dtype: the "mixed" layout's fp32 / 16-bit gradient is
    // refused (161002, tested in test_api_glu), not a case to judge
    if (in[0].ndim == 0 || !strcmp(layout, "mixed")) return false;
    *out = in[0];
    in[0].dims[axis_of(op, in[0].ndim)] *= 2;
    return true;
}

// The output index space as outer x H x inner; element (o, j, i) of the output reads A at
// x[(o 2H + j) inner + i] and B at x[(o 2H + H + j) inner + i].
typedef struct split {
    int64_t outer, H, inner;
} split;

static split split_of(const ogc_op *op, const ogc_shape *x) {
    split s = {1, 1, 1};
    int axis = axis_of(op, x->ndim);
    for (int d = 0; d < x->ndim; d++) {
        if (d < axis)
            s.outer *= x->dims[d];
        else if (d == axis)
            s.H = x->dims[d] / 2;
        else
            s.inner *= x->dims[d];
    }
    return s;
}

#define FOR_EACH_PAIR(s, ia, ib, iy)                                                               \
    for (int64_t o = 0; o < (s).outer; o++)                                                        \
        for (int64_t j = 0; j < (s).H; j++)                                                        \
            for (int64_t i = 0; i < (s).inner; i++)                                                \
                for (int64_t ia = (o * 2 * (s).H + j) * (s).inner + i,                             \
                             ib = ia + (s).H * (s).inner, iy = (o * (s).H + j) * (s).inner + i,    \
                             once_ = 1;                                                            \
                     once_; once_ = 0)

static double fabs_(double v) { return v < 0 ? -v : v; }

static void swiglu_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                               const ogc_shape *out, double *y, double *const *saved, double *mag,
                               int64_t *terms) {
    (void)out, (void)saved, (void)mag;
    split s = split_of(op, &in[0]);
    FOR_EACH_PAIR(s, ia, ib, iy) y[iy] = og_ref_silu(x[0][ia]) * x[0][ib];
    *terms = 1;
}

static void swiglu_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                                const ogc_shape *out, const double *const *saved, const double *gy,
                                double *const *gx, double *const *mag, int64_t *terms) {
    (void)out, (void)saved;
    split s = split_of(op, &in[0]);
    FOR_EACH_PAIR(s, ia, ib, iy) {
        double a = x[0][ia], b = x[0][ib], m;
        double d = og_ref_silu_grad(a, &m);
        gx[0][ia] = gy[iy] * d * b;
        mag[0][ia] = fabs_(gy[iy] * b) * m;
        gx[0][ib] = gy[iy] * og_ref_silu(a);
    }
    terms[0] = 1;
}

static double gelu_ref(const ogc_op *op, double v) {
    return op->attrs[1] != 0 ? og_ref_gelu_tanh(v) : og_ref_gelu_erf(v);
}
static double gelu_ref_grad(const ogc_op *op, double v, double *mag) {
    return op->attrs[1] != 0 ? og_ref_gelu_tanh_grad(v, mag) : og_ref_gelu_erf_grad(v, mag);
}

// GeGlu gates G (gelu'd) and L (linear): G = B, L = A; activateLeft swaps them.
static void geglu_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                              const ogc_shape *out, double *y, double *const *saved, double *mag,
                              int64_t *terms) {
    (void)out, (void)mag;
    bool left = op->attrs[2] != 0;
    split s = split_of(op, &in[0]);
    FOR_EACH_PAIR(s, ia, ib, iy) {
        double g = gelu_ref(op, x[0][left ? ia : ib]);
        saved[0][iy] = g;
        y[iy] = x[0][left ? ib : ia] * g;
    }
    *terms = 1;
}

static void geglu_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                               const ogc_shape *out, const double *const *saved, const double *gy,
                               double *const *gx, double *const *mag, int64_t *terms) {
    (void)out;
    bool left = op->attrs[2] != 0;
    split s = split_of(op, &in[0]);
    FOR_EACH_PAIR(s, ia, ib, iy) {
        int64_t ig = left ? ia : ib, il = left ? ib : ia;
        double m;
        double d = gelu_ref_grad(op, x[0][ig], &m);
        gx[0][ig] = gy[iy] * x[0][il] * d;
        mag[0][ig] = fabs_(gy[iy] * x[0][il]) * m;
        gx[0][il] = gy[iy] * saved[0][iy]; // the forward's gelu, as the operator reads it
    }
    terms[0] = 1;
}

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

static int swiglu_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnSwiGluGetWorkspaceSize(c->in[0], (int64_t)c->op->attrs[0], out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnSwiGlu);
    aclDestroyTensor(out);
    return st;
}

static int swiglu_backward(ogc_call *c) {
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnSwiGluGradGetWorkspaceSize(c->grad_out, c->in[0], (int64_t)c->op->attrs[0], dx,
                                             &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnSwiGluGrad);
    aclDestroyTensor(dx);
    return st;
}

static int geglu_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensor *gelu = ogc_result_tensor(&c->results[1]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int64_t dim = (int64_t)c->op->attrs[0], approximate = (int64_t)c->op->attrs[1];
    bool left = c->op->attrs[2] != 0;
    int st;
    if (left) {
        st = aclnnGeGluV3GetWorkspaceSize(c->in[0], dim, approximate, true, out, gelu, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnGeGluV3);
    } else {
        st = aclnnGeGluGetWorkspaceSize(c->in[0], dim, approximate, out, gelu, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnGeGlu);
    }
    aclDestroyTensor(out);
    aclDestroyTensor(gelu);
    return st;
}

static int geglu_backward(ogc_call *c) {
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int64_t dim = (int64_t)c->op->attrs[0], approximate = (int64_t)c->op->attrs[1];
    bool left = c->op->attrs[2] != 0;
    int st;
    if (left) {
        st = aclnnGeGluV3BackwardGetWorkspaceSize(c->grad_out, c->in[0], c->saved[0], dim,
                                                  approximate, true, dx, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnGeGluV3Backward);
    } else {
        st = aclnnGeGluBackwardGetWorkspaceSize(c->grad_out, c->in[0], c->saved[0], dim,
                                                approximate, dx, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnGeGluBackward);
    }
    aclDestroyTensor(dx);
    return st;
}

static const double last_none[] = {-1, 0, 0}, first_none[] = {0, 0, 0};
static const double last_tanh[] = {-1, 1, 0}, last_erf[] = {-1, 0, 0}, first_erf[] = {0, 0, 0};
static const double last_tanh_left[] = {-1, 1, 1};
// the roots of silu' (-1.2785) and gelu' (-0.7518), where the derivatives cancel
static const double silu_specials[] = {-1.2785, -1.25, -0.5, 0.0, 3.0, -3.0, 7.5, -7.5};
static const double gelu_specials[] = {-0.7518, -0.75, -0.5, 0.0, 0.5, 3.0, -3.0, 7.5};

#define COUNT(a) (int)(sizeof a / sizeof *a)

#define SWIGLU_ENTRY(NAME, ATTRS)                                                                  \
    {                                                                                              \
        .name = NAME, .api = "aclnnSwiGlu + aclnnSwiGluGrad", .nin = 1, .in = {{"x", true}},       \
        .attrs = ATTRS, .dtypes = OG_DTS_FLOATING64, .lo = -8, .hi = 8, .specials = silu_specials, \
        .nspecials = COUNT(silu_specials), .fp32_ulps = 5, .forward = swiglu_forward,              \
        .backward = swiglu_backward, .shapes = glu_shapes,                                         \
        .ref_forward_tensor = swiglu_ref_forward, .ref_backward_tensor = swiglu_ref_backward,      \
    }

#define GEGLU_ENTRY(NAME, API, ATTRS)                                                              \
    {                                                                                              \
        .name = NAME, .api = API, .nin = 1, .in = {{"self", true}}, .nsaved = 1,                   \
        .saved_names = {"outGelu"}, .attrs = ATTRS, .dtypes = OG_DTS_FLOATING64, .lo = -8,         \
        .hi = 8, .specials = gelu_specials, .nspecials = COUNT(gelu_specials), .fp32_ulps = 5,     \
        .forward = geglu_forward, .backward = geglu_backward, .shapes = glu_shapes,                \
        .ref_forward_tensor = geglu_ref_forward, .ref_backward_tensor = geglu_ref_backward,        \
    }

static const ogc_op glu_ops[] = {
    SWIGLU_ENTRY("swiglu", last_none),
    SWIGLU_ENTRY("swiglu_dim0", first_none),
    GEGLU_ENTRY("geglu_tanh", "aclnnGeGlu + aclnnGeGluBackward (approximate 1: tanh)", last_tanh),
    GEGLU_ENTRY("geglu_erf", "aclnnGeGlu + aclnnGeGluBackward (approximate 0: erf)", last_erf),
    GEGLU_ENTRY("geglu_erf_dim0", "aclnnGeGlu + aclnnGeGluBackward (approximate 0, dim 0)",
                first_erf),
    GEGLU_ENTRY("geglu_v3_left",
                "aclnnGeGluV3 + aclnnGeGluV3Backward (activateLeft, approximate 1: tanh)",
                last_tanh_left),
};

OGC_DEFINE_FAMILY(glu, glu_ops)
