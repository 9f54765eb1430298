/* Registry entries of the 'embedding' family (aclnnEmbedding + aclnnEmbeddingDenseBackward):
 *
 *   embedding            int64 indices, no padding (paddingIdx = (uint64_t)-1)
 *   embedding_int32      int32 indices
 *   embedding_padding    paddingIdx = 2: that row's gradient is zero
 *   embedding_freq       scaleGradByFreq: each row's gradient divided by its index count
 *   embedding_pad_freq   both
 *   embedding_oob        indices from -1 to V: an index outside [0, V) reads a zero row and
 *                        contributes no gradient (opgrad's defined behaviour)
 *
 * attrs = {paddingIdx (-1: none), scaleGradByFreq, index dtype, out-of-range}. Inputs: weight
 * [V, D] = [6, 5] (differentiable; V = numel / 3 for fewer than 18 indices, so that most rows
 * get a gradient, and 0 for none), and the indices, which the checker draws as doubles in the
 * layout's shape (non-differentiable): the entry points map each drawn value v to an integer
 * (index_of: integers to (v - lo) mod V, others through a scrambled uniform, out-of-range ones
 * -1 and V for about 8% of the non-integers), and the references apply the same mapping to the same
 * values. With 6 rows and tens of positions every index repeats: the gradient is the float64
 * scatter-add, which a kernel that overwrites instead of accumulating, or a row padded or scaled
 * wrongly, fails. paddingIdx and scaleGradByFreq make the backward something other than the
 * gradient of the lookup, so those entries check it as the exact gradient of a composite forward
 * that the entry point forms from aclnnEmbedding's output: padding positions' rows zeroed, each row
 * divided by its index's count (compose()). The plain entries check aclnnEmbedding alone. The mixed
 * layout does not apply (the gradient's dtype is out's: aclnn takes one dtype). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_embedding.h"
#include "aclnnop/aclnn_embedding_dense_backward.h"
#include "check/check.h"
#include "check/compare.h"
#include "check/registry.h"
#include "tensor/dtype.h"

enum { EMB_V = 6, EMB_D = 5 };
#define EMB_LO (-2.0)
#define EMB_HI 2.0

// attrs: paddingIdx, scaleGradByFreq, indices int32, out-of-range indices
static const double a_plain[] = {-1, 0, 0, 0}, a_int32[] = {-1, 0, 1, 0}, a_pad[] = {2, 0, 0, 0},
                    a_freq[] = {-1, 1, 0, 0}, a_padfreq[] = {2, 1, 0, 0}, a_oob[] = {-1, 0, 0, 1};

// The index a drawn value stands for.
static int64_t index_of(const ogc_op *op, int64_t V, double v) {
    // The checker's test points crowd the domain's ends and small integers (clamped values):
    // an integer v maps to (v - lo) mod V, in range; any other v to a slot of a scrambled
    // uniform frac(997 (v - lo) / (hi - lo)), which spreads the draws over the rows.
    if (v == floor(v)) return ((int64_t)(v - EMB_LO) % V + V) % V;
    // out-of-range indices on the full-size weight only (a few positions could all land there):
    // of 4V + 2 slots, the lowest gives -1 and the highest V (about 8% of the non-integers)
    bool oob = op->attrs[3] != 0 && V == EMB_V;
    int64_t span = oob ? 4 * V + 2 : V;
    double u = (v - EMB_LO) / (EMB_HI - EMB_LO) * 997.0;
    int64_t k = (int64_t)floor((u - floor(u)) * (double)span);
    if (k < 0) k = 0;
    if (k > span - 1) k = span - 1;
    if (!oob) return k;
    return k == 0 ? -1 : k == span - 1 ? V : (k - 1) / 4;
}

static bool emb_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)op;
    if (!strcmp(layout, "mixed") || !strncmp(layout, "bcast", 5)) return false;
    in[1] = in[0]; // the layout's shape: the indices
    if (in[1].ndim > 7) in[1].ndim = 7;
    // weight [V, D]: V = 6, fewer for few indices (about 3 positions per row, else most rows
    // would get no gradient and the data would say little), none for no indices
    int64_t n = 1;
    for (int d = 0; d < in[1].ndim; d++) n *= in[1].dims[d];
    in[0].ndim = 2, in[0].dims[0] = n / 3 > EMB_V ? EMB_V : n / 3 < 1 ? (n > 0) : n / 3;
    in[0].dims[1] = EMB_D;
    *out = in[1];
    out->dims[out->ndim++] = EMB_D;
    return true;
}

static int64_t numel_of(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

static void emb_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                            const ogc_shape *out, double *y, double *const *saved, double *mag,
                            int64_t *terms) {
    (void)out, (void)saved, (void)mag;
    int64_t n = numel_of(&in[1]), V = in[0].dims[0], count[EMB_V] = {0};
    for (int64_t j = 0; j < n; j++) {
        int64_t r = index_of(op, V, x[1][j]);
        if (r >= 0 && r < V) count[r]++;
    }
    for (int64_t j = 0; j < n; j++) {
        int64_t r = index_of(op, V, x[1][j]);
        bool valid = r >= 0 && r < V && r != (int64_t)op->attrs[0];
        double div = valid && op->attrs[1] != 0 ? (double)count[r] : 1.0;
        for (int d = 0; d < EMB_D; d++) y[j * EMB_D + d] = valid ? x[0][r * EMB_D + d] / div : 0.0;
    }
    *terms = 1;
}

static void emb_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                             const ogc_shape *out, const double *const *saved, const double *gy,
                             double *const *gx, double *const *mag, int64_t *terms) {
    (void)out, (void)saved;
    int64_t n = numel_of(&in[1]), V = in[0].dims[0], count[EMB_V] = {0}, most = 1;
    for (int64_t j = 0; j < n; j++) {
        int64_t r = index_of(op, V, x[1][j]);
        if (r < 0 || r >= V) continue;
        count[r]++;
        for (int d = 0; d < EMB_D; d++) {
            gx[0][r * EMB_D + d] += gy[j * EMB_D + d];
            mag[0][r * EMB_D + d] += fabs(gy[j * EMB_D + d]);
        }
    }
    int64_t pad = (int64_t)op->attrs[0];
    for (int64_t r = 0; r < V; r++) {
        if (count[r] > most) most = count[r];
        double div = op->attrs[1] != 0 && count[r] > 0 ? (double)count[r] : 1.0;
        for (int d = 0; d < EMB_D; d++) {
            if (r == pad) gx[0][r * EMB_D + d] = mag[0][r * EMB_D + d] = 0;
            gx[0][r * EMB_D + d] /= div;
            mag[0][r * EMB_D + d] /= div;
        }
    }
    terms[0] = most;
}

// Element i (row-major) of a floating view, as the checker laid it out.
static double load_view(const aclTensor *t, int64_t i) {
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->dims[d]) * t->strides[d];
        i /= t->dims[d];
    }
    return ogc_load(t->data, off, t->dtype);
}

// The drawn indices as an int64 / int32 tensor of the same shape (contiguous); *buf to free.
static aclTensor *index_tensor(const ogc_op *op, int64_t V, const aclTensor *drawn, void **buf) {
    int64_t n = 1;
    for (int d = 0; d < drawn->ndim; d++) n *= drawn->dims[d];
    bool i32 = op->attrs[2] != 0;
    size_t es = i32 ? 4 : 8;
    *buf = calloc((size_t)n + 1, es);
    for (int64_t i = 0; i < n; i++) {
        int64_t r = index_of(op, V, load_view(drawn, i));
        if (i32)
            ((int32_t *)*buf)[i] = (int32_t)r;
        else
            ((int64_t *)*buf)[i] = r;
    }
    int64_t strides[8];
    for (int d = drawn->ndim - 1, s = 1; d >= 0; d--) strides[d] = s, s *= (int)drawn->dims[d];
    return aclCreateTensor(drawn->dims, (uint64_t)drawn->ndim, i32 ? ACL_INT32 : ACL_INT64, strides,
                           0, ACL_FORMAT_ND, drawn->dims, (uint64_t)drawn->ndim, *buf);
}

// The padding and frequency entries check the backward's modified gradient as the exact
// gradient of a composite forward: aclnnEmbedding's output with the padding positions' rows
// zeroed and every row divided by its index's count (in double, rounded once: the copy is exact).
static void compose(const ogc_op *op, int64_t V, const void *idx, ogc_result *r) {
    int64_t n = 1, count[EMB_V] = {0}, pad = (int64_t)op->attrs[0];
    for (int d = 0; d < r->ndim - 1; d++) n *= r->dims[d];
    bool i32 = op->attrs[2] != 0;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t j = 0; j < n; j++) {
            int64_t k = i32 ? ((const int32_t *)idx)[j] : ((const int64_t *)idx)[j];
            if (k < 0 || k >= V) continue;
            if (pass == 0) {
                count[k]++;
                continue;
            }
            double div = op->attrs[1] != 0 ? (double)count[k] : 1.0;
            for (int d = 0; d < EMB_D; d++) {
                int64_t e = j * EMB_D + d;
                ogc_store(r->data, e, r->dtype,
                          k == pad ? 0.0 : ogc_load(r->data, e, r->dtype) / div);
            }
        }
}

static int emb_forward(ogc_call *c) {
    void *buf = NULL;
    aclTensor *idx = index_tensor(c->op, c->in[0]->dims[0], c->in[1], &buf);
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnEmbeddingGetWorkspaceSize(c->in[0], idx, out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnEmbedding);
    if (!st && (c->op->attrs[0] >= 0 || c->op->attrs[1] != 0))
        compose(c->op, c->in[0]->dims[0], buf, &c->results[0]);
    aclDestroyTensor(out);
    aclDestroyTensor(idx);
    free(buf);
    return st;
}

static int emb_backward(ogc_call *c) {
    void *buf = NULL;
    aclTensor *idx = index_tensor(c->op, c->in[0]->dims[0], c->in[1], &buf);
    aclTensor *gw = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    uint64_t pad = (uint64_t)(int64_t)c->op->attrs[0];
    int st = aclnnEmbeddingDenseBackwardGetWorkspaceSize(
        c->grad_out, idx, (uint64_t)c->in[0]->dims[0], pad, c->op->attrs[1] != 0, gw, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnEmbeddingDenseBackward);
    aclDestroyTensor(gw);
    aclDestroyTensor(idx);
    free(buf);
    return st;
}

#define EMB_ENTRY(entry_name, attr)                                                                \
    {                                                                                              \
        .name = entry_name, .api = "aclnnEmbedding + aclnnEmbeddingDenseBackward", .nin = 2,       \
        .in = {{"weight", true}, {"indices", false}}, .attrs = attr, .dtypes = OG_DTS_FLOATING64,  \
        .lo = EMB_LO, .hi = EMB_HI, .fp32_ulps = 4, .forward = emb_forward,                        \
        .backward = emb_backward, .shapes = emb_shapes, .ref_forward_tensor = emb_ref_forward,     \
        .ref_backward_tensor = emb_ref_backward,                                                   \
    }

static const ogc_op embedding_ops[] = {
    EMB_ENTRY("embedding", a_plain),
    EMB_ENTRY("embedding_int32", a_int32),
    EMB_ENTRY("embedding_padding", a_pad),
    EMB_ENTRY("embedding_freq", a_freq),
    EMB_ENTRY("embedding_pad_freq", a_padfreq),
    EMB_ENTRY("embedding_oob", a_oob),
};

OGC_DEFINE_FAMILY(embedding, embedding_ops)
