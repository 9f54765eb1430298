/* MindSpore "aot" entry points of the built-in operators (docs/aot.md), exported from libopgrad so
 * that MindSpore can call them directly:
 *
 *   ops.Custom(func="/abs/libopgrad.so:opgrad_Mish", func_type="aot", ...)
 *
 * Every entry has the aot signature of include/opgrad/custom_op.h. Each forward operator marked
 * AOT in src/ops/ops.inc gets two: opgrad_<Name> takes its inputs then its output y; and
 * opgrad_<Name>Backward follows the bprop convention: the forward inputs, y, its gradient dy,
 * then one gradient per forward input (each with its input's shape and dtype).
 *
 * Both are made from the operators' descriptors, with no table of their own: a forward's T
 * parameters are the inputs (the first one, "self", is called x), its O parameter is y; the
 * backward operator's G parameter is dy, Y is y, its T parameters are the forward's inputs in
 * order and its O parameters their gradients. Every attribute of the forward operator (Softplus
 * beta and threshold, LeakyRelu negativeSlope, Elu alpha / scale / inputScale, Add alpha, Softmax
 * dim, ...) is read from MindSpore's `extra` when the Custom primitive carries it (under its
 * aclnn name or in snake_case, aot_extra.h), for the forward and for the backward operator's
 * parameter of the same name; an attribute not set, and a backward's own flags (selfIsResult,
 * isResult), take the default the list gives.
 * One shared function validates the arguments, wraps the params in contiguous aclTensors (on the
 * stack, through aclInitTensor), runs the two-phase aclnn API synchronously (NULL stream,
 * workspace from aclrtMalloc) and returns 0 or the aclnn status, with a message for
 * aclGetRecentErrMsg that starts with the entry point's name. Add and Mul have no backward
 * operator ("composite" in the list): their backwards are compositions of aclnnMul and
 * aclnnReduceSum below, and log their gradients to the monitor themselves (backward operators are
 * logged by their executors). The marshalling (og_aot_*) is shared with the hand-written entry
 * points of the matmul family (aot_matmul.c) through aot_internal.h. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aot/aot_extra.h"
#include "aot/aot_internal.h"
#include "engine/convert.h"
#include "opgrad/custom_op.h"
#include "ops/ops.h"
#include "runtime/error.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

#define AOT_MAX_ARGS 16

/* ---- an entry point: a forward operator, or its backward (aot_entry, aot_internal.h) ----------
 */

int og_aot_nparams(const aot_entry *d) { return d->backward ? 2 * d->nin + 2 : d->nin + 1; }

// Name of param i in the entry point's layout ("x", "y", "dy", "dx", ...).
const char *og_aot_param_name(const aot_entry *d, int i, char *buf, size_t cap) {
    if (i < d->nin) return d->in[i];
    if (i == d->nin) return "y";
    if (i == d->nin + 1) return "dy";
    snprintf(buf, cap, "d%s", d->in[i - d->nin - 2]);
    return buf;
}

// "x, y, dy, dx" for messages.
static const char *layout(const aot_entry *d, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < og_aot_nparams(d) && len < cap; i++) {
        char nb[64];
        int n = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "",
                         og_aot_param_name(d, i, nb, sizeof nb));
        if (n < 0) break;
        len += (size_t)n;
    }
    return buf;
}

static aot_entry make_entry(const og_opdesc *fwd, bool backward) {
    aot_entry d = {.fwd = fwd, .backward = backward};
    snprintf(d.name, sizeof d.name, "opgrad_%s%s", fwd->name + 5, backward ? "Backward" : "");
    d.bwd = backward ? og_op_grad(fwd) : NULL;
    og_param p;
    for (int i = 0; og_opdesc_param(fwd, i, &p); i++)
        if (p.kind == OG_PARAM_TENSOR && d.nin < AOT_MAX_IN) {
            snprintf(d.in[d.nin], sizeof d.in[0], "%s",
                     d.nin == 0 && !strcmp(p.name, "self") ? "x" : p.name);
            d.nin++;
        }
    return d;
}

/* ---- shared marshalling ---------------------------------------------------------------------- */

static aclDataType parse_dtype(const char *s) {
    if (opgrad_aot_dtype_is(s, "float32")) return ACL_FLOAT;
    if (opgrad_aot_dtype_is(s, "float16")) return ACL_FLOAT16;
    if (opgrad_aot_dtype_is(s, "bfloat16")) return ACL_BF16;
    if (opgrad_aot_dtype_is(s, "float64")) return ACL_DOUBLE;
    return ACL_DT_UNDEFINED;
}

bool og_aot_same_shape(const aclTensor *a, const aclTensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

// Prefixes the recent aclnn message with the entry point's name after a failed aclnn call.
aclnnStatus og_aot_fail_from_aclnn(const aot_entry *d, aclnnStatus st) {
    char msg[900];
    snprintf(msg, sizeof msg, "%s", aclGetRecentErrMsg());
    return og_fail(st, "%s: %s", d->name, msg);
}

// Phase 2 of an executor planned with status st: workspace, synchronous run, cleanup.
aclnnStatus og_aot_finish(const aot_entry *d, aclnnStatus st, uint64_t ws, aclOpExecutor *ex,
                          og_phase2_fn exec) {
    if (st != ACLNN_SUCCESS) return og_aot_fail_from_aclnn(d, st);
    void *w = NULL;
    if (ws > 0 && aclrtMalloc(&w, (size_t)ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        aclDestroyAclOpExecutor(ex);
        return og_fail(ACLNN_ERR_INNER, "%s: out of memory allocating a %llu-byte workspace",
                       d->name, (unsigned long long)ws);
    }
    st = exec(w, ws, ex, NULL);
    if (w) aclrtFree(w);
    return st == ACLNN_SUCCESS ? st : og_aot_fail_from_aclnn(d, st);
}

// A contiguous tensor of `ndim` dims over data (not owned).
// The tensor lives on the caller's stack: it is registered (the operators take live objects
// only) until the caller's og_object_unregister.
aclnnStatus og_aot_init_dense(const aot_entry *d, aclTensor *t, const int64_t *dims, int ndim,
                              aclDataType dt, void *data) {
    if (!og_object_register(t, OG_OBJ_TENSOR))
        return og_fail(ACLNN_ERR_INNER, "%s: out of memory registering a tensor", d->name);
    aclnnStatus st = aclInitTensor(t, dims, (uint64_t)ndim, dt, NULL, 0, ACL_FORMAT_ND, dims,
                                   (uint64_t)ndim, data);
    return st == ACLNN_SUCCESS ? st : og_aot_fail_from_aclnn(d, st);
}

/* ---- attributes (MindSpore's extra) ------------------------------------------------------------
 */

// "negativeSlope" -> "negative_slope"; false when it has no capital (the same name).
static bool snake_case(const char *name, char *out, size_t cap) {
    size_t n = 0;
    bool changed = false;
    for (const char *c = name; *c && n + 2 < cap; c++) {
        if (*c >= 'A' && *c <= 'Z') {
            if (n > 0) out[n++] = '_';
            out[n++] = (char)(*c - 'A' + 'a');
            changed = true;
        } else {
            out[n++] = *c;
        }
    }
    out[n] = 0;
    return changed;
}

// Looks `name` up, then its snake_case spelling; which spelling matched goes to used.
static int attr_lookup(const aot_entry *d, const char *name, bool string, double *v, char *s,
                       size_t cap, char *why, size_t wcap, char *used, size_t ucap) {
    char alt[64];
    const char *names[2] = {name, snake_case(name, alt, sizeof alt) ? alt : NULL};
    for (int k = 0; k < 2 && names[k]; k++) {
        int r = string ? og_aot_extra_string(d->extra, names[k], s, cap, why, wcap)
                       : og_aot_extra_number(d->extra, names[k], v, why, wcap);
        if (r != OG_ATTR_ABSENT) {
            snprintf(used, ucap, "%s", names[k]);
            return r;
        }
    }
    return OG_ATTR_ABSENT;
}

aclnnStatus og_aot_attr_number(const aot_entry *d, const char *name, bool integral, double *v,
                               bool *found) {
    *found = false;
    if (!d->extra) return ACLNN_SUCCESS;
    char why[128] = "", used[64];
    double x = 0;
    int r = attr_lookup(d, name, false, &x, NULL, 0, why, sizeof why, used, sizeof used);
    if (r == OG_ATTR_ABSENT) return ACLNN_SUCCESS;
    if (r == OG_ATTR_BAD)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: attribute '%s' %s", d->name, used, why);
    if (!isfinite(x))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: attribute '%s' is %g; it must be finite",
                       d->name, used, x);
    if (integral && (x != floor(x) || fabs(x) > 9.0e15))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: attribute '%s' is %g; it must be an integer",
                       d->name, used, x);
    *v = x;
    *found = true;
    return ACLNN_SUCCESS;
}

aclnnStatus og_aot_attr_string(const aot_entry *d, const char *name, char *out, size_t cap,
                               bool *found) {
    *found = false;
    if (!d->extra) return ACLNN_SUCCESS;
    char why[128] = "", used[64];
    int r = attr_lookup(d, name, true, NULL, out, cap, why, sizeof why, used, sizeof used);
    if (r == OG_ATTR_ABSENT) return ACLNN_SUCCESS;
    if (r == OG_ATTR_BAD)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: attribute '%s' %s", d->name, used, why);
    *found = true;
    return ACLNN_SUCCESS;
}

OPGRAD_API int opgrad_aot_attributes_supported(void) { return og_aot_extra_supported(); }

// True when the forward operator of d has an attribute parameter `name` (the backward's own
// flags, selfIsResult or isResult, are not attributes a caller may set: they describe the
// entry's layout).
static bool forward_attribute(const aot_entry *d, const char *name) {
    og_param p;
    for (int i = 0; og_opdesc_param(d->fwd, i, &p); i++)
        if (p.kind != OG_PARAM_TENSOR && p.kind != OG_PARAM_OUT && !strcmp(p.name, name))
            return true;
    return false;
}

/* ---- the aclnn call of an entry, from the descriptor ------------------------------------------
 */

// Storage for the attribute values of one call (scalars and strings live here).
typedef struct call_attrs {
    aclScalar scalars[AOT_MAX_ARGS];
    char strings[AOT_MAX_ARGS][48];
} call_attrs;

// Fills args[i] for an attribute parameter: the call's attribute of that name (a forward
// attribute, aot_extra.h) when MindSpore passes one, else its default in the list.
static aclnnStatus attribute(const aot_entry *d, const og_opdesc *op, const og_param *p, int i,
                             og_arg *args, call_attrs *at) {
    if (!p->def[0] && p->kind != OG_PARAM_STRING)
        return og_fail(ACLNN_ERR_INNER, "%s: %s parameter '%s' has no default in the operator list",
                       d->name, op->name, p->name);
    bool settable = d->extra && forward_attribute(d, p->name), found = false;
    double v = 0;
    aclnnStatus st = ACLNN_SUCCESS;
    if (settable && p->kind != OG_PARAM_STRING)
        st = og_aot_attr_number(d, p->name,
                                p->kind == OG_PARAM_INT || p->kind == OG_PARAM_INT8 ||
                                    p->kind == OG_PARAM_BOOL,
                                &v, &found);
    if (st != ACLNN_SUCCESS) return st;
    switch (p->kind) {
    case OG_PARAM_SCALAR: // registered until run_op unregisters it; DOUBLE: a float64 operation
        // takes the attribute unrounded (alpha 0.7 is not 0.699999988), fp32 ones round it
        at->scalars[i] =
            (aclScalar){.dtype = ACL_DOUBLE, .v = {.f64 = found ? v : strtod(p->def, NULL)}};
        if (!og_object_register(&at->scalars[i], OG_OBJ_SCALAR))
            return og_fail(ACLNN_ERR_INNER, "%s: out of memory registering a scalar", d->name);
        args[i].s = &at->scalars[i];
        return ACLNN_SUCCESS;
    case OG_PARAM_INT:
        args[i].i = found ? (int64_t)v : strtoll(p->def, NULL, 10);
        return ACLNN_SUCCESS;
    case OG_PARAM_INT8:
        if (found && (v < INT8_MIN || v > INT8_MAX))
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: attribute '%s' is %g; it must fit int8",
                           d->name, p->name, v);
        args[i].i8 = found ? (int8_t)v : (int8_t)strtol(p->def, NULL, 10);
        return ACLNN_SUCCESS;
    case OG_PARAM_BOOL:
        args[i].b = found ? v != 0 : !strcmp(p->def, "true");
        return ACLNN_SUCCESS;
    case OG_PARAM_DOUBLE:
        args[i].d = found ? v : strtod(p->def, NULL);
        return ACLNN_SUCCESS;
    case OG_PARAM_STRING:
        if (settable)
            st = og_aot_attr_string(d, p->name, at->strings[i], sizeof at->strings[i], &found);
        if (st != ACLNN_SUCCESS) return st;
        if (!found) snprintf(at->strings[i], sizeof at->strings[i], "%s", p->def);
        args[i].c = at->strings[i];
        return ACLNN_SUCCESS;
    default:
        return og_fail(ACLNN_ERR_INNER, "%s: %s parameter '%s' cannot be given by an aot call",
                       d->name, op->name, p->name);
    }
}

// The arguments of op for the entry's params t (layout of the entry point): T parameters take
// the forward inputs in order, G dy, Y and (a forward's) O y, a backward's O the gradients.
static aclnnStatus call_args(const aot_entry *d, const og_opdesc *op, aclTensor *t, og_arg *args,
                             call_attrs *at) {
    og_param p;
    int ins = 0, outs = 0;
    for (int i = 0; og_opdesc_param(op, i, &p); i++) {
        if (i >= AOT_MAX_ARGS) return og_fail(ACLNN_ERR_INNER, "%s: too many parameters", d->name);
        switch (p.kind) {
        case OG_PARAM_TENSOR:
            if (ins >= d->nin)
                return og_fail(ACLNN_ERR_INNER, "%s: %s takes more inputs than %s", d->name,
                               op->name, d->fwd->name);
            args[i].t = &t[ins++];
            break;
        case OG_PARAM_GRAD:
            args[i].t = &t[d->nin + 1];
            break;
        case OG_PARAM_RESULT:
            args[i].t = &t[d->nin];
            break;
        case OG_PARAM_OUT:
            if (d->backward && outs >= d->nin)
                return og_fail(ACLNN_ERR_INNER, "%s: %s has more outputs than %s has inputs",
                               d->name, op->name, d->fwd->name);
            args[i].t = d->backward ? &t[d->nin + 2 + outs++] : &t[d->nin];
            break;
        default: {
            aclnnStatus st = attribute(d, op, &p, i, args, at);
            if (st != ACLNN_SUCCESS) return st;
        }
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus run_op(const aot_entry *d, const og_opdesc *op, aclTensor *t) {
    og_arg args[AOT_MAX_ARGS];
    call_attrs at = {0};
    aclnnStatus st = call_args(d, op, t, args, &at);
    if (st == ACLNN_SUCCESS) {
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        st = op->phase1(args, &ws, &ex);
        st = og_aot_finish(d, st, ws, ex, op->phase2);
    }
    for (int i = 0; i < AOT_MAX_ARGS; i++) og_object_unregister(&at.scalars[i]);
    return st;
}

/* ---- the composite backwards (Add, Mul) -------------------------------------------------------
 */

/* Gradient reduction for the backwards without an aclnn operator: sums src (the forward output's
 * shape) down to dst's shape (an input that broadcast to it) with aclnnReduceSum over the
 * broadcast dims (the leading dims dst lacks and the dims where dst has 1), in dst's dtype;
 * without broadcast dims it is a copy (converted to dst's dtype, rounding to nearest even). */
aclnnStatus og_aot_reduce_to(const aot_entry *d, const aclTensor *src, aclTensor *dst) {
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
        // through double: exact for every source dtype, then one rounding to dst's
        for (int64_t i = 0; i < dst->numel; i++) {
            double v;
            og_load_run64(s + i * (int64_t)es, src->dtype, 1, &v, 1);
            og_store_run64(o + i * (int64_t)ed, dst->dtype, 1, &v, 1);
        }
        return ACLNN_SUCCESS;
    }
    // The reduced shape (no keepDims) has dst's elements in dst's order: a view of dst's memory.
    aclTensor out;
    aclIntArray arr = {.size = (uint64_t)nd, .values = dims};
    aclnnStatus st = og_aot_init_dense(d, &out, kept, nk, dst->dtype, og_tensor_first(dst));
    if (st == ACLNN_SUCCESS && !og_object_register(&arr, OG_OBJ_INT_ARRAY))
        st = og_fail(ACLNN_ERR_INNER, "%s: out of memory registering an array", d->name);
    if (st == ACLNN_SUCCESS) {
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        st = aclnnReduceSumGetWorkspaceSize(src, &arr, false, dst->dtype, &out, &ws, &ex);
        st = og_aot_finish(d, st, ws, ex, aclnnReduceSum);
    }
    og_object_unregister(&out);
    og_object_unregister(&arr);
    return st;
}

// The gradients of a backward (t in its layout: a, b, y, dy, da, db) through the monitor.
void og_aot_log_grads(const aot_entry *d, const aclTensor *t) {
    if (!opgrad_debug_grads_enabled()) return;
    for (int i = 0; i < d->nin; i++) {
        const aclTensor *g = &t[d->nin + 2 + i];
        char nb[64];
        opgrad_debug_grads_log(d->name, i, og_aot_param_name(d, d->nin + 2 + i, nb, sizeof nb),
                               og_dtype_name(g->dtype), g->ndim, g->dims, og_tensor_first(g));
    }
}

// y = a + alpha b (alpha the attribute, default 1): da = dy summed to a's shape, db = dy summed
// to b's shape, then (alpha != 1) times alpha by aclnnInplaceMuls in db's dtype.
static aclnnStatus add_bwd(const aot_entry *d, aclTensor *t) {
    double alpha = 1;
    bool found;
    aclnnStatus st = og_aot_attr_number(d, "alpha", false, &alpha, &found);
    for (int i = 0; i < 2 && st == ACLNN_SUCCESS; i++) st = og_aot_reduce_to(d, &t[3], &t[4 + i]);
    if (st == ACLNN_SUCCESS && alpha != 1) {
        aclScalar s = {.dtype = ACL_DOUBLE, .v = {.f64 = alpha}};
        if (!og_object_register(&s, OG_OBJ_SCALAR))
            return og_fail(ACLNN_ERR_INNER, "%s: out of memory registering a scalar", d->name);
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        st = aclnnInplaceMulsGetWorkspaceSize(&t[5], &s, &ws, &ex);
        st = og_aot_finish(d, st, ws, ex, aclnnInplaceMuls);
        og_object_unregister(&s);
    }
    if (st == ACLNN_SUCCESS) og_aot_log_grads(d, t);
    return st;
}

// y = a * b: da = dy * b summed to a's shape, db = dy * a summed to b's shape. The product is
// formed by aclnnMul in the gradient's dtype (directly into the gradient when nothing is summed).
static aclnnStatus mul_bwd(const aot_entry *d, aclTensor *t) {
    const aclTensor *y = &t[2], *dy = &t[3];
    for (int i = 0; i < 2; i++) {
        aclTensor *g = &t[4 + i];
        const aclTensor *other = &t[1 - i];
        bool direct = og_aot_same_shape(g, y);
        void *buf = NULL;
        aclTensor prod;
        aclnnStatus st = ACLNN_SUCCESS;
        if (!direct) {
            size_t bytes = (size_t)y->numel * aclDataTypeSize(g->dtype);
            if (aclrtMalloc(&buf, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
                return og_fail(ACLNN_ERR_INNER,
                               "%s: out of memory allocating %zu bytes for dy * %s", d->name, bytes,
                               d->in[1 - i]);
            st = og_aot_init_dense(d, &prod, y->dims, y->ndim, g->dtype, buf);
        }
        if (st == ACLNN_SUCCESS) {
            uint64_t ws = 0;
            aclOpExecutor *ex = NULL;
            st = aclnnMulGetWorkspaceSize(dy, other, direct ? g : &prod, &ws, &ex);
            st = og_aot_finish(d, st, ws, ex, aclnnMul);
        }
        if (st == ACLNN_SUCCESS && !direct) st = og_aot_reduce_to(d, &prod, g);
        if (!direct) og_object_unregister(&prod);
        if (buf) aclrtFree(buf);
        if (st != ACLNN_SUCCESS) return st;
    }
    og_aot_log_grads(d, t);
    return ACLNN_SUCCESS;
}

static aclnnStatus composite_backward(const aot_entry *d, aclTensor *t) {
    if (d->fwd == &og_op_Add) return add_bwd(d, t);
    if (d->fwd == &og_op_Mul) return mul_bwd(d, t);
    return og_fail(ACLNN_ERR_INNER, "%s: no composite backward for %s", d->name, d->fwd->name);
}

/* ---- argument validation and the call ---------------------------------------------------------
 */

// params[i] as a dense tensor in t[i].
static aclnnStatus wrap_param(const aot_entry *d, int i, void **params, int *ndims,
                              int64_t **shapes, const char **dtypes, aclTensor *t) {
    char nb[64];
    const char *pn = og_aot_param_name(d, i, nb, sizeof nb);
    if (!dtypes[i])
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: dtypes[%d] (%s) is NULL", d->name, i, pn);
    aclDataType dt = parse_dtype(dtypes[i]);
    if (dt == ACL_DT_UNDEFINED)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: %s (params[%d]) has dtype \"%s\"; opgrad's built-in operators "
                       "take float32 (\"float32\" or \"float\"), float16, bfloat16 and float64",
                       d->name, pn, i, dtypes[i]);
    if (ndims[i] < 0 || ndims[i] > OG_MAX_DIMS)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: %s (params[%d]) has rank %d; 0 to %d dims are supported", d->name, pn,
                       i, ndims[i], OG_MAX_DIMS);
    if (ndims[i] > 0 && !shapes[i])
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: shapes[%d] (%s, rank %d) is NULL", d->name, i,
                       pn, ndims[i]);
    int64_t dims[OG_MAX_DIMS];
    for (int k = 0; k < ndims[i]; k++) {
        dims[k] = shapes[i][k];
        if (dims[k] < 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s (params[%d]) has dim %d = %lld; "
                           "dims must be >= 0 (dynamic shapes are resolved before launch)",
                           d->name, pn, i, k, (long long)dims[k]);
    }
    aclnnStatus st = og_aot_init_dense(d, t, dims, ndims[i], dt, params[i]);
    if (st != ACLNN_SUCCESS) return st;
    if (t->numel > 0 && !params[i])
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: params[%d] (%s) is NULL", d->name, i, pn);
    return ACLNN_SUCCESS;
}

// Inputs that do not broadcast: the forward operator's own refusal names the rule (a bias of the
// wrong length, say); 161002 with a generic message if it accepts them after all.
static aclnnStatus refuse_inputs(const aot_entry *d, aclTensor *t, int bad) {
    og_arg args[AOT_MAX_ARGS];
    call_attrs at = {0};
    aot_entry fwd = *d;
    fwd.backward = false;
    aclnnStatus st = call_args(&fwd, d->fwd, t, args, &at);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    if (st == ACLNN_SUCCESS) st = d->fwd->phase1(args, &ws, &ex);
    for (int i = 0; i < AOT_MAX_ARGS; i++) og_object_unregister(&at.scalars[i]);
    if (st != ACLNN_SUCCESS) return og_aot_fail_from_aclnn(d, st);
    aclDestroyAclOpExecutor(ex);
    char a[160], b[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s %s and %s %s do not broadcast (dim %d)",
                   d->name, d->in[0], og_shape_str(t[0].dims, t[0].ndim, a, sizeof a), d->in[1],
                   og_shape_str(t[1].dims, t[1].ndim, b, sizeof b), bad);
}

// y (t[nin]) has the shape want (the forward output's, by `rule`); a backward's dy has y's shape
// and each gradient its input's shape and dtype.
aclnnStatus og_aot_check_outputs(const aot_entry *d, const aclTensor *t, const int64_t *want,
                                 int nwant, const char *rule) {
    char a[160], b[160], nb[64];
    const aclTensor *y = &t[d->nin];
    bool ok = y->ndim == nwant;
    for (int k = 0; ok && k < nwant; k++) ok = y->dims[k] == want[k];
    if (!ok)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: y (params[%d]) has shape %s but the forward output has shape %s (%s)",
                       d->name, d->nin, og_shape_str(y->dims, y->ndim, a, sizeof a),
                       og_shape_str(want, nwant, b, sizeof b), rule);
    if (!d->backward) return ACLNN_SUCCESS;
    const aclTensor *dy = &t[d->nin + 1];
    if (!og_aot_same_shape(dy, y))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: dy (params[%d]) has shape %s but y has "
                       "%s: the output gradient has the output's shape",
                       d->name, d->nin + 1, og_shape_str(dy->dims, dy->ndim, a, sizeof a),
                       og_shape_str(y->dims, y->ndim, b, sizeof b));
    for (int i = 0; i < d->nin; i++) {
        const aclTensor *x = &t[i], *g = &t[d->nin + 2 + i];
        const char *gn = og_aot_param_name(d, d->nin + 2 + i, nb, sizeof nb);
        if (!og_aot_same_shape(g, x))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s (params[%d]) has shape %s but %s "
                           "has %s: a gradient has its input's shape",
                           d->name, gn, d->nin + 2 + i, og_shape_str(g->dims, g->ndim, a, sizeof a),
                           d->in[i], og_shape_str(x->dims, x->ndim, b, sizeof b));
        if (g->dtype != x->dtype)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s (params[%d]) has dtype %s but %s "
                           "is %s: a gradient has its input's dtype",
                           d->name, gn, d->nin + 2 + i, og_dtype_name(g->dtype), d->in[i],
                           og_dtype_name(x->dtype));
    }
    return ACLNN_SUCCESS;
}

// y has the inputs' broadcast shape; a backward's dy has y's shape and each gradient its
// input's shape and dtype.
static aclnnStatus check_shapes(const aot_entry *d, aclTensor *t) {
    int64_t want[OG_MAX_DIMS];
    int nwant = t[0].ndim, bad = 0;
    memcpy(want, t[0].dims, sizeof(int64_t) * (size_t)nwant);
    for (int i = 1; i < d->nin; i++) {
        int64_t next[OG_MAX_DIMS];
        int nnext;
        if (!og_broadcast_shapes(want, nwant, t[i].dims, t[i].ndim, next, &nnext, &bad))
            return refuse_inputs(d, t, bad);
        memcpy(want, next, sizeof(int64_t) * (size_t)nnext);
        nwant = nnext;
    }
    return og_aot_check_outputs(d, t, want, nwant,
                                d->nin > 1 ? "the inputs broadcast" : "the shape of x");
}

// nparam and the arrays, then every param wrapped in t (the caller unregisters t[0..np)).
aclnnStatus og_aot_wrap_params(const aot_entry *d, int nparam, void **params, int *ndims,
                               int64_t **shapes, const char **dtypes, aclTensor *t) {
    const int np = og_aot_nparams(d);
    char lay[200];
    if (nparam != np)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: nparam is %d; it takes %d params (%s)",
                       d->name, nparam, np, layout(d, lay, sizeof lay));
    if (!params || !ndims || !shapes || !dtypes)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", d->name,
                       !params   ? "params"
                       : !ndims  ? "ndims"
                       : !shapes ? "shapes"
                                 : "dtypes");
    aclnnStatus st = ACLNN_SUCCESS;
    for (int i = 0; i < np && st == ACLNN_SUCCESS; i++)
        st = wrap_param(d, i, params, ndims, shapes, dtypes, &t[i]);
    return st;
}

static int aot_call(const aot_entry *d, int nparam, void **params, int *ndims, int64_t **shapes,
                    const char **dtypes) {
    const int np = og_aot_nparams(d);
    aclTensor t[AOT_MAX_PARAMS];
    aclnnStatus st = og_aot_wrap_params(d, nparam, params, ndims, shapes, dtypes, t);
    if (st == ACLNN_SUCCESS) st = check_shapes(d, t);
    if (st == ACLNN_SUCCESS && !d->backward)
        st = run_op(d, d->fwd, t);
    else if (st == ACLNN_SUCCESS)
        st = d->bwd ? run_op(d, d->bwd, t) : composite_backward(d, t);
    for (int i = 0; i < np; i++) og_object_unregister(&t[i]);
    return st;
}

/* ---- the exported entry points -----------------------------------------------------------------
 */

// A framework calling an entry point sees only the return code, often on another thread than
// the one that could read aclGetRecentErrMsg (MindSpore prints "Return value from CPU AOT
// kernel ... is 161002"), so a failure also prints its message to stderr.
int og_aot_reported(int rc) {
    if (rc != 0) fprintf(stderr, "opgrad aot: error %d: %s\n", rc, aclGetRecentErrMsg());
    return rc;
}

static int aot_dispatch(const og_opdesc *fwd, bool backward, int nparam, void **params, int *ndims,
                        int64_t **shapes, const char **dtypes, void *extra) {
    aot_entry d = make_entry(fwd, backward);
    d.extra = extra;
    return og_aot_reported(aot_call(&d, nparam, params, ndims, shapes, dtypes));
}

#define AOT_ENTRY(sym, fwd, backward)                                                              \
    OPGRAD_API int sym(int nparam, void **params, int *ndims, int64_t **shapes,                    \
                       const char **dtypes, void *stream, void *extra) {                           \
        (void)stream; /* NULL on the CPU; the call is synchronous in any case */                   \
        return aot_dispatch(fwd, backward, nparam, params, ndims, shapes, dtypes, extra);          \
    }
#define OG_AOT_AOT(Name)                                                                           \
    AOT_ENTRY(opgrad_##Name, &og_op_##Name, false)                                                 \
    AOT_ENTRY(opgrad_##Name##Backward, &og_op_##Name, true)
#define OG_AOT_NOAOT(Name)
#define OG_OP(family, Name, kind, grad, aot, params) OG_AOT_##aot(Name)
#include "ops/ops.inc"
#undef OG_OP

int og_aot_run(const aot_entry *d, og_aot_body body, int nparam, void **params, int *ndims,
               int64_t **shapes, const char **dtypes) {
    aclTensor t[AOT_MAX_PARAMS];
    aclnnStatus st = og_aot_wrap_params(d, nparam, params, ndims, shapes, dtypes, t);
    if (st == ACLNN_SUCCESS) st = body(d, t);
    for (int i = 0; i < og_aot_nparams(d); i++) og_object_unregister(&t[i]);
    return og_aot_reported(st);
}
