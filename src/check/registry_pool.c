/* Registry entries of the 'pool' family: aclnnMaxPool2dWithIndices, aclnnAvgPool2d and
 * aclnnAdaptiveAvgPool2d with their backwards, each entry one set of attributes chosen to hit a
 * boundary case:
 *
 *   max_pool2d            3x3, stride 2, padding 1 on 7 x 8 (the width does not divide)
 *   max_pool2d_ceil       3x3, stride 2, ceil mode on 8 x 10 (the last windows hang off the edge)
 *   max_pool2d_ceil_drop  2x2, stride 2, padding 1, ceil mode on 5 x 7: a window that would start
 *                         in the right padding is dropped (the aclnn / PyTorch rule)
 *   max_pool2d_dilation   3x3, dilation 2, padding 1, stride 1 on 7 x 8
 *   max_pool2d_stride3    2x2, stride 3, padding 1 on 8 x 7 (gaps between windows)
 *   max_pool2d_asym       kernel 3x2, stride 2x1, padding 1x0, dilation 1x2, ceil mode, int64
 *                         indices
 *   avg_pool2d            3x3, stride 2, padding 1, countIncludePad
 *   avg_pool2d_exclude    the same without countIncludePad (edge windows divide by fewer)
 *   avg_pool2d_ceil       ceil mode on 8 x 10, countIncludePad: the divisor is the window clipped
 *                         to [-pad, in + pad)
 *   avg_pool2d_ceil_exclude  ceil mode without countIncludePad
 *   avg_pool2d_divisor    divisorOverride 5
 *   avg_pool2d_stride3    2x3 kernel, stride 3x2, no padding, ceil mode
 *   adaptive_avg_pool2d   7 x 5 -> 3 x 4 (windows of uneven size that overlap)
 *   adaptive_avg_pool2d_up      5 x 3 -> 7 x 4 (more outputs than inputs)
 *   adaptive_avg_pool2d_global  7 x 7 -> 1 x 1
 *
 * Shapes: x is [2, 3, H, W] (contiguous, strided: rows and columns swapped in memory, offset),
 * [1, H, W] (size1: a 3-d input of at most 64 elements, so the full mode's formula check takes
 * the whole Jacobian), [0, 3, H, W] (empty) and [3, 37, H, W] (large, wide: 111 planes that
 * several threads share). The other layouts do not apply.
 *
 * Max pool: the indices are an output; the entry point runs aclnnMaxPool2dWithIndices into an
 * int32 (int64) tensor and returns them as the checker's saved result in the case's dtype (a plane
 * has at most 80 elements, so every index is exact even in bfloat16), which the checker compares
 * with the reference's argmax; the backward entry point turns the saved values back into an
 * integer tensor. The reference's argmax follows the rule the kernel documents (the first
 * maximum in window order), so ties in 16-bit data agree too; the float64 formula check draws
 * data whose windows have a clear maximum (clear_of_kinks). A max-pool gradient is zero except at
 * the argmaxes (at most Ho Wo of H W), hence zero_trust 0.9. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_adaptive_avg_pool2d.h"
#include "aclnnop/aclnn_adaptive_avg_pool2d_backward.h"
#include "aclnnop/aclnn_avgpool2d.h"
#include "aclnnop/aclnn_avgpool2d_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "check/check.h"
#include "check/check_internal.h"
#include "check/compare.h"
#include "check/registry.h"
#include "tensor/dtype.h"

// attrs: kind, kernel (h, w) or adaptive output size, stride, padding, dilation, ceil mode,
// countIncludePad, divisorOverride, input H, W, int64 indices
enum {
    A_KIND,
    A_KH,
    A_KW,
    A_SH,
    A_SW,
    A_PH,
    A_PW,
    A_DH,
    A_DW,
    A_CEIL,
    A_CPAD,
    A_DIV,
    A_H,
    A_W,
    A_I64
};
enum { K_MAX, K_AVG, K_ADAPTIVE };

static const double a_max[] = {K_MAX, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 7, 8, 0};
static const double a_max_ceil[] = {K_MAX, 3, 3, 2, 2, 0, 0, 1, 1, 1, 0, 0, 8, 10, 0};
static const double a_max_drop[] = {K_MAX, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 5, 7, 0};
static const double a_max_dil[] = {K_MAX, 3, 3, 1, 1, 1, 1, 2, 2, 0, 0, 0, 7, 8, 0};
static const double a_max_s3[] = {K_MAX, 2, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 8, 7, 0};
static const double a_max_asym[] = {K_MAX, 3, 2, 2, 1, 1, 0, 1, 2, 1, 0, 0, 8, 7, 1};
static const double a_avg[] = {K_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 0, 7, 8, 0};
static const double a_avg_excl[] = {K_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 7, 8, 0};
static const double a_avg_ceil[] = {K_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 8, 10, 0};
static const double a_avg_ceil_excl[] = {K_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, 8, 10, 0};
static const double a_avg_div[] = {K_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 5, 7, 8, 0};
static const double a_avg_s3[] = {K_AVG, 2, 3, 3, 2, 0, 0, 1, 1, 1, 1, 0, 8, 7, 0};
static const double a_ad[] = {K_ADAPTIVE, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 5, 0};
static const double a_ad_up[] = {K_ADAPTIVE, 7, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 3, 0};
static const double a_ad_global[] = {K_ADAPTIVE, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 7, 0};

static int kind_of(const ogc_op *op) { return (int)op->attrs[A_KIND]; }
static int64_t at(const ogc_op *op, int i) { return (int64_t)op->attrs[i]; }

// The output extent along one axis, written from the rule in the aclnn docs.
static int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil, bool ceil_mode) {
    double span = (double)(in + 2 * pad - dil * (k - 1) - 1) / (double)s;
    int64_t out = (int64_t)(ceil_mode ? ceil(span) : floor(span)) + 1;
    if (ceil_mode && (out - 1) * s >= in + pad) out--;
    return out;
}

static void out_hw(const ogc_op *op, int64_t *Ho, int64_t *Wo) {
    if (kind_of(op) == K_ADAPTIVE) {
        *Ho = at(op, A_KH), *Wo = at(op, A_KW);
        return;
    }
    bool c = at(op, A_CEIL) != 0;
    *Ho = pooled(at(op, A_H), at(op, A_KH), at(op, A_SH), at(op, A_PH), at(op, A_DH), c);
    *Wo = pooled(at(op, A_W), at(op, A_KW), at(op, A_SW), at(op, A_PW), at(op, A_DW), c);
}

static bool pool_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    int64_t H = at(op, A_H), W = at(op, A_W), Ho, Wo;
    out_hw(op, &Ho, &Wo);
    ogc_shape x;
    if (!strcmp(layout, "contiguous") || !strcmp(layout, "strided") || !strcmp(layout, "offset"))
        x = (ogc_shape){.ndim = 4, .dims = {2, 3, H, W}};
    else if (!strcmp(layout, "size1"))
        x = (ogc_shape){.ndim = 3, .dims = {1, H, W}};
    else if (!strcmp(layout, "empty"))
        x = (ogc_shape){.ndim = 4, .dims = {0, 3, H, W}};
    else if (!strcmp(layout, "large") || !strcmp(layout, "wide"))
        x = (ogc_shape){.ndim = 4, .dims = {3, 37, H, W}};
    else
        return false;
    in[0] = x;
    *out = x;
    out->dims[x.ndim - 2] = Ho, out->dims[x.ndim - 1] = Wo;
    return true;
}

// ---- float64 references ---------------------------------------------------------------------

typedef struct geom {
    int64_t planes, H, W, Ho, Wo;
} geom;

static geom geom_of(const ogc_shape *x, const ogc_shape *y) {
    int r = x->ndim;
    geom g = {1, x->dims[r - 2], x->dims[r - 1], y->dims[r - 2], y->dims[r - 1]};
    for (int d = 0; d < r - 2; d++) g.planes *= x->dims[d];
    return g;
}

// The argmax (flat h W + w in its plane, -1 for none) of output (oh, ow) of plane values xp: the
// first maximum in window order (row-major over the taps). *top2 = the largest other value.
static int64_t argmax(const ogc_op *op, const geom *g, const double *xp, int64_t oh, int64_t ow,
                      double *top2) {
    int64_t best = -1;
    double m = -INFINITY, second = -INFINITY;
    for (int64_t i = 0; i < at(op, A_KH); i++)
        for (int64_t j = 0; j < at(op, A_KW); j++) {
            int64_t h = oh * at(op, A_SH) - at(op, A_PH) + i * at(op, A_DH);
            int64_t w = ow * at(op, A_SW) - at(op, A_PW) + j * at(op, A_DW);
            if (h < 0 || h >= g->H || w < 0 || w >= g->W) continue;
            double v = xp[h * g->W + w];
            if (best < 0 || v > m) {
                if (best >= 0) second = fmax(second, m);
                best = h * g->W + w, m = v;
            } else {
                second = fmax(second, v);
            }
        }
    if (top2) *top2 = second;
    return best;
}

// Avg pool: the input rows of window o along an axis of n ([*a, *b)) and the divisor's extent.
static void avg_axis(int64_t o, int64_t k, int64_t s, int64_t pad, int64_t n, bool count_pad,
                     int64_t *a, int64_t *b, int64_t *count) {
    int64_t lo = o * s - pad, hi = lo + k;
    *a = lo < 0 ? 0 : lo;
    *b = hi > n ? n : hi;
    // countIncludePad counts the padding but not what lies past it (a ceil-mode window)
    int64_t plo = lo, phi = hi > n + pad ? n + pad : hi;
    *count = count_pad ? phi - plo : *b - *a;
}

// The window of output (oh, ow) for the average pools: rows [h0, h1), columns [w0, w1), divisor.
static void avg_window(const ogc_op *op, const geom *g, int64_t oh, int64_t ow, int64_t *h0,
                       int64_t *h1, int64_t *w0, int64_t *w1, double *div) {
    if (kind_of(op) == K_ADAPTIVE) {
        *h0 = (int64_t)floor((double)(oh * g->H) / (double)g->Ho);
        *h1 = (int64_t)ceil((double)((oh + 1) * g->H) / (double)g->Ho);
        *w0 = (int64_t)floor((double)(ow * g->W) / (double)g->Wo);
        *w1 = (int64_t)ceil((double)((ow + 1) * g->W) / (double)g->Wo);
        *div = (double)((*h1 - *h0) * (*w1 - *w0));
        return;
    }
    bool cp = at(op, A_CPAD) != 0;
    int64_t ch, cw;
    avg_axis(oh, at(op, A_KH), at(op, A_SH), at(op, A_PH), g->H, cp, h0, h1, &ch);
    avg_axis(ow, at(op, A_KW), at(op, A_SW), at(op, A_PW), g->W, cp, w0, w1, &cw);
    *div = at(op, A_DIV) ? (double)at(op, A_DIV) : (double)(ch * cw);
}

static void pool_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                             const ogc_shape *out, double *y, double *const *saved, double *mag,
                             int64_t *terms) {
    geom g = geom_of(&in[0], out);
    *terms = 1;
    for (int64_t p = 0; p < g.planes; p++) {
        const double *xp = x[0] + p * g.H * g.W;
        for (int64_t oh = 0; oh < g.Ho; oh++)
            for (int64_t ow = 0; ow < g.Wo; ow++) {
                int64_t o = (p * g.Ho + oh) * g.Wo + ow;
                if (kind_of(op) == K_MAX) {
                    int64_t k = argmax(op, &g, xp, oh, ow, NULL);
                    y[o] = k >= 0 ? xp[k] : -INFINITY;
                    saved[0][o] = (double)k;
                    continue;
                }
                int64_t h0, h1, w0, w1;
                double div, m = 0;
                ogc_ksum s = {0, 0}; // compensated: far more accurate than a float64 kernel
                avg_window(op, &g, oh, ow, &h0, &h1, &w0, &w1, &div);
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++)
                        ogc_ksum_add(&s, xp[h * g.W + w]), m += fabs(xp[h * g.W + w]);
                y[o] = ogc_ksum_value(&s) / div;
                mag[o] = m / fabs(div);
                if ((h1 - h0) * (w1 - w0) > *terms) *terms = (h1 - h0) * (w1 - w0);
            }
    }
}

static void pool_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                              const ogc_shape *out, const double *const *saved, const double *gy,
                              double *const *gx, double *const *mag, int64_t *terms) {
    (void)saved; // the argmax is recomputed from x: the reference does not trust the kernel's
    geom g = geom_of(&in[0], out);
    int64_t most = 1;
    int64_t *hits = calloc((size_t)(g.H * g.W) + 1, sizeof *hits);
    // the plane's sums, compensated (windows overlap: several terms per element)
    ogc_ksum *acc = calloc((size_t)(g.H * g.W) + 1, sizeof *acc);
    for (int64_t p = 0; p < g.planes; p++) {
        const double *xp = x[0] + p * g.H * g.W;
        double *gp = gx[0] + p * g.H * g.W, *mp = mag[0] + p * g.H * g.W;
        memset(hits, 0, (size_t)(g.H * g.W) * sizeof *hits);
        memset(acc, 0, (size_t)(g.H * g.W) * sizeof *acc);
        for (int64_t oh = 0; oh < g.Ho; oh++)
            for (int64_t ow = 0; ow < g.Wo; ow++) {
                double d = gy[(p * g.Ho + oh) * g.Wo + ow];
                if (kind_of(op) == K_MAX) {
                    int64_t k = argmax(op, &g, xp, oh, ow, NULL);
                    if (k >= 0) ogc_ksum_add(&acc[k], d), mp[k] += fabs(d), hits[k]++;
                    continue;
                }
                int64_t h0, h1, w0, w1;
                double div;
                avg_window(op, &g, oh, ow, &h0, &h1, &w0, &w1, &div);
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++)
                        ogc_ksum_add(&acc[h * g.W + w], d / div), mp[h * g.W + w] += fabs(d / div),
                            hits[h * g.W + w]++;
            }
        for (int64_t i = 0; i < g.H * g.W; i++) {
            gp[i] = ogc_ksum_value(&acc[i]);
            if (hits[i] > most) most = hits[i];
        }
    }
    free(acc);
    free(hits);
    terms[0] = most;
}

// The formula check's finite differences need a clear maximum in every window.
static bool max_clear(const ogc_op *op, const ogc_shape *in, const double *const *x) {
    if (kind_of(op) != K_MAX) return true;
    int64_t Ho, Wo;
    out_hw(op, &Ho, &Wo);
    ogc_shape y = in[0];
    y.dims[y.ndim - 2] = Ho, y.dims[y.ndim - 1] = Wo;
    geom g = geom_of(&in[0], &y);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t oh = 0; oh < g.Ho; oh++)
            for (int64_t ow = 0; ow < g.Wo; ow++) {
                const double *xp = x[0] + p * g.H * g.W;
                double second;
                int64_t k = argmax(op, &g, xp, oh, ow, &second);
                if (k >= 0 && xp[k] - second < 1e-3 * fmax(1.0, fabs(xp[k]))) return false;
            }
    return true;
}

// ---- entry points ---------------------------------------------------------------------------

static aclIntArray *pair(const ogc_op *op, int i) {
    int64_t v[2] = {at(op, i), at(op, i + 1)};
    return aclCreateIntArray(v, 2);
}

typedef struct attrs {
    aclIntArray *k, *s, *p, *d;
} attrs;

static attrs attrs_of(const ogc_op *op) {
    return (attrs){pair(op, A_KH), pair(op, A_SH), pair(op, A_PH), pair(op, A_DH)};
}
static void attrs_free(attrs *a) {
    aclDestroyIntArray(a->k), aclDestroyIntArray(a->s);
    aclDestroyIntArray(a->p), aclDestroyIntArray(a->d);
}

// A contiguous integer tensor of shape dims (int32, or int64 for the asym entry) over buf.
static aclTensor *index_tensor(const ogc_op *op, const ogc_result *shape, void **buf) {
    int64_t n = 1, strides[OG_MAX_DIMS];
    for (int d = shape->ndim - 1; d >= 0; d--) strides[d] = n, n *= shape->dims[d];
    bool i64 = at(op, A_I64) != 0;
    *buf = calloc((size_t)n + 1, i64 ? 8 : 4);
    return aclCreateTensor(shape->dims, (uint64_t)shape->ndim, i64 ? ACL_INT64 : ACL_INT32, strides,
                           0, ACL_FORMAT_NCHW, shape->dims, (uint64_t)shape->ndim, *buf);
}

static int64_t numel_of(const ogc_result *r) {
    int64_t n = 1;
    for (int d = 0; d < r->ndim; d++) n *= r->dims[d];
    return n;
}

static int pool_forward(ogc_call *c) {
    const ogc_op *op = c->op;
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st;
    if (kind_of(op) == K_MAX) {
        attrs a = attrs_of(op);
        void *buf = NULL;
        aclTensor *idx = index_tensor(op, &c->results[0], &buf);
        st = aclnnMaxPool2dWithIndicesGetWorkspaceSize(c->in[0], a.k, a.s, a.p, a.d,
                                                       at(op, A_CEIL) != 0, out, idx, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnMaxPool2dWithIndices);
        // the indices as the saved result, in the case's dtype (exact: a plane has < 256 elements)
        int64_t n = numel_of(&c->results[0]);
        for (int64_t i = 0; !st && i < n; i++)
            ogc_store(c->results[1].data, i, c->results[1].dtype,
                      at(op, A_I64) ? (double)((int64_t *)buf)[i] : (double)((int32_t *)buf)[i]);
        aclDestroyTensor(idx);
        free(buf);
        attrs_free(&a);
    } else if (kind_of(op) == K_AVG) {
        attrs a = attrs_of(op);
        st = aclnnAvgPool2dGetWorkspaceSize(c->in[0], a.k, a.s, a.p, at(op, A_CEIL) != 0,
                                            at(op, A_CPAD) != 0, at(op, A_DIV), 0, out, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnAvgPool2d);
        attrs_free(&a);
    } else {
        aclIntArray *size = pair(op, A_KH);
        st = aclnnAdaptiveAvgPool2dGetWorkspaceSize(c->in[0], size, out, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnAdaptiveAvgPool2d);
        aclDestroyIntArray(size);
    }
    aclDestroyTensor(out);
    return st;
}

static int pool_backward(ogc_call *c) {
    const ogc_op *op = c->op;
    aclTensor *gx = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st;
    if (kind_of(op) == K_MAX) {
        // the saved indices (values of the case's dtype) back as an integer tensor
        const aclTensor *sv = c->saved[0];
        ogc_result shape = {.ndim = sv->ndim};
        for (int d = 0; d < sv->ndim; d++) shape.dims[d] = sv->dims[d];
        void *buf = NULL;
        aclTensor *idx = index_tensor(op, &shape, &buf);
        for (int64_t i = 0; i < numel_of(&shape); i++) {
            double v = ogc_load(sv->data, i, sv->dtype);
            if (at(op, A_I64))
                ((int64_t *)buf)[i] = (int64_t)v;
            else
                ((int32_t *)buf)[i] = (int32_t)v;
        }
        attrs a = attrs_of(op);
        st = aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
            c->grad_out, c->in[0], idx, a.k, a.s, a.p, a.d, at(op, A_CEIL) != 0, gx, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnMaxPool2dWithIndicesBackward);
        attrs_free(&a);
        aclDestroyTensor(idx);
        free(buf);
    } else if (kind_of(op) == K_AVG) {
        attrs a = attrs_of(op);
        st = aclnnAvgPool2dBackwardGetWorkspaceSize(c->grad_out, c->in[0], a.k, a.s, a.p,
                                                    at(op, A_CEIL) != 0, at(op, A_CPAD) != 0,
                                                    at(op, A_DIV), 0, gx, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnAvgPool2dBackward);
        attrs_free(&a);
    } else {
        st = aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(c->grad_out, c->in[0], gx, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnAdaptiveAvgPool2dBackward);
    }
    aclDestroyTensor(gx);
    return st;
}

#define POOL_COMMON                                                                                \
    .nin = 1, .in = {{"self", true}}, .dtypes = OG_DTS_FLOATING64, .lo = -30, .hi = 30,            \
    .fp32_ulps = 4, .forward = pool_forward, .backward = pool_backward, .shapes = pool_shapes,     \
    .ref_forward_tensor = pool_ref_forward, .ref_backward_tensor = pool_ref_backward
#define MAX_ENTRY(entry_name, attr)                                                                \
    {                                                                                              \
        .name = entry_name,                                                                        \
        .api = "aclnnMaxPool2dWithIndices + aclnnMaxPool2dWithIndicesBackward", .attrs = attr,     \
        .nsaved = 1, .saved_names = {"indices"}, .zero_trust = 0.9, .clear_of_kinks = max_clear,   \
        POOL_COMMON                                                                                \
    }
#define AVG_ENTRY(entry_name, attr)                                                                \
    {                                                                                              \
        .name = entry_name, .api = "aclnnAvgPool2d + aclnnAvgPool2dBackward", .attrs = attr,       \
        POOL_COMMON                                                                                \
    }
#define ADAPTIVE_ENTRY(entry_name, attr)                                                           \
    {                                                                                              \
        .name = entry_name, .api = "aclnnAdaptiveAvgPool2d + aclnnAdaptiveAvgPool2dBackward",      \
        .attrs = attr, POOL_COMMON                                                                 \
    }

static const ogc_op pool_ops[] = {
    MAX_ENTRY("max_pool2d", a_max),
    MAX_ENTRY("max_pool2d_ceil", a_max_ceil),
    MAX_ENTRY("max_pool2d_ceil_drop", a_max_drop),
    MAX_ENTRY("max_pool2d_dilation", a_max_dil),
    MAX_ENTRY("max_pool2d_stride3", a_max_s3),
    MAX_ENTRY("max_pool2d_asym", a_max_asym),
    AVG_ENTRY("avg_pool2d", a_avg),
    AVG_ENTRY("avg_pool2d_exclude", a_avg_excl),
    AVG_ENTRY("avg_pool2d_ceil", a_avg_ceil),
    AVG_ENTRY("avg_pool2d_ceil_exclude", a_avg_ceil_excl),
    AVG_ENTRY("avg_pool2d_divisor", a_avg_div),
    AVG_ENTRY("avg_pool2d_stride3", a_avg_s3),
    ADAPTIVE_ENTRY("adaptive_avg_pool2d", a_ad),
    ADAPTIVE_ENTRY("adaptive_avg_pool2d_up", a_ad_up),
    ADAPTIVE_ENTRY("adaptive_avg_pool2d_global", a_ad_global),
};

OGC_DEFINE_FAMILY(pool, pool_ops)
