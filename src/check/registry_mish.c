/* Registry entries of the Mish family (see registry.h for how families are listed). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/check.h"
#include "check/reference.h"
#include "check/registry.h"
#include "tensor/dtype.h"

// ---- mish: aclnnMish + aclnnMishBackward

static double mish_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return og_ref_mish(x[0]);
}

// |g| (|t| + |x sigmoid(x) (1 - t^2)|): the terms whose sum is mish'(x), made non-negative.
static double mish_grad_magnitude(double x, double t, double gy) {
    double corr = isinf(x) ? 0 : x * og_ref_sigmoid(x) * (1 - t) * (1 + t);
    return fabs(gy) * (fabs(t) + fabs(corr));
}

static void mish_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                              double *gx, double *mag) {
    (void)op, (void)saved;
    gx[0] = gy * og_ref_mish_grad(x[0]);
    mag[0] = mish_grad_magnitude(x[0], og_ref_mish_tanhx(x[0]), gy);
}

static int mish_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMishGetWorkspaceSize(c->in[0], out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnMish);
    aclDestroyTensor(out);
    return st;
}

static int mish_inplace(ogc_call *c) {
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnInplaceMishGetWorkspaceSize(c->in[0], &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnInplaceMish);
    return st;
}

static int mish_backward(ogc_call *c) {
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMishBackwardGetWorkspaceSize(c->grad_out, c->in[0], dx, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnMishBackward);
    aclDestroyTensor(dx);
    return st;
}

// ---- mish_tanhx: aclnnMishWithTanhx saves t = tanh(softplus(x)); aclnnMishBackwardWithTanhx
// reuses it. The backward reference takes the saved t as the kernel sees it (rounded to the
// dtype), so the checker judges the kernel, not the rounding of t.

static double mish_tanhx_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)op;
    saved[0] = og_ref_mish_tanhx(x[0]);
    return og_ref_mish(x[0]);
}

static void mish_tanhx_ref_backward(const ogc_op *op, const double *x, const double *saved,
                                    double gy, double *gx, double *mag) {
    (void)op;
    gx[0] = og_ref_mish_grad_tanhx(gy, x[0], saved[0]);
    mag[0] = mish_grad_magnitude(x[0], saved[0], gy);
}

static int mish_tanhx_forward(ogc_call *c) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensor *t = ogc_result_tensor(&c->results[1]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMishWithTanhxGetWorkspaceSize(c->in[0], out, t, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnMishWithTanhx);
    aclDestroyTensor(out);
    aclDestroyTensor(t);
    return st;
}

static int mish_tanhx_backward(ogc_call *c) {
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMishBackwardWithTanhxGetWorkspaceSize(c->grad_out, c->in[0], c->saved[0], dx, &ws,
                                                        &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnMishBackwardWithTanhx);
    aclDestroyTensor(dx);
    return st;
}

// mish' = 0 near -1.1924 (cancellation); e^x is subnormal in fp32 below -87.3 and 0 below -103.9;
// tanh(softplus(x)) rounds to 1 in fp32 above ~9 and in fp16 above ~4.
static const double mish_specials[] = {-1.1924, -1.19, -0.5,  0.0,   4.5,    9.5,
                                       20.0,    -20.0, -87.5, -95.0, -104.0, 59.0};

static const ogc_op activation_mish_ops[] = {
    {
        .name = "mish",
        .api = "aclnnMish + aclnnMishBackward",
        .nin = 1,
        .in = {{"self", true}},
        .dtypes = OG_DTS_FLOATING64,
        .lo = -60,
        .hi = 60,
        .specials = mish_specials,
        .nspecials = sizeof mish_specials / sizeof *mish_specials,
        .fp32_ulps = 4,
        .ref_forward = mish_ref_forward,
        .ref_backward = mish_ref_backward,
        .forward = mish_forward,
        .backward = mish_backward,
        .forward_inplace = mish_inplace,
    },
    {
        .name = "mish_tanhx",
        .api = "aclnnMishWithTanhx + aclnnMishBackwardWithTanhx",
        .nin = 1,
        .in = {{"self", true}},
        .nsaved = 1,
        .saved_names = {"tanhx"},
        .dtypes = OG_DTS_FLOATING64,
        .lo = -60,
        .hi = 60,
        .specials = mish_specials,
        .nspecials = sizeof mish_specials / sizeof *mish_specials,
        .fp32_ulps = 4,
        .ref_forward = mish_tanhx_ref_forward,
        .ref_backward = mish_tanhx_ref_backward,
        .forward = mish_tanhx_forward,
        .backward = mish_tanhx_backward,
    },
};

OGC_DEFINE_FAMILY(mish, activation_mish_ops)
