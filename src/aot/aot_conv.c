/* MindSpore "aot" entry points of the 2-D convolution (docs/aot.md, "Convolution"), written by
 * hand like aot_norm.c: Convolution is NOAOT in src/ops/ops.inc because its attributes (stride,
 * padding, dilation, groups) are aclIntArrays and ints that the list's defaults cannot give, and
 * an aot call carries tensors only (MindSpore's attributes live in its C++ AotExtra, which C
 * cannot read). So these entry points fix what cannot be read from the shapes and read the rest:
 *
 *   opgrad_Conv2d                   x, weight, bias, y
 *   opgrad_Conv2dBackward           x, weight, bias, y, dy, dx, dweight, dbias
 *   opgrad_Conv2dNoBias             x, weight, y
 *   opgrad_Conv2dNoBiasBackward     x, weight, y, dy, dx, dweight
 *
 * x [N, C, H, W], weight [K, C / groups, kh, kw], bias [K], y [N, K, Ho, Wo]. Fixed: stride 1,
 * dilation 1 (a strided or dilated layer cannot use them: with a stride several paddings and
 * strides give the same shapes, so neither could be read back). Read from the shapes:
 *   groups  = C / weight's dim 1 (which must divide C);
 *   padding = from y: Ho = H + top + bottom - kh + 1, so top + bottom = Ho - H + kh - 1, split as
 *             PyTorch's padding='same' does (top = total / 2, the odd row at the bottom); the
 *             same for the width. 'same' (Ho = H) and 'valid' (Ho = H - kh + 1) layers, and any
 *             symmetric padding, come out exactly.
 * The backward runs one aclnnConvolutionBackward with outputMask {1, 1, has bias}. y is passed
 * to the backward by the bprop convention and not read. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "aot/aot_internal.h"
#include "opgrad/custom_op.h"
#include "runtime/error.h"
#include "tensor/tensor.h"

#define KEEP_DTYPE 0 // cubeMathType: fp32 accumulation for every dtype on the CPU

typedef struct conv_attrs {
    int64_t stride[2], dilation[2], pad[4]; // pad: top, bottom, left, right
    int64_t groups;
} conv_attrs;

// t: x, weight, [bias], y (then dy and the gradients for a backward). Reads groups and padding.
static aclnnStatus conv_shape(const aot_entry *d, const aclTensor *t, bool has_bias,
                              conv_attrs *a) {
    const aclTensor *x = &t[0], *w = &t[1];
    const int iy = has_bias ? 3 : 2;
    const aclTensor *y = &t[iy];
    char s1[160], s2[160], rule[400];
    if (x->ndim != 4 || w->ndim != 4)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: x (params[0]) %s and weight (params[1]) %s must both have 4 dims "
                       "(x [N, C, H, W], weight [K, C / groups, kh, kw])",
                       d->name, og_shape_str(x->dims, x->ndim, s1, sizeof s1),
                       og_shape_str(w->dims, w->ndim, s2, sizeof s2));
    const int64_t C = x->dims[1], K = w->dims[0];
    if (w->dims[1] <= 0 || C % w->dims[1] != 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: weight (params[1]) %s: its dim 1 (%lld) must divide x's channels "
                       "(%lld); groups is read as their quotient",
                       d->name, og_shape_str(w->dims, 4, s2, sizeof s2), (long long)w->dims[1],
                       (long long)C);
    if (has_bias && (t[2].ndim != 1 || t[2].dims[0] != K))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: bias (params[2]) has shape %s; it must be [%lld] (weight's dim 0)",
                       d->name, og_shape_str(t[2].dims, t[2].ndim, s1, sizeof s1), (long long)K);
    if (y->ndim != 4)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: y (params[%d]) has shape %s; it must have 4 dims [N, K, Ho, Wo]",
                       d->name, iy, og_shape_str(y->dims, y->ndim, s1, sizeof s1));
    a->groups = C / w->dims[1];
    for (int k = 0; k < 2; k++) {
        a->stride[k] = a->dilation[k] = 1;
        int64_t total = y->dims[2 + k] - x->dims[2 + k] + w->dims[2 + k] - 1;
        if (total < 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: y (params[%d]) has shape %s; with stride 1 and dilation 1 its "
                           "spatial dim %d must be at least %lld (x's %lld - kernel %lld + 1, no "
                           "padding)",
                           d->name, iy, og_shape_str(y->dims, 4, s1, sizeof s1), k,
                           (long long)(x->dims[2 + k] - w->dims[2 + k] + 1),
                           (long long)x->dims[2 + k], (long long)w->dims[2 + k]);
        a->pad[2 * k] = total / 2;
        a->pad[2 * k + 1] = total - total / 2;
    }
    const int64_t want[4] = {x->dims[0], K, y->dims[2], y->dims[3]};
    snprintf(rule, sizeof rule, "x %s convolved with weight %s, stride 1",
             og_shape_str(x->dims, 4, s1, sizeof s1), og_shape_str(w->dims, 4, s2, sizeof s2));
    return og_aot_check_outputs(d, t, want, 4, rule);
}

// The attribute arrays of one call, registered (the operators take live objects only).
typedef struct conv_arrays {
    aclIntArray stride, padding, dilation;
    bool ok;
} conv_arrays;

static aclnnStatus arrays_open(const aot_entry *d, conv_attrs *a, conv_arrays *r) {
    r->stride = (aclIntArray){.size = 2, .values = a->stride};
    r->padding = (aclIntArray){.size = 4, .values = a->pad};
    r->dilation = (aclIntArray){.size = 2, .values = a->dilation};
    bool s = og_object_register(&r->stride, OG_OBJ_INT_ARRAY);
    bool p = og_object_register(&r->padding, OG_OBJ_INT_ARRAY);
    bool l = og_object_register(&r->dilation, OG_OBJ_INT_ARRAY);
    r->ok = s && p && l;
    if (r->ok) return ACLNN_SUCCESS;
    if (s) og_object_unregister(&r->stride);
    if (p) og_object_unregister(&r->padding);
    if (l) og_object_unregister(&r->dilation);
    return og_fail(ACLNN_ERR_INNER, "%s: out of memory registering an array", d->name);
}

static void arrays_close(conv_arrays *r) {
    if (!r->ok) return;
    og_object_unregister(&r->stride);
    og_object_unregister(&r->padding);
    og_object_unregister(&r->dilation);
}

// t: x, weight, [bias], y.
static aclnnStatus conv_fwd(const aot_entry *d, aclTensor *t, bool has_bias) {
    conv_attrs a;
    aclnnStatus st = conv_shape(d, t, has_bias, &a);
    if (st != ACLNN_SUCCESS) return st;
    conv_arrays r;
    st = arrays_open(d, &a, &r);
    if (st != ACLNN_SUCCESS) return st;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    st = aclnnConvolutionGetWorkspaceSize(&t[0], &t[1], has_bias ? &t[2] : NULL, &r.stride,
                                          &r.padding, &r.dilation, false, NULL, a.groups,
                                          &t[has_bias ? 3 : 2], KEEP_DTYPE, &ws, &ex);
    st = og_aot_finish(d, st, ws, ex, aclnnConvolution);
    arrays_close(&r);
    return st;
}

// t: x, weight, [bias], y, dy, dx, dweight, [dbias].
static aclnnStatus conv_bwd(const aot_entry *d, aclTensor *t, bool has_bias) {
    conv_attrs a;
    aclnnStatus st = conv_shape(d, t, has_bias, &a);
    if (st != ACLNN_SUCCESS) return st;
    conv_arrays r;
    st = arrays_open(d, &a, &r);
    if (st != ACLNN_SUCCESS) return st;
    int64_t K = t[1].dims[0];
    bool mask_v[3] = {true, true, has_bias};
    aclIntArray bias_sizes = {.size = 1, .values = &K};
    aclBoolArray mask = {.size = 3, .values = mask_v};
    bool reg_b = og_object_register(&bias_sizes, OG_OBJ_INT_ARRAY);
    bool reg_m = og_object_register(&mask, OG_OBJ_BOOL_ARRAY);
    if (!reg_b || !reg_m) {
        st = og_fail(ACLNN_ERR_INNER, "%s: out of memory registering an array", d->name);
    } else {
        const int idy = has_bias ? 4 : 3;
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        st = aclnnConvolutionBackwardGetWorkspaceSize(
            &t[idy], &t[0], &t[1], has_bias ? &bias_sizes : NULL, &r.stride, &r.padding,
            &r.dilation, false, NULL, (int)a.groups, &mask, KEEP_DTYPE, &t[idy + 1], &t[idy + 2],
            has_bias ? &t[idy + 3] : NULL, &ws, &ex);
        st = og_aot_finish(d, st, ws, ex, aclnnConvolutionBackward);
    }
    if (reg_b) og_object_unregister(&bias_sizes);
    if (reg_m) og_object_unregister(&mask);
    arrays_close(&r);
    return st;
}

static aclnnStatus fwd_bias(const aot_entry *d, aclTensor *t) { return conv_fwd(d, t, true); }
static aclnnStatus fwd_nobias(const aot_entry *d, aclTensor *t) { return conv_fwd(d, t, false); }
static aclnnStatus bwd_bias(const aot_entry *d, aclTensor *t) { return conv_bwd(d, t, true); }
static aclnnStatus bwd_nobias(const aot_entry *d, aclTensor *t) { return conv_bwd(d, t, false); }

/* ---- the exported entry points ----------------------------------------------------------------
 */

#define BIAS_INPUTS                                                                                \
    { "x", "weight", "bias" }
#define NOBIAS_INPUTS                                                                              \
    { "x", "weight" }

OG_AOT_ENTRY(opgrad_Conv2d, BIAS_INPUTS, 3, false, fwd_bias)
OG_AOT_ENTRY(opgrad_Conv2dBackward, BIAS_INPUTS, 3, true, bwd_bias)
OG_AOT_ENTRY(opgrad_Conv2dNoBias, NOBIAS_INPUTS, 2, false, fwd_nobias)
OG_AOT_ENTRY(opgrad_Conv2dNoBiasBackward, NOBIAS_INPUTS, 2, true, bwd_nobias)
