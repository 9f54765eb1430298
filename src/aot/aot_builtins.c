/* MindSpore "aot" entry points of the built-in operators (docs/aot.md), exported from libopgrad so
 * that MindSpore can call them directly:
 *
 *   ops.Custom(func="/abs/libopgrad.so:opgrad_Mish", func_type="aot", ...)
 *
 * Every entry has the aot signature of include/opgrad/custom_op.h. A forward takes its inputs
 * then its output; a backward follows the bprop convention: the forward inputs, the forward
 * output y, its gradient dy, then one gradient per forward input (each with its input's shape and
 * dtype). Tensors are dense row-major, dtype "float32" (or MindSpore's "float"), "float16" or
 * "bfloat16".
 *
 * Table-driven: one descriptor per entry point (name, forward inputs, forward or backward, the
 * rule for the forward output's shape, and either one aclnn operator as a phase-1 thunk plus its
 * phase 2, or a function for the backwards that take several aclnn calls). One shared function
 * validates the arguments, wraps the params in contiguous aclTensors (on the stack, through
 * aclInitTensor), runs the two-phase aclnn API synchronously (NULL stream, workspace from
 * aclrtMalloc) and returns 0 or the aclnn status, with a message for aclGetRecentErrMsg that
 * starts with the entry point's name. Backwards that run an aclnn backward operator are logged by
 * the gradient monitor in the executor; Add/Mul backward (plain aclnn forwards and ReduceSum) log
 * their gradients themselves. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_elu.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "aclnnop/aclnn_fused_add_scale.h"
#include "aclnnop/aclnn_fused_add_scale_backward.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_hardswish.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_softplus.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "opgrad/custom_op.h"
#include "runtime/error.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

#define AOT_MAX_IN 3
#define AOT_MAX_PARAMS (2 * AOT_MAX_IN + 2)

/* ---- the operators' fixed attributes --------------------------------------------------------- */

static const aclScalar S_ZERO = {.dtype = ACL_FLOAT, .v = {.f32 = 0.0f}};
static const aclScalar S_ONE = {.dtype = ACL_FLOAT, .v = {.f32 = 1.0f}};
static const aclScalar S_TWENTY = {.dtype = ACL_FLOAT, .v = {.f32 = 20.0f}}; // softplus threshold
static const aclScalar S_SLOPE = {.dtype = ACL_FLOAT, .v = {.f32 = 0.01f}};  // leaky relu

/* ---- descriptors ------------------------------------------------------------------------------
 */

typedef enum { OUT_LIKE_X0, OUT_BROADCAST } aot_out_rule;

struct aot_desc;
/// Phase 1 of the operator over the params' tensors t (layout of the entry point).
typedef aclnnStatus (*aot_plan_fn)(aclTensor *t, uint64_t *ws, aclOpExecutor **ex);
typedef aclnnStatus (*aot_exec_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);
/// A backward made of several aclnn calls.
typedef aclnnStatus (*aot_multi_fn)(const struct aot_desc *d, aclTensor *t);

typedef struct aot_desc {
    const char *name;      // exported symbol, e.g. "opgrad_MishBackward"
    int nin;               // forward inputs
    const char *const *in; // their names (params of the entry point; gradients are "d" + name)
    bool backward;
    aot_out_rule out;   // the forward output's shape: x0's, or the inputs' broadcast
    aot_plan_fn plan;   // one aclnn operator: phase 1 ...
    aot_exec_fn exec;   // ... and phase 2
    aot_multi_fn multi; // or several calls
} aot_desc;

static const char *const IN_X[] = {"x"};
static const char *const IN_AB[] = {"a", "b"};
static const char *const IN_FAS[] = {"x", "bias", "scale"};

/* Phase-1 thunks. Forward layout: t[0..nin) inputs, t[nin] y. Backward layout: t[0..nin) inputs,
 * t[nin] y, t[nin + 1] dy, t[nin + 2 + i] the gradient of input i. */
#define T(i) (&t[i])

static aclnnStatus p_mish(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnMishGetWorkspaceSize(T(0), T(1), w, e);
}
static aclnnStatus p_mish_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnMishBackwardGetWorkspaceSize(T(2), T(0), T(3), w, e);
}
static aclnnStatus p_gelu(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnGeluGetWorkspaceSize(T(0), T(1), w, e);
}
static aclnnStatus p_gelu_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnGeluBackwardGetWorkspaceSize(T(2), T(0), T(3), w, e);
}
static aclnnStatus p_silu(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnSiluGetWorkspaceSize(T(0), T(1), w, e);
}
static aclnnStatus p_silu_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnSiluBackwardGetWorkspaceSize(T(2), T(0), T(3), w, e);
}
static aclnnStatus p_sigmoid(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnSigmoidGetWorkspaceSize(T(0), T(1), w, e);
}
static aclnnStatus p_sigmoid_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) { // from y
    return aclnnSigmoidBackwardGetWorkspaceSize(T(2), T(1), T(3), w, e);
}
static aclnnStatus p_tanh(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnTanhGetWorkspaceSize(T(0), T(1), w, e);
}
static aclnnStatus p_tanh_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) { // from y
    return aclnnTanhBackwardGetWorkspaceSize(T(2), T(1), T(3), w, e);
}
static aclnnStatus p_softplus(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnSoftplusGetWorkspaceSize(T(0), &S_ONE, &S_TWENTY, T(1), w, e);
}
static aclnnStatus p_softplus_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnSoftplusBackwardGetWorkspaceSize(T(2), T(0), &S_ONE, &S_TWENTY, T(3), w, e);
}
static aclnnStatus p_relu(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnReluGetWorkspaceSize(T(0), T(1), w, e);
}
static aclnnStatus p_relu_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnThresholdBackwardGetWorkspaceSize(T(2), T(0), &S_ZERO, T(3), w, e);
}
static aclnnStatus p_leaky_relu(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnLeakyReluGetWorkspaceSize(T(0), &S_SLOPE, T(1), w, e);
}
static aclnnStatus p_leaky_relu_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnLeakyReluBackwardGetWorkspaceSize(T(2), T(0), &S_SLOPE, false, T(3), w, e);
}
static aclnnStatus p_hardswish(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnHardswishGetWorkspaceSize(T(0), T(1), w, e);
}
static aclnnStatus p_hardswish_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnHardswishBackwardGetWorkspaceSize(T(2), T(0), T(3), w, e);
}
static aclnnStatus p_elu(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnEluGetWorkspaceSize(T(0), &S_ONE, &S_ONE, &S_ONE, T(1), w, e);
}
static aclnnStatus p_elu_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnEluBackwardGetWorkspaceSize(T(2), &S_ONE, &S_ONE, &S_ONE, false, T(0), T(3), w, e);
}
static aclnnStatus p_add(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnAddGetWorkspaceSize(T(0), T(1), &S_ONE, T(2), w, e);
}
static aclnnStatus p_mul(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnMulGetWorkspaceSize(T(0), T(1), T(2), w, e);
}
static aclnnStatus p_fused(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    return aclnnFusedAddScaleGetWorkspaceSize(T(0), T(1), T(2), T(3), w, e);
}
static aclnnStatus p_fused_bwd(aclTensor *t, uint64_t *w, aclOpExecutor **e) {
    // x, bias, scale, y, dy, dx, dbias, dscale
    return aclnnFusedAddScaleBackwardGetWorkspaceSize(T(4), T(0), T(1), T(2), T(5), T(6), T(7), w,
                                                      e);
}

static aclnnStatus add_bwd(const aot_desc *d, aclTensor *t);
static aclnnStatus mul_bwd(const aot_desc *d, aclTensor *t);

#define FWD1(sym, plan, exec)                                                                      \
    { #sym, 1, IN_X, false, OUT_LIKE_X0, plan, exec, NULL }
#define BWD1(sym, plan, exec)                                                                      \
    { #sym, 1, IN_X, true, OUT_LIKE_X0, plan, exec, NULL }

enum {
    MISH,
    MISH_BWD,
    GELU,
    GELU_BWD,
    SILU,
    SILU_BWD,
    SIGMOID,
    SIGMOID_BWD,
    TANH,
    TANH_BWD,
    SOFTPLUS,
    SOFTPLUS_BWD,
    RELU,
    RELU_BWD,
    LEAKY_RELU,
    LEAKY_RELU_BWD,
    HARDSWISH,
    HARDSWISH_BWD,
    ELU,
    ELU_BWD,
    ADD,
    ADD_BWD,
    MUL,
    MUL_BWD,
    FUSED,
    FUSED_BWD,
    AOT_COUNT
};

static const aot_desc AOT[AOT_COUNT] = {
    [MISH] = FWD1(opgrad_Mish, p_mish, aclnnMish),
    [MISH_BWD] = BWD1(opgrad_MishBackward, p_mish_bwd, aclnnMishBackward),
    [GELU] = FWD1(opgrad_Gelu, p_gelu, aclnnGelu),
    [GELU_BWD] = BWD1(opgrad_GeluBackward, p_gelu_bwd, aclnnGeluBackward),
    [SILU] = FWD1(opgrad_Silu, p_silu, aclnnSilu),
    [SILU_BWD] = BWD1(opgrad_SiluBackward, p_silu_bwd, aclnnSiluBackward),
    [SIGMOID] = FWD1(opgrad_Sigmoid, p_sigmoid, aclnnSigmoid),
    [SIGMOID_BWD] = BWD1(opgrad_SigmoidBackward, p_sigmoid_bwd, aclnnSigmoidBackward),
    [TANH] = FWD1(opgrad_Tanh, p_tanh, aclnnTanh),
    [TANH_BWD] = BWD1(opgrad_TanhBackward, p_tanh_bwd, aclnnTanhBackward),
    [SOFTPLUS] = FWD1(opgrad_Softplus, p_softplus, aclnnSoftplus),
    [SOFTPLUS_BWD] = BWD1(opgrad_SoftplusBackward, p_softplus_bwd, aclnnSoftplusBackward),
    [RELU] = FWD1(opgrad_Relu, p_relu, aclnnRelu),
    [RELU_BWD] = BWD1(opgrad_ReluBackward, p_relu_bwd, aclnnThresholdBackward),
    [LEAKY_RELU] = FWD1(opgrad_LeakyRelu, p_leaky_relu, aclnnLeakyRelu),
    [LEAKY_RELU_BWD] = BWD1(opgrad_LeakyReluBackward, p_leaky_relu_bwd, aclnnLeakyReluBackward),
    [HARDSWISH] = FWD1(opgrad_Hardswish, p_hardswish, aclnnHardswish),
    [HARDSWISH_BWD] = BWD1(opgrad_HardswishBackward, p_hardswish_bwd, aclnnHardswishBackward),
    [ELU] = FWD1(opgrad_Elu, p_elu, aclnnElu),
    [ELU_BWD] = BWD1(opgrad_EluBackward, p_elu_bwd, aclnnEluBackward),
    [ADD] = {"opgrad_Add", 2, IN_AB, false, OUT_BROADCAST, p_add, aclnnAdd, NULL},
    [ADD_BWD] = {"opgrad_AddBackward", 2, IN_AB, true, OUT_BROADCAST, NULL, NULL, add_bwd},
    [MUL] = {"opgrad_Mul", 2, IN_AB, false, OUT_BROADCAST, p_mul, aclnnMul, NULL},
    [MUL_BWD] = {"opgrad_MulBackward", 2, IN_AB, true, OUT_BROADCAST, NULL, NULL, mul_bwd},
    [FUSED] = {"opgrad_FusedAddScale", 3, IN_FAS, false, OUT_LIKE_X0, p_fused, aclnnFusedAddScale,
               NULL},
    [FUSED_BWD] = {"opgrad_FusedAddScaleBackward", 3, IN_FAS, true, OUT_LIKE_X0, p_fused_bwd,
                   aclnnFusedAddScaleBackward, NULL},
};

/* ---- shared marshalling ---------------------------------------------------------------------- */

static int nparams_of(const aot_desc *d) { return d->backward ? 2 * d->nin + 2 : d->nin + 1; }

// Name of param i in the entry point's layout ("x", "y", "dy", "dx", ...).
static const char *param_name(const aot_desc *d, int i, char *buf, size_t cap) {
    if (i < d->nin) return d->in[i];
    if (i == d->nin) return "y";
    if (i == d->nin + 1) return "dy";
    snprintf(buf, cap, "d%s", d->in[i - d->nin - 2]);
    return buf;
}

// "x, y, dy, dx" for messages.
static const char *layout(const aot_desc *d, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < nparams_of(d) && len < cap; i++) {
        char nb[32];
        int n =
            snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", param_name(d, i, nb, sizeof nb));
        if (n < 0) break;
        len += (size_t)n;
    }
    return buf;
}

static aclDataType parse_dtype(const char *s) {
    if (opgrad_aot_dtype_is(s, "float32")) return ACL_FLOAT;
    if (opgrad_aot_dtype_is(s, "float16")) return ACL_FLOAT16;
    if (opgrad_aot_dtype_is(s, "bfloat16")) return ACL_BF16;
    return ACL_DT_UNDEFINED;
}

static bool same_shape(const aclTensor *a, const aclTensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

// Prefixes the recent aclnn message with the entry point's name after a failed aclnn call.
static aclnnStatus fail_from_aclnn(const aot_desc *d, aclnnStatus st) {
    char msg[900];
    snprintf(msg, sizeof msg, "%s", aclGetRecentErrMsg());
    return og_fail(st, "%s: %s", d->name, msg);
}

// Phase 2 of an executor planned with status st: workspace, synchronous run, cleanup.
static aclnnStatus finish(const aot_desc *d, aclnnStatus st, uint64_t ws, aclOpExecutor *ex,
                          aot_exec_fn exec) {
    if (st != ACLNN_SUCCESS) return fail_from_aclnn(d, st);
    void *w = NULL;
    if (ws > 0 && aclrtMalloc(&w, (size_t)ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        aclDestroyAclOpExecutor(ex);
        return og_fail(ACLNN_ERR_INNER, "%s: out of memory allocating a %llu-byte workspace",
                       d->name, (unsigned long long)ws);
    }
    st = exec(w, ws, ex, NULL);
    if (w) aclrtFree(w);
    return st == ACLNN_SUCCESS ? st : fail_from_aclnn(d, st);
}

// A contiguous tensor of `ndim` dims over data (not owned).
static aclnnStatus init_dense(const aot_desc *d, aclTensor *t, const int64_t *dims, int ndim,
                              aclDataType dt, void *data) {
    aclnnStatus st = aclInitTensor(t, dims, (uint64_t)ndim, dt, NULL, 0, ACL_FORMAT_ND, dims,
                                   (uint64_t)ndim, data);
    return st == ACLNN_SUCCESS ? st : fail_from_aclnn(d, st);
}

/* Gradient reduction for the backwards without an aclnn operator: sums src (the forward output's
 * shape) down to dst's shape (an input that broadcast to it) with aclnnReduceSum over the
 * broadcast dims (the leading dims dst lacks and the dims where dst has 1), in dst's dtype;
 * without broadcast dims it is a copy (converted to dst's dtype, rounding to nearest even). */
static aclnnStatus reduce_to(const aot_desc *d, const aclTensor *src, aclTensor *dst) {
    int lead = src->ndim - dst->ndim;
    int64_t dims[OG_MAX_DIMS], kept[OG_MAX_DIMS];
    int nd = 0, nk = 0;
    for (int k = 0; k < src->ndim; k++) {
        if (k < lead || (dst->dims[k - lead] == 1 && src->dims[k] != 1))
            dims[nd++] = k;
        else
            kept[nk++] = src->dims[k];
    }
    if (nd == 0) { // same shape: copy / convert
        size_t es = aclDataTypeSize(src->dtype), ed = aclDataTypeSize(dst->dtype);
        const char *s = og_tensor_first(src);
        char *o = og_tensor_first(dst);
        if (src->dtype == dst->dtype) {
            if (dst->numel > 0) memcpy(o, s, (size_t)dst->numel * es);
            return ACLNN_SUCCESS;
        }
        for (int64_t i = 0; i < dst->numel; i++) {
            float v;
            uint16_t h;
            if (src->dtype == ACL_FLOAT)
                memcpy(&v, s + i * (int64_t)es, sizeof v);
            else {
                memcpy(&h, s + i * (int64_t)es, sizeof h);
                v = src->dtype == ACL_FLOAT16 ? og_f16_to_f32(h) : og_bf16_to_f32(h);
            }
            if (dst->dtype == ACL_FLOAT) {
                memcpy(o + i * (int64_t)ed, &v, sizeof v);
            } else {
                h = dst->dtype == ACL_FLOAT16 ? og_f32_to_f16(v) : og_f32_to_bf16(v);
                memcpy(o + i * (int64_t)ed, &h, sizeof h);
            }
        }
        return ACLNN_SUCCESS;
    }
    // The reduced shape (no keepDims) has dst's elements in dst's order: a view of dst's memory.
    aclTensor out;
    aclnnStatus st = init_dense(d, &out, kept, nk, dst->dtype, og_tensor_first(dst));
    if (st != ACLNN_SUCCESS) return st;
    aclIntArray arr = {.size = (uint64_t)nd, .values = dims};
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    st = aclnnReduceSumGetWorkspaceSize(src, &arr, false, dst->dtype, &out, &ws, &ex);
    return finish(d, st, ws, ex, aclnnReduceSum);
}

// Gradient i of a two-input backward (t: a, b, y, dy, da, db) through the monitor.
static void log_grads(const aot_desc *d, aclTensor *t) {
    if (!opgrad_debug_grads_enabled()) return;
    for (int i = 0; i < d->nin; i++) {
        const aclTensor *g = &t[d->nin + 2 + i];
        char nb[32];
        opgrad_debug_grads_log(d->name, i, param_name(d, d->nin + 2 + i, nb, sizeof nb),
                               og_dtype_name(g->dtype), g->ndim, g->dims, og_tensor_first(g));
    }
}

// y = a + b (alpha 1): da = dy summed to a's shape, db = dy summed to b's shape.
static aclnnStatus add_bwd(const aot_desc *d, aclTensor *t) {
    for (int i = 0; i < 2; i++) {
        aclnnStatus st = reduce_to(d, &t[3], &t[4 + i]);
        if (st != ACLNN_SUCCESS) return st;
    }
    log_grads(d, t);
    return ACLNN_SUCCESS;
}

// y = a * b: da = dy * b summed to a's shape, db = dy * a summed to b's shape. The product is
// formed by aclnnMul in the gradient's dtype (directly into the gradient when nothing is summed).
static aclnnStatus mul_bwd(const aot_desc *d, aclTensor *t) {
    const aclTensor *y = &t[2], *dy = &t[3];
    for (int i = 0; i < 2; i++) {
        aclTensor *g = &t[4 + i];
        const aclTensor *other = &t[1 - i];
        bool direct = same_shape(g, y);
        void *buf = NULL;
        aclTensor prod;
        aclnnStatus st = ACLNN_SUCCESS;
        if (!direct) {
            size_t bytes = (size_t)y->numel * aclDataTypeSize(g->dtype);
            if (aclrtMalloc(&buf, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
                return og_fail(ACLNN_ERR_INNER,
                               "%s: out of memory allocating %zu bytes for dy * %s", d->name, bytes,
                               d->in[1 - i]);
            st = init_dense(d, &prod, y->dims, y->ndim, g->dtype, buf);
        }
        if (st == ACLNN_SUCCESS) {
            uint64_t ws = 0;
            aclOpExecutor *ex = NULL;
            st = aclnnMulGetWorkspaceSize(dy, other, direct ? g : &prod, &ws, &ex);
            st = finish(d, st, ws, ex, aclnnMul);
        }
        if (st == ACLNN_SUCCESS && !direct) st = reduce_to(d, &prod, g);
        if (buf) aclrtFree(buf);
        if (st != ACLNN_SUCCESS) return st;
    }
    log_grads(d, t);
    return ACLNN_SUCCESS;
}

static int aot_call(const aot_desc *d, int nparam, void **params, int *ndims, int64_t **shapes,
                    const char **dtypes) {
    const int np = nparams_of(d);
    char lay[160], nb[32];
    if (nparam != np)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: nparam is %d; it takes %d params (%s)",
                       d->name, nparam, np, layout(d, lay, sizeof lay));
    if (!params || !ndims || !shapes || !dtypes)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", d->name,
                       !params   ? "params"
                       : !ndims  ? "ndims"
                       : !shapes ? "shapes"
                                 : "dtypes");
    aclTensor t[AOT_MAX_PARAMS];
    for (int i = 0; i < np; i++) {
        const char *pn = param_name(d, i, nb, sizeof nb);
        if (!dtypes[i])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: dtypes[%d] (%s) is NULL", d->name, i, pn);
        aclDataType dt = parse_dtype(dtypes[i]);
        if (dt == ACL_DT_UNDEFINED)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s (params[%d]) has dtype \"%s\"; opgrad's built-in operators "
                           "take float32 (\"float32\" or \"float\"), float16 and bfloat16",
                           d->name, pn, i, dtypes[i]);
        if (ndims[i] < 0 || ndims[i] > OG_MAX_DIMS)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s (params[%d]) has rank %d; 0 to %d "
                           "dims are supported",
                           d->name, pn, i, ndims[i], OG_MAX_DIMS);
        if (ndims[i] > 0 && !shapes[i])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: shapes[%d] (%s, rank %d) is NULL", d->name,
                           i, pn, ndims[i]);
        int64_t dims[OG_MAX_DIMS];
        for (int k = 0; k < ndims[i]; k++) {
            dims[k] = shapes[i][k];
            if (dims[k] < 0)
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%s: %s (params[%d]) has dim %d = %lld; "
                               "dims must be >= 0 (dynamic shapes are resolved before launch)",
                               d->name, pn, i, k, (long long)dims[k]);
        }
        aclnnStatus st = init_dense(d, &t[i], dims, ndims[i], dt, params[i]);
        if (st != ACLNN_SUCCESS) return st;
        if (t[i].numel > 0 && !params[i])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: params[%d] (%s) is NULL", d->name, i, pn);
    }
    // The forward output's shape.
    char a[160], b[160];
    int64_t want[OG_MAX_DIMS];
    int nwant = t[0].ndim, bad = 0;
    memcpy(want, t[0].dims, sizeof(int64_t) * (size_t)nwant);
    if (d->out == OUT_BROADCAST &&
        !og_broadcast_shapes(t[0].dims, t[0].ndim, t[1].dims, t[1].ndim, want, &nwant, &bad))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s %s and %s %s do not broadcast (dim %d)",
                       d->name, d->in[0], og_shape_str(t[0].dims, t[0].ndim, a, sizeof a), d->in[1],
                       og_shape_str(t[1].dims, t[1].ndim, b, sizeof b), bad);
    const aclTensor *y = &t[d->nin];
    bool ok = y->ndim == nwant;
    for (int k = 0; ok && k < nwant; k++) ok = y->dims[k] == want[k];
    if (!ok)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: y (params[%d]) has shape %s but the forward "
                       "output has shape %s (%s)",
                       d->name, d->nin, og_shape_str(y->dims, y->ndim, a, sizeof a),
                       og_shape_str(want, nwant, b, sizeof b),
                       d->out == OUT_BROADCAST ? "the inputs broadcast" : "the shape of x");
    if (d->backward) {
        const aclTensor *dy = &t[d->nin + 1];
        if (!same_shape(dy, y))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: dy (params[%d]) has shape %s but y has "
                           "%s: the output gradient has the output's shape",
                           d->name, d->nin + 1, og_shape_str(dy->dims, dy->ndim, a, sizeof a),
                           og_shape_str(y->dims, y->ndim, b, sizeof b));
        for (int i = 0; i < d->nin; i++) {
            const aclTensor *x = &t[i], *g = &t[d->nin + 2 + i];
            const char *gn = param_name(d, d->nin + 2 + i, nb, sizeof nb);
            if (!same_shape(g, x))
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%s: %s (params[%d]) has shape %s but %s "
                               "has %s: a gradient has its input's shape",
                               d->name, gn, d->nin + 2 + i,
                               og_shape_str(g->dims, g->ndim, a, sizeof a), d->in[i],
                               og_shape_str(x->dims, x->ndim, b, sizeof b));
            if (g->dtype != x->dtype)
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%s: %s (params[%d]) has dtype %s but %s "
                               "is %s: a gradient has its input's dtype",
                               d->name, gn, d->nin + 2 + i, og_dtype_name(g->dtype), d->in[i],
                               og_dtype_name(x->dtype));
        }
    }
    if (d->multi) return d->multi(d, t);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = d->plan(t, &ws, &ex);
    return finish(d, st, ws, ex, d->exec);
}

/* ---- the exported entry points -----------------------------------------------------------------
 */

// A framework calling an entry point sees only the return code, often on another thread than
// the one that could read aclGetRecentErrMsg (MindSpore prints "Return value from CPU AOT
// kernel ... is 161002"), so a failure also prints its message to stderr.
static int reported(int rc) {
    if (rc != 0) fprintf(stderr, "opgrad aot: error %d: %s\n", rc, aclGetRecentErrMsg());
    return rc;
}

#define AOT_ENTRY(sym, index)                                                                      \
    OPGRAD_API int sym(int nparam, void **params, int *ndims, int64_t **shapes,                    \
                       const char **dtypes, void *stream, void *extra) {                           \
        (void)stream; /* NULL on the CPU; the call is synchronous in any case */                   \
        (void)extra;  /* MindSpore's C++ AotExtra: not readable from C */                          \
        return reported(aot_call(&AOT[index], nparam, params, ndims, shapes, dtypes));             \
    }

AOT_ENTRY(opgrad_Mish, MISH)
AOT_ENTRY(opgrad_MishBackward, MISH_BWD)
AOT_ENTRY(opgrad_Gelu, GELU)
AOT_ENTRY(opgrad_GeluBackward, GELU_BWD)
AOT_ENTRY(opgrad_Silu, SILU)
AOT_ENTRY(opgrad_SiluBackward, SILU_BWD)
AOT_ENTRY(opgrad_Sigmoid, SIGMOID)
AOT_ENTRY(opgrad_SigmoidBackward, SIGMOID_BWD)
AOT_ENTRY(opgrad_Tanh, TANH)
AOT_ENTRY(opgrad_TanhBackward, TANH_BWD)
AOT_ENTRY(opgrad_Softplus, SOFTPLUS)
AOT_ENTRY(opgrad_SoftplusBackward, SOFTPLUS_BWD)
AOT_ENTRY(opgrad_Relu, RELU)
AOT_ENTRY(opgrad_ReluBackward, RELU_BWD)
AOT_ENTRY(opgrad_LeakyRelu, LEAKY_RELU)
AOT_ENTRY(opgrad_LeakyReluBackward, LEAKY_RELU_BWD)
AOT_ENTRY(opgrad_Hardswish, HARDSWISH)
AOT_ENTRY(opgrad_HardswishBackward, HARDSWISH_BWD)
AOT_ENTRY(opgrad_Elu, ELU)
AOT_ENTRY(opgrad_EluBackward, ELU_BWD)
AOT_ENTRY(opgrad_Add, ADD)
AOT_ENTRY(opgrad_AddBackward, ADD_BWD)
AOT_ENTRY(opgrad_Mul, MUL)
AOT_ENTRY(opgrad_MulBackward, MUL_BWD)
AOT_ENTRY(opgrad_FusedAddScale, FUSED)
AOT_ENTRY(opgrad_FusedAddScaleBackward, FUSED_BWD)
