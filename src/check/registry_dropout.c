/* Registry entries of the 'dropout' family (aclnnDropout + aclnnDropoutBackward):
 *
 *   dropout_p10, dropout_p50, dropout_p90   train, p = 0.1 / 0.5 / 0.9, each its own seed and
 *                                           offset (an offset past 2^32 blocks on p90)
 *   dropout_eval                            train = false: out = input, the mask untouched; the
 *                                           backward with scale 1 (gradOutput as it is)
 *
 * attrs = {p, train, seed, offset}. The forward saves the mask as "keep", a tensor of the
 * output's shape and dtype holding each element's bit (0 or 1), which the entry point unpacks
 * from the uint8 bit mask (bit i at byte i / 8, least significant first) and the backward's
 * entry point packs again. The float64 reference derives every bit from the documented
 * definition (ref_dropout.c, not the kernel): y = x keep / (1 - p), keep compared as a result,
 * and dL/dx = dL/dy keep / (1 - p) is exact given the mask. A mask of another bit order, seed
 * or counter, a backward without its 1 / (1 - p) or with it twice, fail here.
 * p90 drops 90% of the outputs by design: its trust threshold for zero outputs is 0.97. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_dropout.h"
#include "aclnnop/aclnn_dropout_backward.h"
#include "check/check.h"
#include "check/compare.h"
#include "check/ref_dropout.h"
#include "check/registry.h"
#include "tensor/dtype.h"

// attrs: p, train, seed, offset. The seeds (0x1234567800000000 and -2^40 + 9 use both key words)
// are picked so that the small layouts keep element 0 and a few more: the mask is fixed by them,
// so a redraw of the data would not help a layout whose elements all drop.
static const double a_p10[] = {0.1, 1, 42, 0}, a_p50[] = {0.5, 1, 1311768464867721216.0, 3},
                    a_p90[] = {0.9, 1, -1099511627767.0, 4294967296.0 - 2},
                    a_eval[] = {0.5, 0, 42, 0};

static bool training(const ogc_op *op) {
    return op->attrs[1] != 0 && op->attrs[0] > 0 && op->attrs[0] < 1;
}

// The mixed layout does not apply: aclnn computes in gradOutput's dtype and casts the result to
// out's, so a bf16 gradOutput gives a bf16-rounded gradient by definition.
static bool dr_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)op, (void)in, (void)out;
    return strcmp(layout, "mixed") != 0;
}

static bool keep_of(const ogc_op *op, int64_t i) {
    return og_ref_dropout_keep((int64_t)op->attrs[2], (int64_t)op->attrs[3], op->attrs[0],
                               (uint64_t)i);
}

static int64_t numel_of(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

static void dr_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                           const ogc_shape *out, double *y, double *const *saved, double *mag,
                           int64_t *terms) {
    (void)out, (void)mag;
    int64_t n = numel_of(&in[0]);
    for (int64_t i = 0; i < n; i++) {
        if (!training(op)) {
            y[i] = x[0][i];
            continue;
        }
        bool k = keep_of(op, i);
        y[i] = k ? x[0][i] / (1.0 - op->attrs[0]) : 0.0;
        saved[0][i] = k;
    }
    *terms = 1;
}

static void dr_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                            const ogc_shape *out, const double *const *saved, const double *gy,
                            double *const *gx, double *const *mag, int64_t *terms) {
    (void)x, (void)out, (void)saved, (void)mag;
    int64_t n = numel_of(&in[0]);
    for (int64_t i = 0; i < n; i++)
        gx[0][i] = !training(op) ? gy[i] : keep_of(op, i) ? gy[i] / (1.0 - op->attrs[0]) : 0.0;
    terms[0] = 1;
}

// A contiguous 1-D uint8 mask of align(n, 128) / 8 bytes over buf.
static aclTensor *mask_tensor(int64_t n, uint8_t **buf) {
    int64_t bytes = (n + 127) / 128 * 16, stride = 1;
    *buf = calloc((size_t)bytes + 1, 1);
    return aclCreateTensor(&bytes, 1, ACL_UINT8, &stride, 0, ACL_FORMAT_ND, &bytes, 1, *buf);
}

static int dr_forward(ogc_call *c) {
    int64_t n = 1;
    for (int d = 0; d < c->in[0]->ndim; d++) n *= c->in[0]->dims[d];
    uint8_t *bits = NULL;
    aclTensor *m = mask_tensor(n, &bits);
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    const double *a = c->op->attrs;
    int st = aclnnDropoutGetWorkspaceSize(c->in[0], a[0], a[1] != 0, (int64_t)a[2], (int64_t)a[3],
                                          out, m, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnDropout);
    if (!st && c->nresults > 1) { // the mask, unpacked into "keep"
        ogc_result *k = &c->results[1];
        for (int64_t i = 0; i < n; i++)
            ogc_store(k->data, i, k->dtype, (double)((bits[i / 8] >> (i % 8)) & 1));
    }
    aclDestroyTensor(out);
    aclDestroyTensor(m);
    free(bits);
    return st;
}

static int dr_backward(ogc_call *c) {
    const aclTensor *g = c->grad_out;
    int64_t n = 1;
    for (int d = 0; d < g->ndim; d++) n *= g->dims[d];
    uint8_t *bits = NULL;
    aclTensor *m = mask_tensor(n, &bits);
    double scale = 1;
    if (training(c->op)) { // pack "keep" (contiguous) into the bit mask
        const aclTensor *k = c->saved[0];
        for (int64_t i = 0; i < n; i++)
            if (ogc_load(k->data, k->offset + i, k->dtype) != 0)
                bits[i / 8] |= (uint8_t)(1u << (i % 8));
        scale = 1.0 / (1.0 - c->op->attrs[0]);
    }
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnDropoutBackwardGetWorkspaceSize(g, m, scale, dx, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnDropoutBackward);
    aclDestroyTensor(dx);
    aclDestroyTensor(m);
    free(bits);
    return st;
}

#define DROPOUT_ENTRY(entry_name, attr, nsaved_, trust)                                            \
    {                                                                                              \
        .name = entry_name, .api = "aclnnDropout + aclnnDropoutBackward", .nin = 1,                \
        .in = {{"input", true}}, .nsaved = nsaved_, .saved_names = {"keep"}, .attrs = attr,        \
        .dtypes = OG_DTS_FLOATING64, .lo = -2, .hi = 2, .fp32_ulps = 2, .zero_trust = trust,       \
        .forward = dr_forward, .backward = dr_backward, .shapes = dr_shapes,                       \
        .ref_forward_tensor = dr_ref_forward, .ref_backward_tensor = dr_ref_backward,              \
    }

static const ogc_op dropout_ops[] = {
    DROPOUT_ENTRY("dropout_p10", a_p10, 1, 0),
    DROPOUT_ENTRY("dropout_p50", a_p50, 1, 0),
    DROPOUT_ENTRY("dropout_p90", a_p90, 1, 0.97),
    DROPOUT_ENTRY("dropout_eval", a_eval, 0, 0),
};

OGC_DEFINE_FAMILY(dropout, dropout_ops)
