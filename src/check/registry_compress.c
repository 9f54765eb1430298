/* Registry entries of the 'compress' family (the gradient compressors of
 * include/aclnnop/aclnn_grad_compress.h, an opgrad extension). Forward-only entries: nothing is
 * differentiable; inputs x and residual (drawn like any input, quantized to the case's dtype).
 *
 *   grad_compress_cast_fp16 / _bf16        aclnnGradCompressCast, round to nearest even
 *   grad_compress_cast_fp16_sr / _bf16_sr  the same with stochastic rounding (seed 7, offset 3)
 *   grad_compress_topk_half / _tenth       aclnnGradCompressTopK + aclnnGradDecompressTopK,
 *                                          k = ceil(fraction n), fraction 1/2 and 1/10
 *   grad_compress_sign                     aclnnGradCompressSign + aclnnGradDecompressSign
 *   grad_orthonormalize_r2 / _r3           aclnnGradOrthonormalize (PowerSGD's P), [N / r, r]
 *
 * Results (fp32, x's shape): [0] what is sent, decompressed (the 16-bit value widened; the top-k
 * entries scattered into zeros; +-scale), [1] the residual after the call. The operator updates
 * the residual in place: the entry copies the case's residual into result [1] and lets the
 * operator update that copy.
 *
 * The float64 references follow the definitions of aclnn_grad_compress.h: y = x + residual
 * rounded to fp32 (the operators' documented working precision), the 16-bit formats' rounding
 * from their exponent / significand widths, the stochastic draw from SplitMix64 as documented,
 * the top-k selection from a full sort (|y| descending, index ascending), the sign scale as the
 * mean of |y| rounded to fp32 (scaleOut's dtype: what is sent). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_grad_compress.h"
#include "check/check.h"
#include "check/registry.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

// ---- helpers --------------------------------------------------------------------------------
static int64_t numel_of(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

// x and the residual have the output's shape (no broadcasting: a residual is per element).
static bool cmp_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)op, (void)layout;
    for (int k = 0; k < 2; k++) {
        if (in[k].ndim != out->ndim) return false;
        for (int d = 0; d < out->ndim; d++)
            if (in[k].dims[d] != out->dims[d]) return false;
    }
    return true;
}

// Element i (row-major) of a tensor of any layout, as float.
static float elem(const aclTensor *t, int64_t i) {
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->dims[d]) * t->strides[d];
        i /= t->dims[d];
    }
    const char *p = (const char *)t->data;
    switch (t->dtype) {
    case ACL_FLOAT16:
        return og_f16_to_f32(((const uint16_t *)p)[off]);
    case ACL_BF16:
        return og_bf16_to_f32(((const uint16_t *)p)[off]);
    default:
        return ((const float *)p)[off];
    }
}

// The residual's copy in result 1 (fp32, contiguous): the tensor the operator updates.
static aclTensor *residual_copy(ogc_call *c) {
    float *r = c->results[1].data;
    for (int64_t i = 0; i < c->in[1]->numel; i++) r[i] = elem(c->in[1], i);
    return ogc_result_tensor(&c->results[1]);
}

static aclTensor *tensor1(int64_t n, aclDataType dt, void *data) {
    int64_t st = 1;
    return aclCreateTensor(&n, 1, dt, &st, 0, ACL_FORMAT_ND, &n, 1, data);
}

// y = x + r rounded to fp32, as the operators define it.
static double y_of(const double *const *x, int64_t i) { return (double)(float)(x[0][i] + x[1][i]); }

// ---- cast -----------------------------------------------------------------------------------
enum { A_BF16, A_SR, A_SEED, A_OFFSET };
static const double cast_fp16[] = {0, 0, 0, 0}, cast_bf16[] = {1, 0, 0, 0},
                    cast_fp16_sr[] = {0, 1, 7, 3}, cast_bf16_sr[] = {1, 1, 7, 3};

// The format's spacing at y: significand bits p, smallest normal exponent emin.
static double spacing(double y, bool bf16) {
    int p = bf16 ? 8 : 11, emin = bf16 ? -126 : -14, e;
    frexp(y, &e); // |y| in [2^(e-1), 2^e)
    int ex = e - 1 < emin ? emin : e - 1;
    return ldexp(1.0, ex - (p - 1));
}

static uint64_t splitmix_fin(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double round_ref(const ogc_op *op, double y, int64_t i) {
    bool bf16 = op->attrs[A_BF16] != 0;
    double maxv = bf16 ? 0x1.FEp127 : 65504.0;
    if (y == 0 || !isfinite(y)) return y;
    double q = spacing(y, bf16), t = y / q; // exact: q is a power of two
    if (op->attrs[A_SR] == 0) {
        double r = q * nearbyint(t); // the default mode: to nearest, ties to even
        return fabs(r) > maxv ? copysign(INFINITY, y) : r;
    }
    double lo = q * trunc(t);
    if (lo == y) return y;
    double hi = lo + copysign(q, y);
    if (fabs(hi) > maxv) return lo;
    uint64_t key = splitmix_fin((uint64_t)(int64_t)op->attrs[A_SEED] ^ 0x9E3779B97F4A7C15ull);
    double u =
        (double)(splitmix_fin(key + (uint64_t)(int64_t)op->attrs[A_OFFSET] + (uint64_t)i) >> 40) /
        16777216.0;
    return u < (fabs(y) - fabs(lo)) / q ? hi : lo;
}

static void cast_ref(const ogc_op *op, const ogc_shape *in, const double *const *x,
                     const ogc_shape *out, double *y, double *const *saved, double *mag,
                     int64_t *terms) {
    (void)in, (void)mag;
    for (int64_t i = 0; i < numel_of(out); i++) {
        double v = y_of(x, i);
        y[i] = round_ref(op, v, i);
        saved[0][i] = v - y[i];
    }
    *terms = 2;
}

static int cast_forward(ogc_call *c) {
    const ogc_op *op = c->op;
    aclTensor *r = residual_copy(c);
    int64_t n = c->in[0]->numel;
    ogc_result *o = &c->results[0];
    aclDataType dt = op->attrs[A_BF16] != 0 ? ACL_BF16 : ACL_FLOAT16;
    // the 16-bit output in result 0's buffer, then widened in place from the last element down
    // (element i's fp32 bytes [4i, 4i + 4) only cover 16-bit elements >= 2i, already widened)
    aclTensor *h =
        aclCreateTensor(o->dims, o->ndim, dt, NULL, 0, ACL_FORMAT_ND, o->dims, o->ndim, o->data);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnGradCompressCastGetWorkspaceSize(c->in[0], r, op->attrs[A_SR] != 0,
                                                   (int64_t)op->attrs[A_SEED],
                                                   (int64_t)op->attrs[A_OFFSET], h, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnGradCompressCast);
    if (!st)
        for (int64_t i = n - 1; i >= 0; i--) {
            uint16_t b = ((const uint16_t *)o->data)[i];
            ((float *)o->data)[i] = dt == ACL_BF16 ? og_bf16_to_f32(b) : og_f16_to_f32(b);
        }
    aclDestroyTensor(h), aclDestroyTensor(r);
    return st;
}

// ---- top-k ----------------------------------------------------------------------------------
static const double topk_half[] = {0.5}, topk_tenth[] = {0.1};

static int64_t k_of(const ogc_op *op, int64_t n) { return (int64_t)ceil(op->attrs[0] * (double)n); }

static const double *sort_y;
static int by_mag_index(const void *a, const void *b) {
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    double u = fabs(sort_y[i]), v = fabs(sort_y[j]);
    if (u != v) return u > v ? -1 : 1;
    return i < j ? -1 : 1;
}

static void topk_ref(const ogc_op *op, const ogc_shape *in, const double *const *x,
                     const ogc_shape *out, double *y, double *const *saved, double *mag,
                     int64_t *terms) {
    (void)in, (void)mag;
    int64_t n = numel_of(out), k = k_of(op, n);
    double *v = malloc((size_t)(n + 1) * sizeof *v);
    int64_t *ord = malloc((size_t)(n + 1) * sizeof *ord);
    for (int64_t i = 0; i < n; i++) v[i] = y_of(x, i), ord[i] = i;
    sort_y = v;
    qsort(ord, (size_t)n, sizeof *ord, by_mag_index);
    for (int64_t i = 0; i < n; i++) y[i] = 0, saved[0][i] = v[i];
    for (int64_t j = 0; j < k; j++) y[ord[j]] = v[ord[j]], saved[0][ord[j]] = 0;
    free(v), free(ord);
    *terms = 2;
}

static int topk_forward(ogc_call *c) {
    aclTensor *r = residual_copy(c);
    int64_t n = c->in[0]->numel, k = k_of(c->op, n);
    float *vals = calloc((size_t)k + 1, sizeof *vals);
    int64_t *idx = calloc((size_t)k + 1, sizeof *idx);
    aclTensor *tv = tensor1(k, ACL_FLOAT, vals), *ti = tensor1(k, ACL_INT64, idx);
    aclTensor *o = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnGradCompressTopKGetWorkspaceSize(c->in[0], r, tv, ti, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnGradCompressTopK);
    if (!st) st = aclnnGradDecompressTopKGetWorkspaceSize(tv, ti, o, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnGradDecompressTopK);
    aclDestroyTensor(tv), aclDestroyTensor(ti), aclDestroyTensor(o), aclDestroyTensor(r);
    free(vals), free(idx);
    return st;
}

// ---- sign -----------------------------------------------------------------------------------
static void sign_ref(const ogc_op *op, const ogc_shape *in, const double *const *x,
                     const ogc_shape *out, double *y, double *const *saved, double *mag,
                     int64_t *terms) {
    (void)op, (void)in;
    int64_t n = numel_of(out);
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += fabs(y_of(x, i));
    // the scale is sent as fp32 (scaleOut is FLOAT): the residual is relative to that value
    s = n ? (double)(float)(s / (double)n) : 0;
    for (int64_t i = 0; i < n; i++) {
        double v = y_of(x, i);
        y[i] = v >= 0 ? s : -s;
        saved[0][i] = v - y[i];
        mag[i] = s; // the scale: a mean of n terms
    }
    *terms = n > 0 ? n : 1;
}

static int sign_forward(ogc_call *c) {
    aclTensor *r = residual_copy(c);
    int64_t n = c->in[0]->numel, nb = (n + 7) / 8;
    uint8_t *bits = calloc((size_t)nb + 1, 1);
    float *scale = calloc(1, sizeof *scale);
    aclTensor *tb = tensor1(nb, ACL_UINT8, bits), *ts = tensor1(1, ACL_FLOAT, scale);
    aclTensor *o = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnGradCompressSignGetWorkspaceSize(c->in[0], r, tb, ts, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnGradCompressSign);
    if (!st) st = aclnnGradDecompressSignGetWorkspaceSize(tb, ts, o, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnGradDecompressSign);
    aclDestroyTensor(tb), aclDestroyTensor(ts), aclDestroyTensor(o), aclDestroyTensor(r);
    free(bits), free(scale);
    return st;
}

// ---- orthonormalize --------------------------------------------------------------------------
static const double orth_r2[] = {2}, orth_r3[] = {3};

// P is [N / r, r] (N the layout's element count): a layout whose count r does not divide, or that
// leaves fewer rows than columns, does not apply.
static bool orth_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)layout;
    int64_t n = numel_of(&in[0]), r = (int64_t)op->attrs[0];
    if (n % r != 0 || (n > 0 && n / r < r)) return false;
    in[0].ndim = 2, in[0].dims[0] = n / r, in[0].dims[1] = r;
    *out = in[0];
    return true;
}

// Modified Gram-Schmidt in float64; mag: the same sums with |terms|, over the column's norm.
static void orth_ref(const ogc_op *op, const ogc_shape *in, const double *const *x,
                     const ogc_shape *out, double *y, double *const *saved, double *mag,
                     int64_t *terms) {
    (void)out, (void)saved;
    int64_t n = in[0].dims[0], r = (int64_t)op->attrs[0];
    for (int64_t i = 0; i < n * r; i++) y[i] = x[0][i], mag[i] = fabs(x[0][i]);
    for (int64_t j = 0; j < r; j++) {
        for (int64_t i = 0; i < j; i++) {
            double d = 0;
            for (int64_t k = 0; k < n; k++) d += y[k * r + i] * y[k * r + j];
            for (int64_t k = 0; k < n; k++) {
                y[k * r + j] -= d * y[k * r + i];
                mag[k * r + j] += fabs(d * y[k * r + i]);
            }
        }
        double s = 0;
        for (int64_t k = 0; k < n; k++) s += y[k * r + j] * y[k * r + j];
        double norm = sqrt(s), inv = norm > 1e-8 ? 1 / norm : 0;
        for (int64_t k = 0; k < n; k++) y[k * r + j] *= inv, mag[k * r + j] *= inv;
    }
    *terms = n > 0 ? n : 1;
}

static int orth_forward(ogc_call *c) {
    float *p = c->results[0].data;
    for (int64_t i = 0; i < c->in[0]->numel; i++) p[i] = elem(c->in[0], i);
    aclTensor *t = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnGradOrthonormalizeGetWorkspaceSize(t, 1e-8, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnGradOrthonormalize);
    aclDestroyTensor(t);
    return st;
}

#define CMP_ENTRY(entry_name, api_name, attr, fwd, ref, zeros)                                     \
    {                                                                                              \
        .name = entry_name, .api = api_name, .nin = 2, .in = {{"x", false}, {"residual", false}},  \
        .nsaved = 1, .saved_names = {"residual"}, .attrs = attr, .dtypes = OG_DTS_FLOATING,        \
        .lo = -3, .hi = 3, .fp32_ulps = 2, .fp32_output = true, .zero_trust = zeros,               \
        .forward = fwd, .shapes = cmp_shapes, .ref_forward_tensor = ref,                           \
    }

static const ogc_op compress_ops[] = {
    CMP_ENTRY("grad_compress_cast_fp16", "aclnnGradCompressCast", cast_fp16, cast_forward, cast_ref,
              0),
    CMP_ENTRY("grad_compress_cast_bf16", "aclnnGradCompressCast", cast_bf16, cast_forward, cast_ref,
              0),
    CMP_ENTRY("grad_compress_cast_fp16_sr", "aclnnGradCompressCast", cast_fp16_sr, cast_forward,
              cast_ref, 0),
    CMP_ENTRY("grad_compress_cast_bf16_sr", "aclnnGradCompressCast", cast_bf16_sr, cast_forward,
              cast_ref, 0),
    CMP_ENTRY("grad_compress_topk_half", "aclnnGradCompressTopK + aclnnGradDecompressTopK",
              topk_half, topk_forward, topk_ref, 0),
    CMP_ENTRY("grad_compress_topk_tenth", "aclnnGradCompressTopK + aclnnGradDecompressTopK",
              topk_tenth, topk_forward, topk_ref, 0.95),
    {
        .name = "grad_orthonormalize_r2",
        .api = "aclnnGradOrthonormalize",
        .nin = 1,
        .in = {{"p", false}},
        .attrs = orth_r2,
        .dtypes = OG_DTS_FLOATING,
        .lo = -3,
        .hi = 3,
        .fp32_ulps = 8,
        .fp32_output = true,
        .forward = orth_forward,
        .shapes = orth_shapes,
        .ref_forward_tensor = orth_ref,
    },
    {
        .name = "grad_orthonormalize_r3",
        .api = "aclnnGradOrthonormalize",
        .nin = 1,
        .in = {{"p", false}},
        .attrs = orth_r3,
        .dtypes = OG_DTS_FLOATING,
        .lo = -3,
        .hi = 3,
        .fp32_ulps = 8,
        .fp32_output = true,
        .forward = orth_forward,
        .shapes = orth_shapes,
        .ref_forward_tensor = orth_ref,
    },
    CMP_ENTRY("grad_compress_sign", "aclnnGradCompressSign + aclnnGradDecompressSign", NULL,
              sign_forward, sign_ref, 0),
};

OGC_DEFINE_FAMILY(compress, compress_ops)
