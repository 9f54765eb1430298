/* Registry entries of the 'arith' family: Add, Mul, ReduceSum, FusedAddScale (see registry.h for
 * how families are listed).
 *
 * The backwards of Add and Mul are not operators of their own: as in a framework's autograd they
 * are compositions of public aclnn calls, and a gradient of a broadcast input is summed down to
 * that input's shape with aclnnReduceSum (fp32 accumulation; products of 16-bit values are formed
 * exactly in fp32 first, and the result is rounded once to the gradient's dtype by aclnnMuls).
 * ReduceSum's own backward broadcasts grad_output back with aclnnInplaceAdd. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_fused_add_scale.h"
#include "aclnnop/aclnn_fused_add_scale_backward.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "check/check.h"
#include "check/composite.h"
#include "check/ref_arith.h"
#include "check/registry.h"
#include "tensor/dtype.h"

// ---------------------------------------------------------------------------------------------
// Helpers: temporaries and one-call wrappers of the public API (NULL stream, fresh workspace)

static int mul(const aclTensor *a, const aclTensor *b, aclTensor *out) {
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMulGetWorkspaceSize(a, b, out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnMul);
    return st;
}

static bool needs_sum(const aclTensor *src, const ogc_result *dst) {
    int64_t n = 1;
    for (int d = 0; d < dst->ndim; d++) n *= dst->dims[d];
    int64_t m = 1;
    for (int d = 0; d < src->ndim; d++) m *= src->dims[d];
    return n != m;
}

// ---------------------------------------------------------------------------------------------
// add: aclnnAdd; backward grad_self = sum(g), grad_other = alpha * sum(g)

static const double add_attrs[] = {1.5}; // alpha

static double add_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)saved;
    return og_ref_add(x[0], x[1], op->attrs[0]);
}

static void add_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                             double *gx, double *mag) {
    (void)x, (void)saved;
    gx[0] = gy;
    gx[1] = op->attrs[0] * gy;
    mag[0] = fabs(gx[0]);
    mag[1] = fabs(gx[1]);
}

static int add_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    float alpha = (float)c->op->attrs[0];
    aclScalar *a = aclCreateScalar(&alpha, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnAddGetWorkspaceSize(c->in[0], c->in[1], a, out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnAdd);
    aclDestroyScalar(a);
    aclDestroyTensor(out);
    return st;
}

static int add_inplace(ogc_call *c) {
    float alpha = (float)c->op->attrs[0];
    aclScalar *a = aclCreateScalar(&alpha, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnInplaceAddGetWorkspaceSize(c->in[0], c->in[1], a, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnInplaceAdd);
    aclDestroyScalar(a);
    return st;
}

static int add_backward(ogc_call *c) {
    int st = ogc_sum_to(c->grad_out, 1.0, &c->results[0]);
    if (!st) st = ogc_sum_to(c->grad_out, c->op->attrs[0], &c->results[1]);
    return st;
}

// ---------------------------------------------------------------------------------------------
// adds: aclnnAdds, self + alpha * other with other a scalar; backward grad_self = g. attrs =
// {other, alpha}: other is exact in every dtype (a 16-bit self rounds it to its own dtype).

static const double adds_attrs[] = {0.75, -1.5}; // other, alpha

static double adds_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)saved;
    return og_ref_add(x[0], op->attrs[0], op->attrs[1]);
}

static void adds_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                              double *gx, double *mag) {
    (void)op, (void)x, (void)saved;
    gx[0] = gy;
    mag[0] = fabs(gy);
}

static int adds_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    float other = (float)c->op->attrs[0], alpha = (float)c->op->attrs[1];
    aclScalar *o = aclCreateScalar(&other, ACL_FLOAT), *a = aclCreateScalar(&alpha, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnAddsGetWorkspaceSize(c->in[0], o, a, out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnAdds);
    aclDestroyScalar(o);
    aclDestroyScalar(a);
    aclDestroyTensor(out);
    return st;
}

static int adds_inplace(ogc_call *c) {
    float other = (float)c->op->attrs[0], alpha = (float)c->op->attrs[1];
    aclScalar *o = aclCreateScalar(&other, ACL_FLOAT), *a = aclCreateScalar(&alpha, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnInplaceAddsGetWorkspaceSize(c->in[0], o, a, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnInplaceAdds);
    aclDestroyScalar(o);
    aclDestroyScalar(a);
    return st;
}

static int adds_backward(ogc_call *c) { return ogc_sum_to(c->grad_out, 1.0, &c->results[0]); }

// ---------------------------------------------------------------------------------------------
// mul: aclnnMul; backward grad_self = sum(g * other), grad_other = sum(g * self)

// Test points keep away from 0: a zero factor leaves the other input's gradient unexercised
// (a 0-d case would be MISTRUSTED).
static const double mul_kinks[] = {0};

static double mul_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return og_ref_mul(x[0], x[1]);
}

static void mul_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                             double *gx, double *mag) {
    (void)op, (void)saved;
    gx[0] = gy * x[1];
    gx[1] = gy * x[0];
    mag[0] = fabs(gx[0]);
    mag[1] = fabs(gx[1]);
}

static int mul_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    int st = mul(c->in[0], c->in[1], out);
    aclDestroyTensor(out);
    return st;
}

static int mul_inplace(ogc_call *c) {
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnInplaceMulGetWorkspaceSize(c->in[0], c->in[1], &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnInplaceMul);
    return st;
}

// grad = sum(g * other) down to the input's shape. Without a sum, one aclnnMul. With one, the
// products are formed in fp32 (exact for 16-bit operands: g is widened by aclnnMuls(g, 1)) so
// that they are rounded only once, after the sum.
static int mul_grad(const aclTensor *g, const aclTensor *other, ogc_result *dst) {
    if (!needs_sum(g, dst)) {
        aclTensor *out = ogc_result_tensor(dst);
        aclTensor *view = ogc_reshaped(out, g->dims, g->ndim);
        int st = mul(g, other, view);
        aclDestroyTensor(view);
        aclDestroyTensor(out);
        return st;
    }
    // the product in fp32 (float64 when either factor is)
    aclDataType dt = g->dtype == ACL_DOUBLE || other->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    ogc_tmp g32 = ogc_tmp_new(g->dims, g->ndim, dt);
    ogc_tmp prod = ogc_tmp_new(g->dims, g->ndim, dt);
    int st = ogc_muls(g, 1.0, g32.t);
    if (!st) st = mul(g32.t, other, prod.t);
    if (!st) st = ogc_sum_to(prod.t, 1.0, dst);
    ogc_tmp_free(&g32);
    ogc_tmp_free(&prod);
    return st;
}

static int mul_backward(ogc_call *c) {
    int st = mul_grad(c->grad_out, c->in[1], &c->results[0]);
    if (!st) st = mul_grad(c->grad_out, c->in[0], &c->results[1]);
    return st;
}

// ---------------------------------------------------------------------------------------------
// reduce_sum: aclnnReduceSum over attrs = {keepdim, ndims, dims...}; its backward broadcasts
// grad_output back (aclnnInplaceAdd onto the zeroed gradient)

static const double rs_last[] = {0, 1, -1};      // dims [-1]
static const double rs_first_keep[] = {1, 1, 0}; // dims [0], keepDims
static const double rs_all[] = {0, 0};           // dims [] (every dim)
static const double rs_outer[] = {1, 2, 0, -1};  // dims [0, -1], keepDims

static bool rs_mask(const ogc_op *op, const ogc_shape *in, unsigned *mask) {
    int64_t dims[OG_MAX_DIMS];
    int n = (int)op->attrs[1];
    for (int i = 0; i < n; i++) dims[i] = (int64_t)op->attrs[2 + i];
    return og_ref_reduce_mask(in, dims, n, mask);
}

static bool rs_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)layout;
    unsigned mask;
    if (!rs_mask(op, &in[0], &mask)) return false; // e.g. dims [0, -1] of a 1-d input
    *out = og_ref_reduce_shape(&in[0], mask, op->attrs[0] != 0);
    return true;
}

static void rs_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                           const ogc_shape *out, double *y, double *const *saved, double *mag,
                           int64_t *terms) {
    (void)out, (void)saved;
    unsigned mask = 0;
    rs_mask(op, &in[0], &mask);
    og_ref_reduce_sum(&in[0], x[0], mask, y, mag);
    int64_t k = 1;
    for (int d = 0; d < in[0].ndim; d++)
        if ((mask >> d) & 1u) k *= in[0].dims[d];
    *terms = k;
}

static void rs_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                            const ogc_shape *out, const double *const *saved, const double *gy,
                            double *const *gx, double *const *mag, int64_t *terms) {
    (void)x, (void)out, (void)saved, (void)mag;
    unsigned mask = 0;
    rs_mask(op, &in[0], &mask);
    og_ref_reduce_sum_grad(&in[0], mask, gy, gx[0]);
    terms[0] = 1;
}

static int rs_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    int64_t dims[OG_MAX_DIMS];
    int n = (int)c->op->attrs[1];
    for (int i = 0; i < n; i++) dims[i] = (int64_t)c->op->attrs[2 + i];
    aclIntArray *a = aclCreateIntArray(dims, (uint64_t)n);
    uint64_t ws;
    aclOpExecutor *ex;
    int st =
        aclnnReduceSumGetWorkspaceSize(c->in[0], a, c->op->attrs[0] != 0, c->dtype, out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnReduceSum);
    aclDestroyIntArray(a);
    aclDestroyTensor(out);
    return st;
}

static int rs_backward(ogc_call *c) {
    const aclTensor *x = c->in[0];
    ogc_shape in = {.ndim = x->ndim};
    for (int d = 0; d < x->ndim; d++) in.dims[d] = x->dims[d];
    unsigned mask = 0;
    rs_mask(c->op, &in, &mask);
    ogc_shape kept = og_ref_reduce_shape(&in, mask, true); // grad_output with the summed dims as 1s
    aclTensor *g = ogc_reshaped(c->grad_out, kept.dims, kept.ndim);
    aclTensor *dx = ogc_result_tensor(&c->results[0]); // zeroed by the checker
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnInplaceAddGetWorkspaceSize(dx, g, alpha, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnInplaceAdd);
    aclDestroyScalar(alpha);
    aclDestroyTensor(dx);
    aclDestroyTensor(g);
    return st;
}

// ---------------------------------------------------------------------------------------------
// fused_add_scale: aclnnFusedAddScale + aclnnFusedAddScaleBackward; x [..., C] from the layout,
// bias [C], scale [C] (attrs[0] = 1) or [1]

static const double fas_per_channel[] = {1};
static const double fas_one[] = {0};
// Test points keep away from 0: a one-element scale of 0 would zero every output and gradient.
static const double fas_kinks[] = {0};

static bool fas_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    if (!strncmp(layout, "bcast", 5)) return false; // bias and scale broadcast in every layout
    ogc_shape x = in[0];
    if (x.ndim < 1) return false; // x needs a channel dim
    bool per_channel = op->attrs[0] != 0;
    int64_t n = 1;
    for (int d = 0; d < x.ndim; d++) n *= x.dims[d];
    if (n == 0) {
        // empty: put the 0 in the channel dim, so that bias and a per-channel scale are empty
        // too; a one-element scale would get a gradient summed over nothing (0, untestable)
        if (!per_channel) return false;
        for (int d = 0; d < x.ndim; d++) x.dims[d] = d == x.ndim - 1 ? 0 : 3;
    }
    int64_t c = x.dims[x.ndim - 1];
    in[0] = x;
    in[1] = (ogc_shape){.ndim = 1, .dims = {c}};
    in[2] = (ogc_shape){.ndim = 1, .dims = {per_channel ? c : 1}};
    *out = x;
    return true;
}

static double fas_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return og_ref_fused_add_scale(x[0], x[1], x[2]);
}

static void fas_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                             double *gx, double *mag) {
    (void)op, (void)saved;
    gx[0] = gy * x[2];
    gx[1] = gy * x[2];
    gx[2] = gy * (x[0] + x[1]);
    mag[0] = fabs(gx[0]);
    mag[1] = fabs(gx[1]);
    mag[2] = fabs(gy) * (fabs(x[0]) + fabs(x[1]));
}

static int fas_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnFusedAddScaleGetWorkspaceSize(c->in[0], c->in[1], c->in[2], out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnFusedAddScale);
    aclDestroyTensor(out);
    return st;
}

static int fas_backward(ogc_call *c) {
    aclTensor *g[3];
    for (int k = 0; k < 3; k++) g[k] = ogc_result_tensor(&c->results[k]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnFusedAddScaleBackwardGetWorkspaceSize(c->grad_out, c->in[0], c->in[1], c->in[2],
                                                        g[0], g[1], g[2], &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnFusedAddScaleBackward);
    for (int k = 0; k < 3; k++) aclDestroyTensor(g[k]);
    return st;
}

// ---------------------------------------------------------------------------------------------

#define REDUCE_SUM_ENTRY(entry_name, attr_array)                                                   \
    {                                                                                              \
        .name = entry_name, .api = "aclnnReduceSum + aclnnInplaceAdd", .nin = 1,                   \
        .in = {{"self", true}}, .attrs = attr_array, .dtypes = OG_DTS_FLOATING64, .lo = -4,        \
        .hi = 4, .fp32_ulps = 4, .forward = rs_forward, .backward = rs_backward,                   \
        .shapes = rs_shapes, .ref_forward_tensor = rs_ref_forward,                                 \
        .ref_backward_tensor = rs_ref_backward,                                                    \
    }

#define FUSED_ENTRY(entry_name, attr_array)                                                        \
    {                                                                                              \
        .name = entry_name, .api = "aclnnFusedAddScale + aclnnFusedAddScaleBackward", .nin = 3,    \
        .in = {{"x", true}, {"bias", true}, {"scale", true}}, .attrs = attr_array,                 \
        .dtypes = OG_DTS_FLOATING64, .lo = -10, .hi = 10, .kinks = fas_kinks, .nkinks = 1,         \
        .fp32_ulps = 4, .ref_forward = fas_ref_forward, .ref_backward = fas_ref_backward,          \
        .forward = fas_forward, .backward = fas_backward, .shapes = fas_shapes,                    \
    }

static const ogc_op arith_ops[] = {
    {
        .name = "add",
        .api = "aclnnAdd + aclnnReduceSum/aclnnMuls",
        .nin = 2,
        .in = {{"self", true}, {"other", true}},
        .attrs = add_attrs,
        .dtypes = OG_DTS_FLOATING64,
        .lo = -1000,
        .hi = 1000,
        .fp32_ulps = 4,
        .ref_forward = add_ref_forward,
        .ref_backward = add_ref_backward,
        .forward = add_forward,
        .backward = add_backward,
        .forward_inplace = add_inplace,
    },
    {
        .name = "adds",
        .api = "aclnnAdds(other 0.75, alpha -1.5) + aclnnMuls",
        .nin = 1,
        .in = {{"self", true}},
        .attrs = adds_attrs,
        .dtypes = OG_DTS_FLOATING64,
        .lo = -1000,
        .hi = 1000,
        .fp32_ulps = 4,
        .ref_forward = adds_ref_forward,
        .ref_backward = adds_ref_backward,
        .forward = adds_forward,
        .backward = adds_backward,
        .forward_inplace = adds_inplace,
    },
    {
        .name = "mul",
        .api = "aclnnMul + aclnnMul/aclnnReduceSum/aclnnMuls",
        .nin = 2,
        .in = {{"self", true}, {"other", true}},
        .dtypes = OG_DTS_FLOATING64,
        .lo = -100,
        .hi = 100,
        .kinks = mul_kinks,
        .nkinks = 1,
        .fp32_ulps = 4,
        .ref_forward = mul_ref_forward,
        .ref_backward = mul_ref_backward,
        .forward = mul_forward,
        .backward = mul_backward,
        .forward_inplace = mul_inplace,
    },
    REDUCE_SUM_ENTRY("reduce_sum", rs_last),
    REDUCE_SUM_ENTRY("reduce_sum_keep0", rs_first_keep),
    REDUCE_SUM_ENTRY("reduce_sum_all", rs_all),
    REDUCE_SUM_ENTRY("reduce_sum_outer", rs_outer),
    FUSED_ENTRY("fused_add_scale", fas_per_channel),
    FUSED_ENTRY("fused_add_scale1", fas_one),
};

OGC_DEFINE_FAMILY(arith, arith_ops)
