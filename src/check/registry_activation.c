/* Registry entries of the 'activation' family: the sigmoid family of smooth activations
 * (see registry.h for how families are listed).
 *
 *   gelu            aclnnGelu + aclnnGeluBackward (tanh approximation)
 *   gelu_v2_none    aclnnGeluV2(approximate=0) + aclnnGeluBackwardV2("none") (exact erf form)
 *   gelu_v2_tanh    aclnnGeluV2(approximate=1) + aclnnGeluBackwardV2("tanh")
 *   silu            aclnnSilu + aclnnSiluBackward
 *   sigmoid         aclnnSigmoid + aclnnSigmoidBackward (backward from the output)
 *   tanh            aclnnTanh + aclnnTanhBackward (backward from the output)
 *   softplus        aclnnSoftplus + aclnnSoftplusBackward, beta = 1.5, threshold = 12
 *   softplus_default  the same with PyTorch's defaults beta = 1, threshold = 20
 *
 * fp32_ulps: the largest fp32 error measured against MPFR (tests/check/mpfr_activation.c, with
 * gradOutput values other than 1), rounded up. Specials: roots of the derivatives (where the
 * backward sums cancel), the edges of the subnormal range, the polynomial / exp switch of tanh,
 * the points where 16-bit results round to 1, and both sides of the softplus threshold. */
#include <math.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_softplus.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "check/check.h"
#include "check/ref_activation.h"
#include "check/registry.h"
#include "tensor/dtype.h"

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);
typedef aclnnStatus (*unary1_fn)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
typedef aclnnStatus (*binary1_fn)(const aclTensor *, const aclTensor *, aclTensor *, uint64_t *,
                                  aclOpExecutor **);

static int run_unary(ogc_call *c, unary1_fn phase1, phase2_fn phase2) {
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = phase1(c->in[0], out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, phase2);
    aclDestroyTensor(out);
    return st;
}

// second = the input (self) or, for backward_uses_output ops, the forward's output
static int run_binary(ogc_call *c, const aclTensor *second, binary1_fn phase1, phase2_fn phase2) {
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = phase1(c->grad_out, second, dx, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, phase2);
    aclDestroyTensor(dx);
    return st;
}

// ---- gelu (tanh approximation): aclnnGelu + aclnnGeluBackward

static double gelu_tanh_fwd_ref(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return og_ref_gelu_tanh(x[0]);
}
static void gelu_tanh_bwd_ref(const ogc_op *op, const double *x, const double *saved, double gy,
                              double *gx, double *mag) {
    (void)op, (void)saved;
    gx[0] = gy * og_ref_gelu_tanh_grad(x[0], mag);
    mag[0] = fabs(gy) * mag[0];
}
// aclnnGeluBackward declares gradInput const
static aclnnStatus gelu_bwd_phase1(const aclTensor *g, const aclTensor *x, aclTensor *dx,
                                   uint64_t *ws, aclOpExecutor **ex) {
    return aclnnGeluBackwardGetWorkspaceSize(g, x, dx, ws, ex);
}
static int gelu_fwd(ogc_call *c) { return run_unary(c, aclnnGeluGetWorkspaceSize, aclnnGelu); }
static int gelu_bwd(ogc_call *c) {
    return run_binary(c, c->in[0], gelu_bwd_phase1, aclnnGeluBackward);
}

// ---- gelu_v2: aclnnGeluV2 + aclnnGeluBackwardV2, approximate none (erf) or tanh

static double gelu_erf_fwd_ref(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return og_ref_gelu_erf(x[0]);
}
static void gelu_erf_bwd_ref(const ogc_op *op, const double *x, const double *saved, double gy,
                             double *gx, double *mag) {
    (void)op, (void)saved;
    gx[0] = gy * og_ref_gelu_erf_grad(x[0], mag);
    mag[0] = fabs(gy) * mag[0];
}
static aclnnStatus gelu_v2_none1(const aclTensor *x, aclTensor *y, uint64_t *ws,
                                 aclOpExecutor **ex) {
    return aclnnGeluV2GetWorkspaceSize(x, 0, y, ws, ex);
}
static aclnnStatus gelu_v2_tanh1(const aclTensor *x, aclTensor *y, uint64_t *ws,
                                 aclOpExecutor **ex) {
    return aclnnGeluV2GetWorkspaceSize(x, 1, y, ws, ex);
}
static aclnnStatus gelu_bwd_v2_none1(const aclTensor *g, const aclTensor *x, aclTensor *dx,
                                     uint64_t *ws, aclOpExecutor **ex) {
    static char none[] = "none";
    return aclnnGeluBackwardV2GetWorkspaceSize(g, x, none, dx, ws, ex);
}
static aclnnStatus gelu_bwd_v2_tanh1(const aclTensor *g, const aclTensor *x, aclTensor *dx,
                                     uint64_t *ws, aclOpExecutor **ex) {
    static char tanh_str[] = "tanh";
    return aclnnGeluBackwardV2GetWorkspaceSize(g, x, tanh_str, dx, ws, ex);
}
static int gelu_v2_none_fwd(ogc_call *c) { return run_unary(c, gelu_v2_none1, aclnnGeluV2); }
static int gelu_v2_none_bwd(ogc_call *c) {
    return run_binary(c, c->in[0], gelu_bwd_v2_none1, aclnnGeluBackwardV2);
}
static int gelu_v2_tanh_fwd(ogc_call *c) { return run_unary(c, gelu_v2_tanh1, aclnnGeluV2); }
static int gelu_v2_tanh_bwd(ogc_call *c) {
    return run_binary(c, c->in[0], gelu_bwd_v2_tanh1, aclnnGeluBackwardV2);
}

// ---- silu

static double silu_fwd_ref(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return og_ref_silu(x[0]);
}
static void silu_bwd_ref(const ogc_op *op, const double *x, const double *saved, double gy,
                         double *gx, double *mag) {
    (void)op, (void)saved;
    gx[0] = gy * og_ref_silu_grad(x[0], mag);
    mag[0] = fabs(gy) * mag[0];
}
static int silu_fwd(ogc_call *c) { return run_unary(c, aclnnSiluGetWorkspaceSize, aclnnSilu); }
static int silu_bwd(ogc_call *c) {
    return run_binary(c, c->in[0], aclnnSiluBackwardGetWorkspaceSize, aclnnSiluBackward);
}

// ---- sigmoid and tanh: the backward reads the forward's output (saved[0], as the kernel wrote
// it; the reference takes that same value)

static double sigmoid_fwd_ref(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return og_ref_act_sigmoid(x[0]);
}
static void sigmoid_bwd_ref(const ogc_op *op, const double *x, const double *saved, double gy,
                            double *gx, double *mag) {
    (void)op, (void)x, (void)mag; // y (1 - y) does not cancel
    gx[0] = gy * og_ref_act_sigmoid_grad_from_output(saved[0]);
}
// The in-place forms: aclnnInplaceXxx(selfRef) over input 0.
typedef aclnnStatus (*inplace1_fn)(aclTensor *, uint64_t *, aclOpExecutor **);
static int run_inplace(ogc_call *c, inplace1_fn p1,
                       aclnnStatus (*p2)(void *, uint64_t, aclOpExecutor *, aclrtStream)) {
    uint64_t ws;
    aclOpExecutor *ex;
    int st = p1(c->in[0], &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, p2);
    return st;
}
static int sigmoid_inplace(ogc_call *c) {
    return run_inplace(c, aclnnInplaceSigmoidGetWorkspaceSize, aclnnInplaceSigmoid);
}
static int tanh_inplace(ogc_call *c) {
    return run_inplace(c, aclnnInplaceTanhGetWorkspaceSize, aclnnInplaceTanh);
}
static int sigmoid_fwd(ogc_call *c) {
    return run_unary(c, aclnnSigmoidGetWorkspaceSize, aclnnSigmoid);
}
static int sigmoid_bwd(ogc_call *c) {
    return run_binary(c, c->saved[0], aclnnSigmoidBackwardGetWorkspaceSize, aclnnSigmoidBackward);
}

static double tanh_fwd_ref(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return og_ref_act_tanh(x[0]);
}
static void tanh_bwd_ref(const ogc_op *op, const double *x, const double *saved, double gy,
                         double *gx, double *mag) {
    (void)op, (void)x, (void)mag; // (1 - y)(1 + y) does not cancel
    gx[0] = gy * og_ref_act_tanh_grad_from_output(saved[0]);
}
static int tanh_fwd(ogc_call *c) { return run_unary(c, aclnnTanhGetWorkspaceSize, aclnnTanh); }
static int tanh_bwd(ogc_call *c) {
    return run_binary(c, c->saved[0], aclnnTanhBackwardGetWorkspaceSize, aclnnTanhBackward);
}

// ---- softplus: attrs = {beta, threshold}, passed as float aclScalars

static double softplus_fwd_ref(const ogc_op *op, const double *x, double *saved) {
    (void)saved;
    return og_ref_softplus_bt(x[0], op->attrs[0], op->attrs[1]);
}
static void softplus_bwd_ref(const ogc_op *op, const double *x, const double *saved, double gy,
                             double *gx, double *mag) {
    (void)saved, (void)mag; // sigmoid does not cancel
    gx[0] = gy * og_ref_softplus_bt_grad(x[0], op->attrs[0], op->attrs[1]);
}
static int softplus_fwd(ogc_call *c) {
    float b = (float)c->op->attrs[0], t = (float)c->op->attrs[1];
    aclScalar *beta = aclCreateScalar(&b, ACL_FLOAT), *threshold = aclCreateScalar(&t, ACL_FLOAT);
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnSoftplusGetWorkspaceSize(c->in[0], beta, threshold, out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnSoftplus);
    aclDestroyTensor(out);
    aclDestroyScalar(beta);
    aclDestroyScalar(threshold);
    return st;
}
static int softplus_bwd(ogc_call *c) {
    float b = (float)c->op->attrs[0], t = (float)c->op->attrs[1];
    aclScalar *beta = aclCreateScalar(&b, ACL_FLOAT), *threshold = aclCreateScalar(&t, ACL_FLOAT);
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st =
        aclnnSoftplusBackwardGetWorkspaceSize(c->grad_out, c->in[0], beta, threshold, dx, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnSoftplusBackward);
    aclDestroyTensor(dx);
    aclDestroyScalar(beta);
    aclDestroyScalar(threshold);
    return st;
}

// ---- declarations

#define COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

// gelu' = 0 at -0.7518 (both forms); the tanh form's output is subnormal in fp32 below about
// -10.1 (zero below -10.8), the erf form's below -13.15 (zero below -14.36); fp16 subnormal and
// zero much earlier (-3.5 to -5). The domain stops at -20, where the float64 gradient is still
// non-zero (it underflows below -21.8 for the tanh form), so a 1-element case always carries
// a gradient.
static const double gelu_tanh_specials[] = {-0.7518, -0.75, -0.5,  0.0,   0.5,   3.0, -3.0,
                                            -4.0,    -5.0,  -10.0, -10.2, -10.7, 5.0};
static const double gelu_erf_specials[] = {-0.7518, -0.75, -0.5,  0.0,   0.5,   3.0, -3.0,
                                           -4.0,    -5.0,  -13.0, -13.5, -14.3, 5.3};
// silu' = 0 at -1.2785; e^x subnormal below -87.3, silu(x) below -91.9, zero below -108.7
static const double silu_specials[] = {-1.2785, -1.25, -0.5,  0.0,    17.0,   -17.0,
                                       -87.5,   -91.5, -92.5, -104.0, -108.5, 20.0};
// Sigmoid and tanh: the backward reads y, and y (1 - y) or 1 - y^2 is exactly 0 once y rounds
// to 0 or 1 in the dtype, so a 1-element case there carries no gradient (MISTRUSTED). Their
// domains stop before that in every dtype: sigmoid [-16, 6] (bf16 y rounds to 1 above 6.24,
// fp16 y to 0 below -17.3), tanh [-3.4, 3.4] (bf16 y rounds to +-1 beyond 3.46). The saturated
// and subnormal ranges are covered by the kernel harness (tests/kernel/test_elementwise.c).
static const double sigmoid_specials[] = {0.0, -15.9, -12.0, -8.5, 5.9, 4.0, -2.0, 2.0, 1e-3};
// the polynomial / exp switch at |x| = 0.625
static const double tanh_specials[] = {0.0,    0.6249, 0.6251, -0.6249, -0.6251, 0.625,
                                       -0.625, 3.3,    -3.3,   2.0,     1e-3,    -1e-3};
// beta = 1.5, threshold = 12: the threshold at x = 8 (a kink: test points keep 0.08 away; these
// stay 0.1 away), beta x = -87.3 (subnormal sigmoid) at x = -58.2, underflow below x = -69.3
static const double softplus_attrs[] = {1.5, 12.0};
static const double softplus_kinks[] = {8.0};
// where log1p(e^-|beta x|) is not tiny: the log1p polynomial's whole argument range
static const double softplus_regions[] = {-10 / 1.5, 10 / 1.5};
static const double softplus_default_regions[] = {-10, 10};
// tanh's polynomial range
static const double tanh_regions[] = {-0.625, 0.625};
static const double softplus_specials[] = {7.9,   8.1,   7.0,   9.0, 0.0, -0.5,
                                           -58.5, -62.0, -69.0, 5.0, -5.0};
static const double softplus_default_attrs[] = {1.0, 20.0};
static const double softplus_default_kinks[] = {20.0};
static const double softplus_default_specials[] = {19.7, 20.3, 0.0, -87.5, -95.0, -103.5, 15.0};

static const ogc_op activation_ops[] = {
    {
        .name = "gelu",
        .api = "aclnnGelu + aclnnGeluBackward",
        .nin = 1,
        .in = {{"self", true}},
        .dtypes = OG_DTS_FLOATING64,
        .lo = -20,
        .hi = 60,
        .specials = gelu_tanh_specials,
        .nspecials = COUNT(gelu_tanh_specials),
        .fp32_ulps = 4,
        .ref_forward = gelu_tanh_fwd_ref,
        .ref_backward = gelu_tanh_bwd_ref,
        .forward = gelu_fwd,
        .backward = gelu_bwd,
    },
    {
        .name = "gelu_v2_none",
        .api = "aclnnGeluV2(approximate=0) + aclnnGeluBackwardV2(\"none\")",
        .nin = 1,
        .in = {{"self", true}},
        .dtypes = OG_DTS_FLOATING64,
        .lo = -20,
        .hi = 60,
        .specials = gelu_erf_specials,
        .nspecials = COUNT(gelu_erf_specials),
        .fp32_ulps = 4,
        .ref_forward = gelu_erf_fwd_ref,
        .ref_backward = gelu_erf_bwd_ref,
        .forward = gelu_v2_none_fwd,
        .backward = gelu_v2_none_bwd,
    },
    {
        .name = "gelu_v2_tanh",
        .api = "aclnnGeluV2(approximate=1) + aclnnGeluBackwardV2(\"tanh\")",
        .nin = 1,
        .in = {{"self", true}},
        .dtypes = OG_DTS_FLOATING64,
        .lo = -20,
        .hi = 60,
        .specials = gelu_tanh_specials,
        .nspecials = COUNT(gelu_tanh_specials),
        .fp32_ulps = 4,
        .ref_forward = gelu_tanh_fwd_ref,
        .ref_backward = gelu_tanh_bwd_ref,
        .forward = gelu_v2_tanh_fwd,
        .backward = gelu_v2_tanh_bwd,
    },
    {
        .name = "silu",
        .api = "aclnnSilu + aclnnSiluBackward",
        .nin = 1,
        .in = {{"self", true}},
        .dtypes = OG_DTS_FLOATING64,
        .lo = -120,
        .hi = 60,
        .specials = silu_specials,
        .nspecials = COUNT(silu_specials),
        // SiluBackward's float fast path: relative error <= 3.0 x 2^-24 before the product
        // with gradOutput (every float of [-64, 64]), so 3.5 ulp for an adversarial
        // gradOutput; 2.98 measured in tests/kernel, 2.61 against MPFR
        .fp32_ulps = 3.5,
        .ref_forward = silu_fwd_ref,
        .ref_backward = silu_bwd_ref,
        .forward = silu_fwd,
        .backward = silu_bwd,
    },
    {
        .name = "sigmoid",
        .api = "aclnnSigmoid + aclnnSigmoidBackward",
        .nin = 1,
        .in = {{"self", true}},
        .backward_uses_output = true,
        .dtypes = OG_DTS_FLOATING64,
        .lo = -16,
        .hi = 6,
        .specials = sigmoid_specials,
        .nspecials = COUNT(sigmoid_specials),
        .fp32_ulps = 3,
        .ref_forward = sigmoid_fwd_ref,
        .ref_backward = sigmoid_bwd_ref,
        .forward = sigmoid_fwd,
        .backward = sigmoid_bwd,
        .forward_inplace = sigmoid_inplace,
    },
    {
        .name = "tanh",
        .api = "aclnnTanh + aclnnTanhBackward",
        .nin = 1,
        .in = {{"self", true}},
        .backward_uses_output = true,
        .dtypes = OG_DTS_FLOATING64,
        .lo = -3.4,
        .hi = 3.4,
        .specials = tanh_specials,
        .nspecials = COUNT(tanh_specials),
        .fp32_ulps = 2,
        .regions = tanh_regions,
        .nregions = COUNT(tanh_regions) / 2,
        .ref_forward = tanh_fwd_ref,
        .ref_backward = tanh_bwd_ref,
        .forward = tanh_fwd,
        .backward = tanh_bwd,
        .forward_inplace = tanh_inplace,
    },
    {
        .name = "softplus",
        .api = "aclnnSoftplus + aclnnSoftplusBackward (beta 1.5, threshold 12)",
        .nin = 1,
        .in = {{"self", true}},
        .attrs = softplus_attrs,
        .dtypes = OG_DTS_FLOATING64,
        .lo = -120,
        .hi = 60,
        .kinks = softplus_kinks,
        .nkinks = COUNT(softplus_kinks),
        .specials = softplus_specials,
        .nspecials = COUNT(softplus_specials),
        .fp32_ulps = 3,
        .regions = softplus_regions,
        .nregions = COUNT(softplus_regions) / 2,
        .ref_forward = softplus_fwd_ref,
        .ref_backward = softplus_bwd_ref,
        .forward = softplus_fwd,
        .backward = softplus_bwd,
    },
    {
        .name = "softplus_default",
        .api = "aclnnSoftplus + aclnnSoftplusBackward (beta 1, threshold 20)",
        .nin = 1,
        .in = {{"self", true}},
        .attrs = softplus_default_attrs,
        .dtypes = OG_DTS_FLOATING64,
        .lo = -120,
        .hi = 60,
        .kinks = softplus_default_kinks,
        .nkinks = COUNT(softplus_default_kinks),
        .specials = softplus_default_specials,
        .nspecials = COUNT(softplus_default_specials),
        .fp32_ulps = 3,
        .regions = softplus_default_regions,
        .nregions = COUNT(softplus_default_regions) / 2,
        .ref_forward = softplus_fwd_ref,
        .ref_backward = softplus_bwd_ref,
        .forward = softplus_fwd,
        .backward = softplus_bwd,
    },
};

OGC_DEFINE_FAMILY(activation, activation_ops)
