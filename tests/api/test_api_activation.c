/* API-level tests of the sigmoid family: aclnnGelu, aclnnGeluBackward, aclnnGeluV2,
 * aclnnGeluBackwardV2, aclnnSilu, aclnnSiluBackward, aclnnSigmoid, aclnnInplaceSigmoid,
 * aclnnSigmoidBackward, aclnnTanh, aclnnInplaceTanh, aclnnTanhBackward, aclnnSoftplus,
 * aclnnSoftplusBackward.
 *
 * Every status path of every operator, with the status code AND the text of
 * aclGetRecentErrMsg() naming the function, the argument and the rule: NULL pointers (161001),
 * dtypes (161002, with the "opgrad supports" message for dtypes aclnn accepts), ranks (9
 * rejected, 8 and 0 accepted), shapes (out / gradInput mismatch, inputs that do not broadcast,
 * SoftplusBackward's equal shapes), attributes (GeluV2's approximate, GeluBackwardV2's string,
 * softplus' scalars). The valid calls run and their values are checked against the float64
 * references: broadcasting, promotion, strided views, 0-d and 8-d tensors, empty tensors,
 * in-place variants, scalar attributes of several dtypes. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

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
#include "check/ref_activation.h"
#include "test.h"
#include "testutil.h"

/* ---- tensors over their own "device" storage ---------------------------------------------- */

typedef struct tview {
    aclTensor *t;
    void *buf;
    aclDataType dt;
    int64_t storage;
} tview;

// A tensor with explicit strides / offset over a 1-D storage (minimal when storage == 0).
static tview tv_make(const int64_t *dims, int ndim, aclDataType dt, const int64_t *strides,
                     int64_t offset) {
    tview v = {NULL, NULL, dt, 0};
    int64_t st[32], s = 1, maxoff = offset;
    int empty = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        st[d] = strides ? strides[d] : s;
        s *= dims[d] > 0 ? dims[d] : 1;
        if (dims[d] == 0) empty = 1;
    }
    if (!empty)
        for (int d = 0; d < ndim; d++) maxoff += st[d] * (dims[d] - 1);
    v.storage = maxoff + 1;
    size_t bytes = (size_t)v.storage * aclDataTypeSize(dt);
    if (aclrtMalloc(&v.buf, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return v;
    memset(v.buf, 0, bytes);
    int64_t sd[1] = {v.storage};
    v.t = aclCreateTensor(dims, (uint64_t)ndim, dt, st, offset, ACL_FORMAT_ND, sd, 1, v.buf);
    return v;
}

static tview tv(const int64_t *dims, int ndim, aclDataType dt) {
    return tv_make(dims, ndim, dt, NULL, 0);
}

static void tv_free(tview *v) {
    if (v->t) aclDestroyTensor(v->t);
    if (v->buf) aclrtFree(v->buf);
    v->t = NULL;
    v->buf = NULL;
}

// Storage element i (not the view's i-th element).
static void tv_set(tview *v, int64_t i, double x) { test_store(v->buf, i, v->dt, x); }
static double tv_get(const tview *v, int64_t i) { return test_load(v->buf, i, v->dt); }

static const int64_t D23[] = {2, 3}, D3[] = {3}, D13[] = {1, 3}, D0[] = {0, 3};

/* ---- the operators as tables ---------------------------------------------------------------- */

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

// Unary forwards: f(self) -> out. Softplus with beta 1.5, threshold 12; GeluV2 with approximate.
static aclScalar *g_beta, *g_threshold;
static char g_none[] = "none", g_tanh[] = "tanh";

static aclnnStatus gelu1(const aclTensor *x, aclTensor *y, uint64_t *w, aclOpExecutor **e) {
    return aclnnGeluGetWorkspaceSize(x, y, w, e);
}
static aclnnStatus gelu_v2_0(const aclTensor *x, aclTensor *y, uint64_t *w, aclOpExecutor **e) {
    return aclnnGeluV2GetWorkspaceSize(x, 0, y, w, e);
}
static aclnnStatus gelu_v2_1(const aclTensor *x, aclTensor *y, uint64_t *w, aclOpExecutor **e) {
    return aclnnGeluV2GetWorkspaceSize(x, 1, y, w, e);
}
static aclnnStatus silu1(const aclTensor *x, aclTensor *y, uint64_t *w, aclOpExecutor **e) {
    return aclnnSiluGetWorkspaceSize(x, y, w, e);
}
static aclnnStatus sigmoid1(const aclTensor *x, aclTensor *y, uint64_t *w, aclOpExecutor **e) {
    return aclnnSigmoidGetWorkspaceSize(x, y, w, e);
}
static aclnnStatus tanh1(const aclTensor *x, aclTensor *y, uint64_t *w, aclOpExecutor **e) {
    return aclnnTanhGetWorkspaceSize(x, y, w, e);
}
static aclnnStatus softplus1(const aclTensor *x, aclTensor *y, uint64_t *w, aclOpExecutor **e) {
    return aclnnSoftplusGetWorkspaceSize(x, g_beta, g_threshold, y, w, e);
}

static double r_gelu(double x) { return og_ref_gelu_tanh(x); }
static double r_gelu_erf(double x) { return og_ref_gelu_erf(x); }
static double r_sigmoid(double x) { return og_ref_act_sigmoid(x); }
static double r_softplus(double x) { return og_ref_softplus_bt(x, 1.5, 12.0); }

typedef struct unary_op {
    const char *name, *self_name, *out_name;
    aclnnStatus (*phase1)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
    phase2_fn phase2;
    double (*ref)(double);
} unary_op;

static const unary_op UNARY[] = {
    {"aclnnGelu", "self", "out", gelu1, aclnnGelu, r_gelu},
    {"aclnnGeluV2", "x", "y", gelu_v2_0, aclnnGeluV2, r_gelu_erf},
    {"aclnnGeluV2", "x", "y", gelu_v2_1, aclnnGeluV2, r_gelu},
    {"aclnnSilu", "self", "out", silu1, aclnnSilu, og_ref_silu},
    {"aclnnSigmoid", "self", "out", sigmoid1, aclnnSigmoid, r_sigmoid},
    {"aclnnTanh", "self", "out", tanh1, aclnnTanh, og_ref_act_tanh},
    {"aclnnSoftplus", "self", "out", softplus1, aclnnSoftplus, r_softplus},
};
enum { NUNARY = sizeof UNARY / sizeof UNARY[0] };

// Backwards: (gradOutput, self or output) -> gradInput.
static aclnnStatus gelu_b(const aclTensor *g, const aclTensor *x, aclTensor *gi, uint64_t *w,
                          aclOpExecutor **e) {
    return aclnnGeluBackwardGetWorkspaceSize(g, x, gi, w, e);
}
static aclnnStatus gelu_b2_none(const aclTensor *g, const aclTensor *x, aclTensor *gi, uint64_t *w,
                                aclOpExecutor **e) {
    return aclnnGeluBackwardV2GetWorkspaceSize(g, x, g_none, gi, w, e);
}
static aclnnStatus gelu_b2_tanh(const aclTensor *g, const aclTensor *x, aclTensor *gi, uint64_t *w,
                                aclOpExecutor **e) {
    return aclnnGeluBackwardV2GetWorkspaceSize(g, x, g_tanh, gi, w, e);
}
static aclnnStatus silu_b(const aclTensor *g, const aclTensor *x, aclTensor *gi, uint64_t *w,
                          aclOpExecutor **e) {
    return aclnnSiluBackwardGetWorkspaceSize(g, x, gi, w, e);
}
static aclnnStatus sigmoid_b(const aclTensor *g, const aclTensor *y, aclTensor *gi, uint64_t *w,
                             aclOpExecutor **e) {
    return aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi, w, e);
}
static aclnnStatus tanh_b(const aclTensor *g, const aclTensor *y, aclTensor *gi, uint64_t *w,
                          aclOpExecutor **e) {
    return aclnnTanhBackwardGetWorkspaceSize(g, y, gi, w, e);
}
static aclnnStatus softplus_b(const aclTensor *g, const aclTensor *x, aclTensor *gi, uint64_t *w,
                              aclOpExecutor **e) {
    return aclnnSoftplusBackwardGetWorkspaceSize(g, x, g_beta, g_threshold, gi, w, e);
}

static double d_gelu(double x) {
    double m;
    return og_ref_gelu_tanh_grad(x, &m);
}
static double d_gelu_erf(double x) {
    double m;
    return og_ref_gelu_erf_grad(x, &m);
}
static double d_silu(double x) {
    double m;
    return og_ref_silu_grad(x, &m);
}
static double d_sigmoid_y(double y) { return og_ref_act_sigmoid_grad_from_output(y); }
static double d_tanh_y(double y) { return og_ref_act_tanh_grad_from_output(y); }
static double d_softplus(double x) { return og_ref_softplus_bt_grad(x, 1.5, 12.0); }

typedef struct binary_op {
    const char *name, *second; // second input's name: "self" or "output"
    aclnnStatus (*phase1)(const aclTensor *, const aclTensor *, aclTensor *, uint64_t *,
                          aclOpExecutor **);
    phase2_fn phase2;
    double (*deriv)(double); // at self, or from output
    bool broadcast;
} binary_op;

static const binary_op BINARY[] = {
    {"aclnnGeluBackward", "self", gelu_b, aclnnGeluBackward, d_gelu, true},
    {"aclnnGeluBackwardV2", "self", gelu_b2_none, aclnnGeluBackwardV2, d_gelu_erf, true},
    {"aclnnGeluBackwardV2", "self", gelu_b2_tanh, aclnnGeluBackwardV2, d_gelu, true},
    {"aclnnSiluBackward", "self", silu_b, aclnnSiluBackward, d_silu, true},
    {"aclnnSigmoidBackward", "output", sigmoid_b, aclnnSigmoidBackward, d_sigmoid_y, true},
    {"aclnnTanhBackward", "output", tanh_b, aclnnTanhBackward, d_tanh_y, true},
    {"aclnnSoftplusBackward", "self", softplus_b, aclnnSoftplusBackward, d_softplus, false},
};
enum { NBINARY = sizeof BINARY / sizeof BINARY[0] };

static aclnnStatus run_unary(const unary_op *op, const tview *x, const tview *y) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = op->phase1(x->t, y->t, &ws, &e);
    return test_run(st, ws, e, op->phase2, NULL);
}

static aclnnStatus run_binary(const binary_op *op, const tview *g, const tview *x,
                              const tview *gi) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = op->phase1(g->t, x->t, gi->t, &ws, &e);
    return test_run(st, ws, e, op->phase2, NULL);
}

// |got - want| within 4 ulps of fp32 (+ a relative 2^-21 for cancelling derivatives) or 1 ulp
// of a 16-bit dtype.
static bool close_to(aclDataType dt, double got, double want) {
    if (isnan(want)) return isnan(got);
    double u = test_ulp_error(dt, got, want);
    return dt == ACL_FLOAT ? u <= 4 || fabs(got - want) <= 0x1p-21 : u <= 1;
}

static const double XS[] = {-3.5, -0.75, 0.25, 1.0, 2.5, 9.0};

/* ---- NULL pointers: 161001 ----------------------------------------------------------------- */

static void test_unary_null_arguments(void) {
    for (int k = 0; k < NUNARY; k++) {
        const unary_op *op = &UNARY[k];
        tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECK_EQ(op->phase1(NULL, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG(op->self_name);
        CHECK_MSG("NULL");
        CHECK_MSG(op->name);
        CHECK_EQ(op->phase1(x.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG(op->out_name);
        CHECK_EQ(op->phase1(x.t, y.t, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG("workspaceSize");
        CHECK_EQ(op->phase1(x.t, y.t, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG("executor");
        // NULL is checked before the dtype
        tview xd = tv(D23, 2, ACL_DOUBLE);
        CHECK_EQ(op->phase1(xd.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
        tv_free(&x), tv_free(&y), tv_free(&xd);
    }
}

static void test_inplace_null_arguments(void) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    tview x = tv(D23, 2, ACL_FLOAT);
    CHECK_EQ(aclnnInplaceSigmoidGetWorkspaceSize(NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("selfRef");
    CHECK_MSG("aclnnInplaceSigmoid");
    CHECK_EQ(aclnnInplaceSigmoidGetWorkspaceSize(x.t, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspaceSize");
    CHECK_EQ(aclnnInplaceSigmoidGetWorkspaceSize(x.t, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    CHECK_EQ(aclnnInplaceTanhGetWorkspaceSize(NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("selfRef");
    CHECK_MSG("aclnnInplaceTanh");
    CHECK_EQ(aclnnInplaceTanhGetWorkspaceSize(x.t, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnInplaceTanhGetWorkspaceSize(x.t, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    tv_free(&x);
}

static void test_binary_null_arguments(void) {
    for (int k = 0; k < NBINARY; k++) {
        const binary_op *op = &BINARY[k];
        tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT), gi = tv(D23, 2, ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECK_EQ(op->phase1(NULL, x.t, gi.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG("gradOutput");
        CHECK_MSG(op->name);
        CHECK_EQ(op->phase1(g.t, NULL, gi.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG(op->second);
        CHECK_EQ(op->phase1(g.t, x.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG("gradInput");
        CHECK_EQ(op->phase1(g.t, x.t, gi.t, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG("workspaceSize");
        CHECK_EQ(op->phase1(g.t, x.t, gi.t, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG("executor");
        tv_free(&g), tv_free(&x), tv_free(&gi);
    }
}

static void test_tensor_data_null(void) {
    aclTensor *nodata = aclCreateTensor(D23, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, D23, 2, NULL);
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK(nodata != NULL);
    CHECK_EQ(aclnnSiluGetWorkspaceSize(nodata, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self");
    CHECK_EQ(aclnnTanhGetWorkspaceSize(x.t, nodata, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out");
    CHECK_EQ(aclnnSigmoidBackwardGetWorkspaceSize(x.t, nodata, y.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("output");
    aclDestroyTensor(nodata);
    tv_free(&x), tv_free(&y);
}

/* ---- dtypes: 161002 ------------------------------------------------------------------------ */

static void test_unary_dtypes(void) {
    // (integer and bool inputs: test_integer_inputs)
    // (float64 has kernels: tests/api/test_api_float64.c)
    const aclDataType bad[] = {ACL_UINT32, ACL_UINT16, ACL_COMPLEX64};
    for (int k = 0; k < NUNARY; k++)
        for (int b = 0; b < 3; b++)
            for (int arg = 0; arg < 2; arg++) {
                const unary_op *op = &UNARY[k];
                tview x = tv(D23, 2, arg == 0 ? bad[b] : ACL_FLOAT),
                      y = tv(D23, 2, arg == 1 ? bad[b] : ACL_FLOAT);
                uint64_t ws = 0;
                aclOpExecutor *e = NULL;
                CHECKF(op->phase1(x.t, y.t, &ws, &e) == ACLNN_ERR_PARAM_INVALID,
                       "%s arg %d dtype %d", op->name, arg, (int)bad[b]);
                CHECK_MSG(arg == 0 ? op->self_name : op->out_name);
                CHECK_MSG("dtype");
                tv_free(&x), tv_free(&y);
            }
}

// Dtypes aclnn accepts on Ascend and opgrad does not implement get a message saying so.
static void test_dtypes_aclnn_accepts(void) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    tview i32 = tv(D23, 2, ACL_INT32), f = tv(D23, 2, ACL_FLOAT), f64 = tv(D23, 2, ACL_INT64);
    tview c64 = tv(D23, 2, ACL_COMPLEX64), b = tv(D23, 2, ACL_BOOL), u16 = tv(D23, 2, ACL_UINT16);
    CHECK_EQ(aclnnTanhGetWorkspaceSize(i32.t, f.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad supports float32, float16, bfloat16 and float64");
    CHECK_MSG("aclnn also accepts");
    CHECK_MSG("int32");
    CHECK_EQ(aclnnTanhGetWorkspaceSize(b.t, f.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad supports");
    CHECK_EQ(aclnnInplaceSigmoidGetWorkspaceSize(f64.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad supports");
    CHECK_MSG("selfRef");
    CHECK_EQ(aclnnInplaceSigmoidGetWorkspaceSize(c64.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("complex64");
    CHECK_EQ(aclnnSigmoidBackwardGetWorkspaceSize(f.t, f64.t, f.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad supports");
    CHECK_EQ(aclnnTanhBackwardGetWorkspaceSize(f64.t, f.t, f.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput");
    CHECK_MSG("opgrad supports");
    CHECK_EQ(aclnnSoftplusBackwardGetWorkspaceSize(i32.t, f.t, g_beta, g_threshold, f.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad supports");
    // a dtype aclnn does not accept either: the plain rule
    CHECK_EQ(aclnnSiluGetWorkspaceSize(u16.t, u16.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad supports float32, float16, bfloat16 and float64");
    CHECK(strstr(aclGetRecentErrMsg(), "aclnn also accepts") == NULL);
    tv_free(&i32), tv_free(&f), tv_free(&f64), tv_free(&c64), tv_free(&b), tv_free(&u16);
}

static void test_binary_dtypes(void) {
    const aclDataType bad[] = {ACL_UINT32, ACL_UINT16};
    const char *names[3] = {"gradOutput", NULL, "gradInput"};
    for (int k = 0; k < NBINARY; k++)
        for (int b = 0; b < 2; b++)
            for (int arg = 0; arg < 3; arg++) {
                const binary_op *op = &BINARY[k];
                names[1] = op->second;
                tview t[3];
                for (int j = 0; j < 3; j++) t[j] = tv(D23, 2, j == arg ? bad[b] : ACL_FLOAT);
                uint64_t ws = 0;
                aclOpExecutor *e = NULL;
                CHECKF(op->phase1(t[0].t, t[1].t, t[2].t, &ws, &e) == ACLNN_ERR_PARAM_INVALID,
                       "%s: %s with dtype %d accepted", op->name, names[arg], (int)bad[b]);
                CHECK_MSG(names[arg]);
                CHECK_MSG("dtype");
                for (int j = 0; j < 3; j++) tv_free(&t[j]);
            }
}

static void test_unary_out_dtype_and_shape(void) {
    const int64_t d32[] = {3, 2}, d6[] = {6};
    for (int k = 0; k < NUNARY; k++) {
        const unary_op *op = &UNARY[k];
        tview x = tv(D23, 2, ACL_FLOAT), y16 = tv(D23, 2, ACL_FLOAT16), yb = tv(D23, 2, ACL_BF16);
        tview ys = tv(d32, 2, ACL_FLOAT), y1 = tv(d6, 1, ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        if (op->phase1 == sigmoid1) { // ops-nn casts Sigmoid's result to out's dtype
            CHECK_EQ(op->phase1(x.t, y16.t, &ws, &e), ACLNN_SUCCESS);
            aclDestroyAclOpExecutor(e);
        } else {
            CHECK_EQ(op->phase1(x.t, y16.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
            CHECK_MSG(op->out_name);
            CHECK_MSG("dtype");
            CHECK_EQ(op->phase1(x.t, yb.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        }
        CHECK_EQ(op->phase1(x.t, ys.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG(op->out_name);
        CHECK_MSG("shape");
        CHECK_EQ(op->phase1(x.t, y1.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("shape");
        tv_free(&x), tv_free(&y16), tv_free(&yb), tv_free(&ys), tv_free(&y1);
    }
}

/* ---- ranks: 9 rejected, 8 and 0 accepted; empty ------------------------------------------ */

static void test_ranks(void) {
    const int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 1}, d8[8] = {1, 2, 1, 1, 1, 1, 2, 1};
    for (int k = 0; k < NUNARY; k++) {
        const unary_op *op = &UNARY[k];
        tview x9 = tv(d9, 9, ACL_FLOAT), y9 = tv(d9, 9, ACL_FLOAT);
        CHECK(x9.t && y9.t); // the tensor itself may have up to 32 dims
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECK_EQ(op->phase1(x9.t, y9.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("rank");
        CHECK_MSG(op->self_name);
        // 8-d and 0-d run, with the right values
        tview x8 = tv(d8, 8, ACL_FLOAT), y8 = tv(d8, 8, ACL_FLOAT), x0 = tv(NULL, 0, ACL_FLOAT),
              y0 = tv(NULL, 0, ACL_FLOAT);
        for (int i = 0; i < 4; i++) tv_set(&x8, i, XS[i]);
        tv_set(&x0, 0, -0.75);
        CHECK_EQ(run_unary(op, &x8, &y8), ACLNN_SUCCESS);
        CHECK_EQ(run_unary(op, &x0, &y0), ACLNN_SUCCESS);
        for (int i = 0; i < 4; i++)
            CHECKF(close_to(ACL_FLOAT, tv_get(&y8, i), op->ref(XS[i])), "%s 8-d [%d]", op->name, i);
        CHECKF(close_to(ACL_FLOAT, tv_get(&y0, 0), op->ref(-0.75)), "%s 0-d", op->name);
        tv_free(&x9), tv_free(&y9), tv_free(&x8), tv_free(&y8), tv_free(&x0), tv_free(&y0);
    }
    for (int k = 0; k < NBINARY; k++) {
        const binary_op *op = &BINARY[k];
        tview g9 = tv(d9, 9, ACL_FLOAT), x9 = tv(d9, 9, ACL_FLOAT), gi9 = tv(d9, 9, ACL_FLOAT);
        tview g8 = tv(d8, 8, ACL_FLOAT), x8 = tv(d8, 8, ACL_FLOAT), gi8 = tv(d8, 8, ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECK_EQ(op->phase1(g9.t, x9.t, gi9.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("rank");
        CHECK_EQ(op->phase1(g8.t, x8.t, gi9.t, &ws, &e), ACLNN_ERR_PARAM_INVALID); // output only
        CHECK_MSG("gradInput");
        CHECK_MSG("rank");
        CHECK_EQ(op->phase1(g8.t, x9.t, gi8.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG(op->second);
        for (int i = 0; i < 4; i++) tv_set(&g8, i, 1.5), tv_set(&x8, i, XS[i] / 4);
        CHECK_EQ(run_binary(op, &g8, &x8, &gi8), ACLNN_SUCCESS);
        for (int i = 0; i < 4; i++)
            CHECKF(close_to(ACL_FLOAT, tv_get(&gi8, i), 1.5 * op->deriv(XS[i] / 4)), "%s 8-d [%d]",
                   op->name, i);
        // 0-d: all three scalars (the doc's 1-8 dims for Silu/SigmoidBackward is not what the
        // ops-nn code checks: it bounds the maximum rank only)
        tview g0 = tv(NULL, 0, ACL_FLOAT), x0 = tv(NULL, 0, ACL_FLOAT),
              gi0 = tv(NULL, 0, ACL_FLOAT);
        tv_set(&g0, 0, -2.0), tv_set(&x0, 0, 0.25);
        CHECK_EQ(run_binary(op, &g0, &x0, &gi0), ACLNN_SUCCESS);
        CHECKF(close_to(ACL_FLOAT, tv_get(&gi0, 0), -2.0 * op->deriv(0.25)), "%s 0-d", op->name);
        tv_free(&g9), tv_free(&x9), tv_free(&gi9), tv_free(&g8), tv_free(&x8), tv_free(&gi8);
        tv_free(&g0), tv_free(&x0), tv_free(&gi0);
    }
}

static void test_empty_tensors(void) {
    for (int k = 0; k < NUNARY; k++) {
        tview x = tv(D0, 2, ACL_FLOAT16), y = tv(D0, 2, ACL_FLOAT16);
        uint64_t ws = 123;
        aclOpExecutor *e = NULL;
        CHECK_EQ(UNARY[k].phase1(x.t, y.t, &ws, &e), ACLNN_SUCCESS);
        CHECK_EQ(ws, 0);
        CHECK(e != NULL);
        CHECK_EQ(UNARY[k].phase2(NULL, 0, e, NULL), ACLNN_SUCCESS);
        tv_free(&x), tv_free(&y);
    }
    for (int k = 0; k < NBINARY; k++) {
        tview g = tv(D0, 2, ACL_BF16), x = tv(D0, 2, ACL_BF16), gi = tv(D0, 2, ACL_BF16);
        uint64_t ws = 123;
        aclOpExecutor *e = NULL;
        CHECK_EQ(BINARY[k].phase1(g.t, x.t, gi.t, &ws, &e), ACLNN_SUCCESS);
        CHECK_EQ(ws, 0);
        CHECK_EQ(BINARY[k].phase2(NULL, 0, e, NULL), ACLNN_SUCCESS);
        tv_free(&g), tv_free(&x), tv_free(&gi);
    }
    // an empty input still needs a matching output shape
    tview x = tv(D0, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnSiluGetWorkspaceSize(x.t, y.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("shape");
    tv_free(&x), tv_free(&y);
}

/* ---- shapes of the backward: broadcast, promotion, mismatches ----------------------------- */

static void test_backward_broadcast(void) {
    for (int k = 0; k < NBINARY; k++) {
        const binary_op *op = &BINARY[k];
        // gradOutput [1,3] against self [2,3], and self [3] against gradOutput [2,3]
        tview g = tv(D13, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT), gi = tv(D23, 2, ACL_FLOAT);
        tview g2 = tv(D23, 2, ACL_FLOAT), x2 = tv(D3, 1, ACL_FLOAT);
        for (int j = 0; j < 3; j++) tv_set(&g, j, j + 1.0), tv_set(&x2, j, XS[j] / 4);
        for (int i = 0; i < 6; i++) tv_set(&x, i, XS[i] / 4), tv_set(&g2, i, 0.5 * i - 1);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        if (!op->broadcast) {
            CHECK_EQ(op->phase1(g.t, x.t, gi.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
            CHECK_MSG("shape");
            CHECK_MSG("equal");
            CHECK_EQ(op->phase1(g2.t, x2.t, gi.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
            CHECK_MSG("self");
        } else {
            CHECK_EQ(run_binary(op, &g, &x, &gi), ACLNN_SUCCESS);
            for (int i = 0; i < 6; i++)
                CHECKF(close_to(ACL_FLOAT, tv_get(&gi, i), (i % 3 + 1.0) * op->deriv(XS[i] / 4)),
                       "%s broadcast gradOutput [%d]", op->name, i);
            CHECK_EQ(run_binary(op, &g2, &x2, &gi), ACLNN_SUCCESS);
            for (int i = 0; i < 6; i++)
                CHECKF(
                    close_to(ACL_FLOAT, tv_get(&gi, i), (0.5 * i - 1) * op->deriv(XS[i % 3] / 4)),
                    "%s broadcast %s [%d]", op->name, op->second, i);
        }
        tv_free(&g), tv_free(&x), tv_free(&gi), tv_free(&g2), tv_free(&x2);
    }
}

static void test_backward_not_broadcastable(void) {
    const int64_t a[] = {2, 3}, b[] = {2, 4}, c[] = {4, 1, 3}, d[] = {2, 2, 3};
    for (int k = 0; k < NBINARY; k++) {
        const binary_op *op = &BINARY[k];
        tview g = tv(a, 2, ACL_FLOAT), x = tv(b, 2, ACL_FLOAT), gi = tv(a, 2, ACL_FLOAT);
        tview g2 = tv(c, 3, ACL_FLOAT), x2 = tv(d, 3, ACL_FLOAT), gi2 = tv(d, 3, ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECK_EQ(op->phase1(g.t, x.t, gi.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG(op->broadcast ? "broadcast" : "equal");
        CHECK_EQ(op->phase1(g2.t, x2.t, gi2.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG(op->name);
        tv_free(&g), tv_free(&x), tv_free(&gi), tv_free(&g2), tv_free(&x2), tv_free(&gi2);
    }
}

static void test_backward_grad_input_shape(void) {
    const int64_t big[] = {4, 2, 3}, t[] = {3, 2};
    for (int k = 0; k < NBINARY; k++) {
        const binary_op *op = &BINARY[k];
        tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT);
        tview bad[3] = {tv(D13, 2, ACL_FLOAT), tv(big, 3, ACL_FLOAT), tv(t, 2, ACL_FLOAT)};
        for (int j = 0; j < 3; j++) {
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            CHECKF(op->phase1(g.t, x.t, bad[j].t, &ws, &e) == ACLNN_ERR_PARAM_INVALID, "%s case %d",
                   op->name, j);
            CHECK_MSG("gradInput");
            CHECK_MSG("shape");
            tv_free(&bad[j]);
        }
        tv_free(&g), tv_free(&x);
    }
}

// gradOutput and self promote (PyTorch rules); the result is cast to gradInput's dtype.
static void test_backward_promotion(void) {
    // gradOutput, self, gradInput, and the coarser of the promoted type and gradInput's (an
    // fp16 + fp16 backward computes in fp16, then casts to an fp32 gradInput)
    const aclDataType pairs[][4] = {{ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT16, ACL_FLOAT16},
                                    {ACL_FLOAT, ACL_BF16, ACL_BF16, ACL_BF16},
                                    {ACL_BF16, ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT},
                                    {ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT16},
                                    {ACL_BF16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16}};
    for (int k = 0; k < NBINARY; k++)
        for (int p = 0; p < 5; p++) {
            const binary_op *op = &BINARY[k];
            tview g = tv(D23, 2, pairs[p][0]), x = tv(D23, 2, pairs[p][1]),
                  gi = tv(D23, 2, pairs[p][2]);
            for (int i = 0; i < 6; i++) tv_set(&g, i, 1.25 - 0.5 * i), tv_set(&x, i, XS[i] / 4);
            CHECK_EQ(run_binary(op, &g, &x, &gi), ACLNN_SUCCESS);
            for (int i = 0; i < 6; i++) {
                double want = tv_get(&g, i) * op->deriv(tv_get(&x, i));
                CHECKF(close_to(pairs[p][3], tv_get(&gi, i), want), "%s pair %d [%d]: %g vs %g",
                       op->name, p, i, tv_get(&gi, i), want);
            }
            tv_free(&g), tv_free(&x), tv_free(&gi);
        }
}

/* ---- integer and bool inputs: cast to the float type the operator computes in ------------- */

static void iset32(tview *v, int64_t i, int32_t x) { ((int32_t *)v->buf)[i] = x; }

// ops-nn's rules: GeluBackward / GeluBackwardV2 promote an integer input with the other
// (INT32 gradOutput with FLOAT self is FLOAT: the upstream sample relies on it); SoftplusBackward
// casts an integer or bool self, and then both inputs, to FLOAT; Sigmoid casts an integer or
// bool self to out's float dtype. Every other activation input stays float-only.
static void test_integer_inputs(void) {
    const int32_t ints[6] = {-3, -1, 0, 1, 2, 70000};
    tview gi = tv(D23, 2, ACL_INT32), xf = tv(D23, 2, ACL_FLOAT), xi = tv(D23, 2, ACL_INT32);
    tview gf = tv(D23, 2, ACL_FLOAT), out = tv(D23, 2, ACL_FLOAT), out16 = tv(D23, 2, ACL_FLOAT16);
    tview x16 = tv(D23, 2, ACL_FLOAT16), xb = tv(D23, 2, ACL_BOOL);
    for (int i = 0; i < 6; i++) {
        iset32(&gi, i, ints[i]), iset32(&xi, i, ints[5 - i] / (i == 0 ? 10000 : 1));
        tv_set(&xf, i, XS[i]), tv_set(&gf, i, 0.5 * i - 1), tv_set(&x16, i, XS[i]);
        ((uint8_t *)xb.buf)[i] = (uint8_t)(i % 3 == 0 ? 0 : 7 * i); // any non-zero byte is true
    }
    aclnnStatus st;
    double mag;
    // GeluBackward: INT32 gradOutput, FLOAT self -> FLOAT (the tanh form)
    OP_RUN(st, aclnnGeluBackwardGetWorkspaceSize(gi.t, xf.t, out.t, &ws_, &ex_), aclnnGeluBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++)
        CHECKF(close_to(ACL_FLOAT, tv_get(&out, i), ints[i] * og_ref_gelu_tanh_grad(XS[i], &mag)),
               "GeluBackward int32 gradOutput [%d]: %g", i, tv_get(&out, i));
    // GeluBackwardV2 ("none"): INT32 self with FLOAT16 gradOutput -> FLOAT16, self rounded to
    // fp16 first (70000 is inf there)
    tview g16 = tv(D23, 2, ACL_FLOAT16);
    for (int i = 0; i < 6; i++) tv_set(&g16, i, 0.25 * (i + 1));
    OP_RUN(st, aclnnGeluBackwardV2GetWorkspaceSize(g16.t, xi.t, g_none, out16.t, &ws_, &ex_),
           aclnnGeluBackwardV2);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) {
        double xv = (double)((int32_t *)xi.buf)[i];
        double want = xv > 65504 ? 0.25 * (i + 1) : 0.25 * (i + 1) * og_ref_gelu_erf_grad(xv, &mag);
        CHECKF(close_to(ACL_FLOAT16, tv_get(&out16, i), want), "GeluBackwardV2 int32 self [%d]: %g",
               i, tv_get(&out16, i));
    }
    // both integer: the promoted type is INT32, not a float type: 161002
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnGeluBackwardGetWorkspaceSize(gi.t, xi.t, out.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("promote to int32");
    // SoftplusBackward: INT32 self -> FLOAT; an integer gradOutput is refused
    OP_RUN(
        st,
        aclnnSoftplusBackwardGetWorkspaceSize(gf.t, xi.t, g_beta, g_threshold, out.t, &ws_, &ex_),
        aclnnSoftplusBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) {
        double xv = (double)((int32_t *)xi.buf)[i];
        double want = tv_get(&gf, i) * og_ref_softplus_bt_grad(xv, 1.5, 12.0);
        CHECKF(close_to(ACL_FLOAT, tv_get(&out, i), want), "SoftplusBackward int32 self [%d]", i);
    }
    // ... and with an FLOAT16 gradOutput the computation is still FLOAT (ops-nn casts both)
    OP_RUN(
        st,
        aclnnSoftplusBackwardGetWorkspaceSize(g16.t, xb.t, g_beta, g_threshold, out.t, &ws_, &ex_),
        aclnnSoftplusBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) {
        double xv = ((uint8_t *)xb.buf)[i] ? 1.0 : 0.0;
        double want = tv_get(&g16, i) * og_ref_softplus_bt_grad(xv, 1.5, 12.0);
        CHECKF(close_to(ACL_FLOAT, tv_get(&out, i), want), "SoftplusBackward bool self [%d]", i);
    }
    CHECK_EQ(aclnnSoftplusBackwardGetWorkspaceSize(gi.t, xf.t, g_beta, g_threshold, out.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput");
    // Sigmoid: INT32 / BOOL self -> out's dtype; an integer out is refused
    OP_RUN(st, aclnnSigmoidGetWorkspaceSize(xi.t, out16.t, &ws_, &ex_), aclnnSigmoid);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) {
        double xv = (double)((int32_t *)xi.buf)[i];
        CHECKF(close_to(ACL_FLOAT16, tv_get(&out16, i), og_ref_act_sigmoid(xv)),
               "Sigmoid int32 [%d]", i);
    }
    OP_RUN(st, aclnnSigmoidGetWorkspaceSize(xb.t, out.t, &ws_, &ex_), aclnnSigmoid);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++)
        CHECKF(close_to(ACL_FLOAT, tv_get(&out, i),
                        og_ref_act_sigmoid(((uint8_t *)xb.buf)[i] ? 1.0 : 0.0)),
               "Sigmoid bool [%d]", i);
    // a float16 self into a FLOAT out: computed in fp16, then cast (ops-nn allows it)
    OP_RUN(st, aclnnSigmoidGetWorkspaceSize(x16.t, out.t, &ws_, &ex_), aclnnSigmoid);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++)
        CHECKF(close_to(ACL_FLOAT16, tv_get(&out, i), og_ref_act_sigmoid(tv_get(&x16, i))),
               "Sigmoid fp16 -> fp32 [%d]", i);
    CHECK_EQ(aclnnSigmoidGetWorkspaceSize(xi.t, gi.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    CHECK_EQ(aclnnInplaceSigmoidGetWorkspaceSize(xi.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("selfRef");
    // the others stay float-only
    CHECK_EQ(aclnnTanhGetWorkspaceSize(xi.t, out.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("int32");
    CHECK_EQ(aclnnSiluBackwardGetWorkspaceSize(gi.t, xf.t, out.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput");
    tv_free(&gi), tv_free(&xf), tv_free(&xi), tv_free(&gf), tv_free(&out), tv_free(&out16);
    tv_free(&x16), tv_free(&xb), tv_free(&g16);
}

/* ---- layouts: strided views, every dtype ------------------------------------------------- */

// Transposed views (strides {1, 2} over a [3,2] storage) and a padded output with an offset.
static void test_strided_views(void) {
    const int64_t tr[] = {1, 2}, pad[] = {5, 1};
    for (int k = 0; k < NUNARY; k++) {
        const unary_op *op = &UNARY[k];
        tview x = tv_make(D23, 2, ACL_FLOAT, tr, 0), y = tv_make(D23, 2, ACL_FLOAT, pad, 2);
        for (int i = 0; i < 6; i++) tv_set(&x, i, XS[i]); // storage order
        CHECK_EQ(run_unary(op, &x, &y), ACLNN_SUCCESS);
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 3; c++) {
                double xv = tv_get(&x, c * 2 + r), got = tv_get(&y, 2 + r * 5 + c);
                CHECKF(close_to(ACL_FLOAT, got, op->ref(xv)), "%s strided (%d,%d)", op->name, r, c);
            }
        tv_free(&x), tv_free(&y);
    }
    for (int k = 0; k < NBINARY; k++) {
        const binary_op *op = &BINARY[k];
        tview g = tv_make(D23, 2, ACL_FLOAT16, pad, 1), x = tv_make(D23, 2, ACL_FLOAT16, tr, 0);
        tview gi = tv_make(D23, 2, ACL_FLOAT16, tr, 0);
        for (int i = 0; i < 6; i++) tv_set(&x, i, XS[i] / 4);
        for (int i = 0; i < 12; i++) tv_set(&g, i, 0.25 * i - 1);
        CHECK_EQ(run_binary(op, &g, &x, &gi), ACLNN_SUCCESS);
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 3; c++) {
                double gv = tv_get(&g, 1 + r * 5 + c), xv = tv_get(&x, c * 2 + r),
                       got = tv_get(&gi, c * 2 + r);
                CHECKF(close_to(ACL_FLOAT16, got, gv * op->deriv(xv)), "%s strided (%d,%d)",
                       op->name, r, c);
            }
        tv_free(&g), tv_free(&x), tv_free(&gi);
    }
}

static void test_values_every_dtype(void) {
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < NUNARY; k++) {
            const unary_op *op = &UNARY[k];
            tview x = tv(D23, 2, dts[d]), y = tv(D23, 2, dts[d]);
            for (int i = 0; i < 6; i++) tv_set(&x, i, XS[i]);
            CHECK_EQ(run_unary(op, &x, &y), ACLNN_SUCCESS);
            for (int i = 0; i < 6; i++)
                CHECKF(close_to(dts[d], tv_get(&y, i), op->ref(tv_get(&x, i))), "%s %d [%d]",
                       op->name, d, i);
            tv_free(&x), tv_free(&y);
        }
}

/* ---- in-place variants --------------------------------------------------------------------- */

static void test_inplace_variants(void) {
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int d = 0; d < 3; d++)
        for (int which = 0; which < 2; which++) {
            tview x = tv(D23, 2, dts[d]), y = tv(D23, 2, dts[d]);
            for (int i = 0; i < 6; i++) tv_set(&x, i, XS[i]);
            const unary_op *op = which ? &UNARY[5] : &UNARY[4]; // tanh, sigmoid
            CHECK_EQ(run_unary(op, &x, &y), ACLNN_SUCCESS);
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            aclnnStatus st = which ? aclnnInplaceTanhGetWorkspaceSize(x.t, &ws, &e)
                                   : aclnnInplaceSigmoidGetWorkspaceSize(x.t, &ws, &e);
            CHECK_EQ(test_run(st, ws, e, which ? aclnnInplaceTanh : aclnnInplaceSigmoid, NULL),
                     ACLNN_SUCCESS);
            CHECKF(memcmp(x.buf, y.buf, 6 * aclDataTypeSize(dts[d])) == 0,
                   "%s in place differs (dtype %d)", op->name, (int)dts[d]);
            tv_free(&x), tv_free(&y);
        }
    // an in-place call on a strided view and a rank-9 / wrong-dtype selfRef
    const int64_t tr[] = {1, 2}, d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 1};
    tview x = tv_make(D23, 2, ACL_FLOAT, tr, 0), x9 = tv(d9, 9, ACL_FLOAT),
          xi = tv(D23, 2, ACL_INT32);
    for (int i = 0; i < 6; i++) tv_set(&x, i, XS[i]);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnInplaceSigmoidGetWorkspaceSize(x.t, &ws, &e);
    CHECK_EQ(test_run(st, ws, e, aclnnInplaceSigmoid, NULL), ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++)
        CHECK(close_to(ACL_FLOAT, tv_get(&x, i), og_ref_act_sigmoid(XS[i])));
    CHECK_EQ(aclnnInplaceTanhGetWorkspaceSize(x9.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank");
    CHECK_EQ(aclnnInplaceTanhGetWorkspaceSize(xi.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("selfRef");
    CHECK_MSG("dtype");
    tv_free(&x), tv_free(&x9), tv_free(&xi);
}

// gradInput over gradOutput's or self's memory (element for element) is allowed.
static void test_backward_in_place(void) {
    for (int k = 0; k < NBINARY; k++) {
        const binary_op *op = &BINARY[k];
        for (int alias = 0; alias < 2; alias++) {
            tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT);
            double gv[6], xv[6];
            for (int i = 0; i < 6; i++) {
                tv_set(&g, i, gv[i] = 1.5 - 0.25 * i);
                tv_set(&x, i, xv[i] = XS[i] / 4);
            }
            tview *dst = alias ? &x : &g;
            CHECK_EQ(run_binary(op, &g, &x, dst), ACLNN_SUCCESS);
            for (int i = 0; i < 6; i++)
                CHECKF(close_to(ACL_FLOAT, tv_get(dst, i), gv[i] * op->deriv(xv[i])),
                       "%s alias %d [%d]", op->name, alias, i);
            tv_free(&g), tv_free(&x);
        }
    }
}

/* ---- attributes ---------------------------------------------------------------------------- */

static void test_gelu_v2_approximate(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT), y1 = tv(D23, 2, ACL_FLOAT);
    for (int i = 0; i < 6; i++) tv_set(&x, i, XS[i]);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    const int64_t bad[] = {2, -1, 100, INT64_MIN};
    for (int b = 0; b < 4; b++) {
        CHECK_EQ(aclnnGeluV2GetWorkspaceSize(x.t, bad[b], y.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("approximate");
        CHECK_MSG("aclnnGeluV2");
    }
    // NULL before the attribute
    CHECK_EQ(aclnnGeluV2GetWorkspaceSize(NULL, 2, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    // 1 = tanh gives aclnnGelu's bits; 0 = none is the erf form
    tview yg = tv(D23, 2, ACL_FLOAT);
    CHECK_EQ(run_unary(&UNARY[0], &x, &yg), ACLNN_SUCCESS);
    CHECK_EQ(run_unary(&UNARY[2], &x, &y1), ACLNN_SUCCESS);
    CHECK(memcmp(yg.buf, y1.buf, 24) == 0);
    CHECK_EQ(run_unary(&UNARY[1], &x, &y), ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) CHECK(close_to(ACL_FLOAT, tv_get(&y, i), og_ref_gelu_erf(XS[i])));
    CHECK(memcmp(yg.buf, y.buf, 24) != 0); // the two forms differ (by up to ~1e-3)
    tv_free(&x), tv_free(&y), tv_free(&y1), tv_free(&yg);
}

static void test_gelu_backward_v2_approximate(void) {
    tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT), gi = tv(D23, 2, ACL_FLOAT);
    tview gt = tv(D23, 2, ACL_FLOAT);
    for (int i = 0; i < 6; i++) tv_set(&g, i, 1.0 + i), tv_set(&x, i, XS[i] / 2);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnGeluBackwardV2GetWorkspaceSize(g.t, x.t, NULL, gi.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("approximate");
    CHECK_MSG("NULL");
    static char exact[] = "exact", upper[] = "TANH", empty[] = "", longer[] = "tanh ";
    char *bad[] = {exact, upper, empty, longer};
    for (int b = 0; b < 4; b++) {
        CHECK_EQ(aclnnGeluBackwardV2GetWorkspaceSize(g.t, x.t, bad[b], gi.t, &ws, &e),
                 ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("approximate");
        CHECK_MSG("\"none\" or \"tanh\"");
    }
    // "tanh" gives aclnnGeluBackward's bits; "none" the erf form's derivative
    CHECK_EQ(run_binary(&BINARY[0], &g, &x, &gt), ACLNN_SUCCESS);
    CHECK_EQ(run_binary(&BINARY[2], &g, &x, &gi), ACLNN_SUCCESS);
    CHECK(memcmp(gt.buf, gi.buf, 24) == 0);
    CHECK_EQ(run_binary(&BINARY[1], &g, &x, &gi), ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++)
        CHECK(close_to(ACL_FLOAT, tv_get(&gi, i), (1.0 + i) * d_gelu_erf(XS[i] / 2)));
    tv_free(&g), tv_free(&x), tv_free(&gi), tv_free(&gt);
}

static void test_softplus_scalars(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT), g = tv(D23, 2, ACL_FLOAT),
          gi = tv(D23, 2, ACL_FLOAT);
    const double xs[6] = {-3.0, -0.5, 0.0, 2.0, 9.9, 10.1};
    for (int i = 0; i < 6; i++) tv_set(&x, i, xs[i]), tv_set(&g, i, 2.0);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    // NULL scalars: 161001, forward and backward
    CHECK_EQ(aclnnSoftplusGetWorkspaceSize(x.t, NULL, g_threshold, y.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("beta");
    CHECK_EQ(aclnnSoftplusGetWorkspaceSize(x.t, g_beta, NULL, y.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("threshold");
    CHECK_EQ(aclnnSoftplusBackwardGetWorkspaceSize(g.t, x.t, NULL, g_threshold, gi.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("beta");
    CHECK_EQ(aclnnSoftplusBackwardGetWorkspaceSize(g.t, x.t, g_beta, NULL, gi.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("threshold");
    // a complex scalar cannot be converted to float: 161002
    float cv[2] = {1.0f, 0.0f};
    aclScalar *cs = aclCreateScalar(cv, ACL_COMPLEX64);
    if (cs) {
        CHECK_EQ(aclnnSoftplusGetWorkspaceSize(x.t, cs, g_threshold, y.t, &ws, &e),
                 ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("beta");
        CHECK_MSG("scalar");
        CHECK_EQ(aclnnSoftplusBackwardGetWorkspaceSize(g.t, x.t, g_beta, cs, gi.t, &ws, &e),
                 ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("threshold");
        aclDestroyScalar(cs);
    }
    // beta = 2 (int64), threshold = 20 (double): the threshold at x = 10
    int64_t bi = 2;
    double td = 20.0;
    uint16_t bh = 0x4000; // 2.0 in fp16
    aclScalar *beta_i = aclCreateScalar(&bi, ACL_INT64), *thr_d = aclCreateScalar(&td, ACL_DOUBLE);
    aclScalar *beta_h = aclCreateScalar(&bh, ACL_FLOAT16);
    aclScalar *betas[2] = {beta_i, beta_h};
    for (int b = 0; b < 2; b++) {
        aclnnStatus st = aclnnSoftplusGetWorkspaceSize(x.t, betas[b], thr_d, y.t, &ws, &e);
        CHECK_EQ(test_run(st, ws, e, aclnnSoftplus, NULL), ACLNN_SUCCESS);
        for (int i = 0; i < 6; i++)
            CHECKF(close_to(ACL_FLOAT, tv_get(&y, i), og_ref_softplus_bt(xs[i], 2.0, 20.0)),
                   "softplus [%d]", i);
        CHECK(tv_get(&y, 5) == (double)(float)10.1); // above the threshold: x itself
        st = aclnnSoftplusBackwardGetWorkspaceSize(g.t, x.t, betas[b], thr_d, gi.t, &ws, &e);
        CHECK_EQ(test_run(st, ws, e, aclnnSoftplusBackward, NULL), ACLNN_SUCCESS);
        for (int i = 0; i < 6; i++)
            CHECKF(close_to(ACL_FLOAT, tv_get(&gi, i),
                            2.0 * og_ref_softplus_bt_grad(xs[i], 2.0, 20.0)),
                   "softplus' [%d]", i);
        CHECK(tv_get(&gi, 5) == 2.0); // above the threshold: gradOutput itself
    }
    aclDestroyScalar(beta_i), aclDestroyScalar(thr_d), aclDestroyScalar(beta_h);
    // the scalars are read at phase 1: destroying them before phase 2 changes nothing
    float b15 = 1.5f, t12 = 12.0f;
    aclScalar *b = aclCreateScalar(&b15, ACL_FLOAT), *t = aclCreateScalar(&t12, ACL_FLOAT);
    aclnnStatus st = aclnnSoftplusGetWorkspaceSize(x.t, b, t, y.t, &ws, &e);
    aclDestroyScalar(b), aclDestroyScalar(t);
    CHECK_EQ(test_run(st, ws, e, aclnnSoftplus, NULL), ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++)
        CHECK(close_to(ACL_FLOAT, tv_get(&y, i), og_ref_softplus_bt(xs[i], 1.5, 12.0)));
    tv_free(&x), tv_free(&y), tv_free(&g), tv_free(&gi);
}

/* ---- executors ----------------------------------------------------------------------------- */

static void test_executor_of_another_operator(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnGeluV2GetWorkspaceSize(x.t, 1, y.t, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnGelu(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID); // same kernel, other operator
    CHECK_MSG("aclnnGeluV2");
    CHECK_EQ(aclnnSigmoid(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnGeluV2(NULL, ws, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclnnGeluV2(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID); // consumed
    CHECK_MSG("consumed");
    CHECK_EQ(aclnnSiluBackward(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    tv_free(&x), tv_free(&y);
}

// A repeatable executor re-run on new data through aclSetInputTensorAddr.
static void test_repeatable_executor(void) {
    tview x = tv(D23, 2, ACL_FLOAT), x2 = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    for (int i = 0; i < 6; i++) tv_set(&x, i, XS[i]), tv_set(&x2, i, -XS[i]);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnSiluGetWorkspaceSize(x.t, y.t, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnSilu(NULL, ws, e, NULL), ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) CHECK(close_to(ACL_FLOAT, tv_get(&y, i), og_ref_silu(XS[i])));
    CHECK_EQ(aclSetInputTensorAddr(e, 0, x.t, x2.buf), ACLNN_SUCCESS);
    CHECK_EQ(aclnnSilu(NULL, ws, e, NULL), ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) CHECK(close_to(ACL_FLOAT, tv_get(&y, i), og_ref_silu(-XS[i])));
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    tv_free(&x), tv_free(&x2), tv_free(&y);
}

// Phase 2 on a real stream: queued, run in order, results visible after synchronizing.
static void test_stream_launch(void) {
    aclrtStream stream = NULL;
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    const int64_t d[] = {1000};
    tview x = tv(d, 1, ACL_BF16), y = tv(d, 1, ACL_BF16), g = tv(d, 1, ACL_FLOAT),
          gi = tv(d, 1, ACL_BF16);
    for (int i = 0; i < 1000; i++) tv_set(&x, i, -6.0 + 0.012 * i), tv_set(&g, i, 0.5);
    uint64_t ws1 = 0, ws2 = 0;
    aclOpExecutor *e1 = NULL, *e2 = NULL;
    void *w1 = NULL, *w2 = NULL; // workspaces live until the stream is synchronized
    CHECK_EQ(aclnnTanhGetWorkspaceSize(x.t, y.t, &ws1, &e1), ACLNN_SUCCESS);
    CHECK_EQ(aclnnTanhBackwardGetWorkspaceSize(g.t, y.t, gi.t, &ws2, &e2),
             ACLNN_SUCCESS); // reads y
    if (ws1) CHECK_EQ(aclrtMalloc(&w1, ws1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    if (ws2) CHECK_EQ(aclrtMalloc(&w2, ws2, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    CHECK_EQ(aclnnTanh(w1, ws1, e1, stream), ACLNN_SUCCESS);
    CHECK_EQ(aclnnTanhBackward(w2, ws2, e2, stream), ACLNN_SUCCESS); // runs after the forward
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
        double yv = tv_get(&y, i);
        bad += !close_to(ACL_BF16, yv, tanh(tv_get(&x, i)));
        bad += !close_to(ACL_BF16, tv_get(&gi, i), 0.5 * (1 - yv) * (1 + yv));
    }
    CHECKF(bad == 0, "%d results wrong after the stream ran", bad);
    if (w1) aclrtFree(w1);
    if (w2) aclrtFree(w2);
    CHECK_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    tv_free(&x), tv_free(&y), tv_free(&g), tv_free(&gi);
}

int main(void) {
    float b = 1.5f, t = 12.0f;
    g_beta = aclCreateScalar(&b, ACL_FLOAT);
    g_threshold = aclCreateScalar(&t, ACL_FLOAT);
    RUN(test_unary_null_arguments);
    RUN(test_inplace_null_arguments);
    RUN(test_binary_null_arguments);
    RUN(test_tensor_data_null);
    RUN(test_unary_dtypes);
    RUN(test_dtypes_aclnn_accepts);
    RUN(test_binary_dtypes);
    RUN(test_unary_out_dtype_and_shape);
    RUN(test_ranks);
    RUN(test_empty_tensors);
    RUN(test_backward_broadcast);
    RUN(test_backward_not_broadcastable);
    RUN(test_backward_grad_input_shape);
    RUN(test_backward_promotion);
    RUN(test_integer_inputs);
    RUN(test_strided_views);
    RUN(test_values_every_dtype);
    RUN(test_inplace_variants);
    RUN(test_backward_in_place);
    RUN(test_gelu_v2_approximate);
    RUN(test_gelu_backward_v2_approximate);
    RUN(test_softplus_scalars);
    RUN(test_executor_of_another_operator);
    RUN(test_repeatable_executor);
    RUN(test_stream_launch);
    aclDestroyScalar(g_beta);
    aclDestroyScalar(g_threshold);
    return test_summary();
}
