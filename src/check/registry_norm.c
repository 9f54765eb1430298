/* Registry entries of the 'norm' family (see registry.h for how families are listed):
 *
 *   layer_norm[_...]   aclnnLayerNorm + aclnnLayerNormBackward over the last 1 or 2 dims, with or
 *                      without weight / bias; the entry's differentiable inputs are the
 *                      backward's outputMask (x: gradInput, weight: gradWeight, bias: gradBias),
 *                      so every mask with a gradient is an entry
 *   rms_norm[_2d]      aclnnRmsNorm + aclnnRmsNormGrad over the last 1 or 2 dims
 *   add_layer_norm     aclnnAddLayerNorm + aclnnAddLayerNormGrad (x = x1 + x2)
 *   add_rms_norm       aclnnAddRmsNorm + aclnnRmsNormGrad at the saved xOut
 *
 * attrs = {normalized rank, eps, has weight, has bias, residual}. The forward's saved mean and rstd
 * are checked as outputs: the checker holds saved tensors in the output's shape, so the entry point
 * writes them through a [A..., 1...] view of the saved buffer (one element per row, at the row's
 * first element) and repeats each along its row; the backward reads them through the same kind
 * of view (RmsNormGrad's rstd at 16-bit dtypes: a FLOAT [A...] copy, its other accepted shape).
 * The float64 references (here) work on rows [A...] x R from the math: mean, biased variance,
 * rstd = 1 / sqrt(var + eps); the backward at the saved mean / rstd the kernel read. The
 * "wide" layout is replaced by more rows than three of the row engine's column groups
 * (OG_ROWS_GROUP), so that the weight gradients' group sums and their reduction are checked at
 * every thread count; a row of one element (LayerNorm's output is then the bias) is SKIPPED, and
 * so is the empty layout for entries with a weight (its gradient is a sum over no rows). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add_layer_norm.h"
#include "aclnnop/aclnn_add_layer_norm_grad.h"
#include "aclnnop/aclnn_add_rms_norm.h"
#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "aclnnop/aclnn_rms_norm.h"
#include "aclnnop/aclnn_rms_norm_grad.h"
#include "check/check.h"
#include "check/compare.h"
#include "check/registry.h"
#include "engine/rows.h"
#include "tensor/dtype.h"

enum { A_NR, A_EPS, A_W, A_B, A_ADD }; // A_ADD: the residual forms (x = x1 + x2)

static bool is_rms(const ogc_op *op) { return strstr(op->name, "rms") != NULL; }

static int nr_of(const ogc_op *op) { return (int)op->attrs[A_NR]; }
static bool is_add(const ogc_op *op) { return op->attrs[A_ADD] != 0; }

// The index of the weight / bias among the inputs (-1: none): after x, or after x1 and x2.
static int weight_index(const ogc_op *op) { return op->attrs[A_W] != 0 ? 1 + is_add(op) : -1; }
static int bias_index(const ogc_op *op) {
    return op->attrs[A_B] != 0 ? 1 + is_add(op) + (op->attrs[A_W] != 0) : -1;
}

// The normalized input: x[0], or x1 + x2 (into *buf, which the caller frees).
static const double *input_of(const ogc_op *op, const ogc_shape *in, const double *const *x,
                              double **buf) {
    *buf = NULL;
    if (!is_add(op)) return x[0];
    int64_t n = 1;
    for (int d = 0; d < in[0].ndim; d++) n *= in[0].dims[d];
    *buf = malloc((size_t)(n + 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) (*buf)[i] = x[0][i] + x[1][i];
    return *buf;
}

// rows x R of the input shape
static void rows_r(const ogc_op *op, const ogc_shape *x, int64_t *rows, int64_t *R) {
    int nA = x->ndim - nr_of(op);
    *rows = 1, *R = 1;
    for (int d = 0; d < x->ndim; d++) *(d < nA ? rows : R) *= x->dims[d];
}

static bool norm_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    ogc_shape x = *out;
    if (!strcmp(layout, "wide")) x = (ogc_shape){2, {3 * OG_ROWS_GROUP + 7, 269}};
    int nR = nr_of(op);
    if (x.ndim < nR) return false;
    int64_t rows, R;
    rows_r(op, &x, &rows, &R);
    if (R <= 1) return false;
    // no rows: a weight's or bias's gradient is a sum over nothing, 0, which proves nothing
    // (the empty case is in tests/api/test_api_norm.c); an entry without them runs it
    if (rows == 0 && op->nin > 1) return false;
    int nx = is_add(op) ? 2 : 1; // x, or x1 and x2
    for (int k = 0; k < nx; k++) in[k] = x;
    for (int k = nx; k < op->nin; k++) {
        in[k].ndim = nR;
        for (int d = 0; d < nR; d++) in[k].dims[d] = x.dims[x.ndim - nR + d];
    }
    *out = x;
    return true;
}

// The inputs of an entry: x, then the weight and the bias when it has them.
static const double *weight_of(const ogc_op *op, const double *const *x) {
    return weight_index(op) >= 0 ? x[weight_index(op)] : NULL;
}
static const double *bias_of(const ogc_op *op, const double *const *x) {
    return bias_index(op) >= 0 ? x[bias_index(op)] : NULL;
}

static void ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                        const ogc_shape *out, double *y, double *const *saved, double *mag,
                        int64_t *terms) {
    (void)out;
    int64_t rows, R;
    rows_r(op, &in[0], &rows, &R);
    const double *w = weight_of(op, x), *b = bias_of(op, x);
    bool rms = is_rms(op);
    double eps = op->attrs[A_EPS], *xbuf;
    const double *x0 = input_of(op, in, x, &xbuf);
    for (int64_t r = 0; r < rows; r++) {
        const double *xr = x0 + r * R;
        // (compensated sums: the float64 kernels' statistics are compared one by one)
        ogc_ksum ksum = {0, 0}, ksq = {0, 0};
        double mean = 0;
        if (!rms) {
            for (int64_t j = 0; j < R; j++) ogc_ksum_add(&ksum, xr[j]);
            mean = ogc_ksum_value(&ksum) / (double)R;
        }
        for (int64_t j = 0; j < R; j++) ogc_ksum_add(&ksq, (xr[j] - mean) * (xr[j] - mean));
        double var = ogc_ksum_value(&ksq) / (double)R;
        double rstd = 1 / sqrt(var + eps);
        for (int64_t j = 0; j < R; j++) {
            int64_t i = r * R + j;
            double wj = w ? w[j] : 1, bj = b ? b[j] : 0;
            y[i] = (xr[j] - mean) * rstd * wj + bj;
            mag[i] = (fabs(xr[j]) + fabs(mean)) * rstd * fabs(wj) + fabs(bj);
            if (rms) {
                saved[0][i] = rstd;
                if (is_add(op)) saved[1][i] = xr[j]; // AddRmsNorm's xOut
            } else {
                saved[0][i] = mean;
                saved[1][i] = rstd;
            }
        }
    }
    *terms = R;
    free(xbuf);
}

// x - mean at element i. AddLayerNorm's x = x1 + x2 is summed in long double first, not rounded
// to double: its backward kernels add the sum's rounding error back into x - mean (TwoSum), so a
// reference that rounds x1 + x2 first would be the less accurate one where x1 + x2 is close to
// the mean.
static double centered(const double *const *x, const double *x0, bool add_ln, int64_t i,
                       double mean) {
    if (!add_ln) return x0[i] - mean;
    return (double)(((long double)x[0][i] + (long double)x[1][i]) - (long double)mean);
}

static void ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                         const ogc_shape *out, const double *const *saved, const double *gy,
                         double *const *gx, double *const *mag, int64_t *terms) {
    (void)out;
    int64_t rows, R;
    rows_r(op, &in[0], &rows, &R);
    const double *w = weight_of(op, x);
    bool rms = is_rms(op), add = is_add(op);
    int kw = weight_index(op), kb = bias_index(op);
    // AddRmsNorm's backward reads its saved xOut; the others form x (x1 + x2) from the inputs
    double *xbuf = NULL;
    const double *x0 = rms && add ? saved[1] : input_of(op, in, x, &xbuf);
    bool want_dx = op->in[0].differentiable;
    bool want_dw = kw > 0 && op->in[kw].differentiable;
    bool want_db = kb > 0 && op->in[kb].differentiable;
    for (int64_t r = 0; r < rows; r++) {
        int64_t i0 = r * R;
        double mean = rms ? 0 : saved[0][i0], rstd = saved[rms ? 0 : 1][i0];
        ogc_ksum ka = {0, 0}, kb2 = {0, 0};
        double ma = 0, mb = 0;
        bool add_ln = add && !rms;
        for (int64_t j = 0; j < R; j++) {
            double g = gy[i0 + j] * (w ? w[j] : 1);
            double xh = centered(x, x0, add_ln, i0 + j, mean) * rstd;
            ogc_ksum_add(&ka, g), ogc_ksum_add(&kb2, g * xh), ma += fabs(g), mb += fabs(g * xh);
        }
        double a = ogc_ksum_value(&ka) / (double)R, b = ogc_ksum_value(&kb2) / (double)R;
        ma /= (double)R, mb /= (double)R;
        for (int64_t j = 0; j < R; j++) {
            int64_t i = i0 + j;
            double g = gy[i] * (w ? w[j] : 1), xh = centered(x, x0, add_ln, i, mean) * rstd;
            if (want_dx) {
                gx[0][i] = rstd * (g - (rms ? 0 : a) - xh * b);
                mag[0][i] = rstd * (fabs(g) + (rms ? 0 : ma) + fabs(xh) * mb);
                if (add) gx[1][i] = gx[0][i], mag[1][i] = mag[0][i]; // d/dx2 = d/dx1
            }
            if (want_dw) gx[kw][j] += gy[i] * xh, mag[kw][j] += fabs(gy[i] * xh);
            if (want_db) gx[kb][j] += gy[i], mag[kb][j] += fabs(gy[i]);
        }
    }
    if (want_dx) terms[0] = R;
    if (want_dx && add) terms[1] = R;
    if (want_dw) terms[kw] = rows > 0 ? rows : 1;
    if (want_db) terms[kb] = rows > 0 ? rows : 1;
    free(xbuf);
}

// ---------------------------------------------------------------------------------------------
// Entry points

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

// The dtype of the statistics and weight gradients ops-nn makes FLOAT: FLOAT, DOUBLE in a float64
// case (opgrad's float64 extension). Their buffers hold 8 bytes per element, enough for both.
static aclDataType stat_dt(const ogc_call *c) {
    return c->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
}

// A [A..., 1...] view (rank of `like`) of an output-shaped contiguous buffer of dtype dt: element
// r of the rows at the first element of row r.
static aclTensor *stat_view(const ogc_shape *x, int nR, aclDataType dt, void *data) {
    int64_t dims[OG_MAX_DIMS], strides[OG_MAX_DIMS], st = 1, full = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
        bool lead = d < x->ndim - nR;
        dims[d] = lead ? x->dims[d] : 1;
        strides[d] = lead ? st : 1;
        st *= x->dims[d];
    }
    full = st;
    int64_t storage = full > 0 ? full : 1;
    return aclCreateTensor(dims, (uint64_t)x->ndim, dt, strides, 0, ACL_FORMAT_ND, &storage, 1,
                           data);
}

// Each row's first element repeated along the row (the saved tensor in the output's shape).
static void spread_rows(void *data, aclDataType dt, int64_t rows, int64_t R) {
    size_t es = aclDataTypeSize(dt);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 1; j < R; j++)
            memcpy((char *)data + (size_t)(r * R + j) * es, (char *)data + (size_t)(r * R) * es,
                   es);
}

// The first element of a (contiguous) saved tensor.
static void *first_of(const aclTensor *t) {
    return (char *)t->data + t->offset * (int64_t)aclDataTypeSize(t->dtype);
}

static ogc_shape shape_of(const aclTensor *t) {
    ogc_shape s = {t->ndim, {0}};
    for (int d = 0; d < t->ndim; d++) s.dims[d] = t->dims[d];
    return s;
}

static int ln_forward(ogc_call *c) {
    const ogc_op *op = c->op;
    int nR = nr_of(op);
    ogc_shape x = shape_of(c->in[0]);
    int64_t rows, R;
    rows_r(op, &x, &rows, &R);
    const aclTensor *w = op->attrs[A_W] != 0 ? c->in[1] : NULL;
    const aclTensor *b = op->attrs[A_B] != 0 ? c->in[op->attrs[A_W] != 0 ? 2 : 1] : NULL;
    int64_t ns[OG_MAX_DIMS];
    for (int d = 0; d < nR; d++) ns[d] = x.dims[x.ndim - nR + d];
    aclIntArray *norm = aclCreateIntArray(ns, (uint64_t)nR);
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensor *mean = stat_view(&x, nR, c->results[1].dtype, c->results[1].data);
    aclTensor *rstd = stat_view(&x, nR, c->results[2].dtype, c->results[2].data);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnLayerNormGetWorkspaceSize(c->in[0], norm, w, b, op->attrs[A_EPS], out, mean, rstd,
                                            &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnLayerNorm);
    spread_rows(c->results[1].data, c->results[1].dtype, rows, R);
    spread_rows(c->results[2].data, c->results[2].dtype, rows, R);
    aclDestroyTensor(out), aclDestroyTensor(mean), aclDestroyTensor(rstd);
    aclDestroyIntArray(norm);
    return st;
}

static int ln_backward(ogc_call *c) {
    const ogc_op *op = c->op;
    int nR = nr_of(op);
    ogc_shape x = shape_of(c->in[0]);
    int64_t ns[OG_MAX_DIMS];
    for (int d = 0; d < nR; d++) ns[d] = x.dims[x.ndim - nR + d];
    int kw = op->attrs[A_W] != 0 ? 1 : -1, kb = op->attrs[A_B] != 0 ? (kw > 0 ? 2 : 1) : -1;
    bool mask[3] = {op->in[0].differentiable, kw > 0 && op->in[kw].differentiable,
                    kb > 0 && op->in[kb].differentiable};
    aclTensor *grads[3] = {NULL, NULL, NULL};
    int j = 0;
    for (int k = 0; k < 3; k++)
        if (mask[k]) grads[k] = ogc_result_tensor(&c->results[j++]);
    aclIntArray *norm = aclCreateIntArray(ns, (uint64_t)nR);
    aclBoolArray *maskarr = aclCreateBoolArray(mask, 3);
    aclTensor *mean = stat_view(&x, nR, c->saved[0]->dtype, first_of(c->saved[0]));
    aclTensor *rstd = stat_view(&x, nR, c->saved[1]->dtype, first_of(c->saved[1]));
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnLayerNormBackwardGetWorkspaceSize(
        c->grad_out, c->in[0], norm, mean, rstd, kw > 0 ? c->in[kw] : NULL,
        kb > 0 ? c->in[kb] : NULL, maskarr, grads[0], grads[1], grads[2], &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnLayerNormBackward);
    for (int k = 0; k < 3; k++)
        if (grads[k]) aclDestroyTensor(grads[k]);
    aclDestroyTensor(mean), aclDestroyTensor(rstd);
    aclDestroyIntArray(norm);
    aclDestroyBoolArray(maskarr);
    return st;
}

static int rms_forward(ogc_call *c) {
    const ogc_op *op = c->op;
    int nR = nr_of(op);
    ogc_shape x = shape_of(c->in[0]);
    int64_t rows, R;
    rows_r(op, &x, &rows, &R);
    // rstdOut is FLOAT: written into an fp32 buffer, then rounded once into the saved result
    aclDataType sdt = stat_dt(c);
    double *rbuf = calloc((size_t)(rows * R) + 1, sizeof(double));
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensor *rstd = stat_view(&x, nR, sdt, rbuf);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st =
        aclnnRmsNormGetWorkspaceSize(c->in[0], c->in[1], op->attrs[A_EPS], out, rstd, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnRmsNorm);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < R; j++)
            ogc_store(c->results[1].data, r * R + j, c->results[1].dtype,
                      ogc_load(rbuf, r * R, sdt));
    aclDestroyTensor(out), aclDestroyTensor(rstd);
    free(rbuf);
    return st;
}

static int rms_backward(ogc_call *c) {
    const ogc_op *op = c->op;
    int nR = nr_of(op);
    bool add = is_add(op);
    // AddRmsNorm's backward is RmsNormGrad at its xOut (saved[1])
    aclTensor *xin = add ? c->saved[1] : c->in[0], *gin = c->in[add ? 2 : 1];
    ogc_shape x = shape_of(c->in[0]);
    int64_t rows, R;
    rows_r(op, &x, &rows, &R);
    // rstd: the forward's [A..., 1...] FLOAT view; at 16-bit dtypes a FLOAT [A...] copy
    aclDataType sdt = stat_dt(c);
    double *rbuf = NULL;
    aclTensor *rstd;
    if (c->saved[0]->dtype == sdt) {
        rstd = stat_view(&x, nR, sdt, first_of(c->saved[0]));
    } else {
        rbuf = calloc((size_t)rows + 1, sizeof(double));
        for (int64_t r = 0; r < rows; r++)
            ogc_store(rbuf, r, sdt, ogc_load(first_of(c->saved[0]), r * R, c->saved[0]->dtype));
        int nA = x.ndim - nR;
        rstd = aclCreateTensor(x.dims, (uint64_t)nA, sdt, NULL, 0, ACL_FORMAT_ND, x.dims,
                               (uint64_t)nA, rbuf);
    }
    // dgammaOut is FLOAT: an fp32 buffer rounded once into the result
    aclTensor *dx = NULL, *dg;
    double *gbuf = NULL;
    int j = 0;
    if (op->in[0].differentiable) dx = ogc_result_tensor(&c->results[j++]);
    if (op->in[0].differentiable && add) j++; // x2's gradient: a copy of x1's
    ogc_result *gres = &c->results[j];
    int64_t gdims[OG_MAX_DIMS];
    for (int d = 0; d < nR; d++) gdims[d] = x.dims[x.ndim - nR + d];
    gbuf = calloc((size_t)R + 1, sizeof(double));
    dg = aclCreateTensor(gdims, (uint64_t)nR, sdt, NULL, 0, ACL_FORMAT_ND, gdims, (uint64_t)nR,
                         gbuf);
    // dxOut is required: without a dx result, an fp32 scratch stands in
    void *dxbuf = NULL;
    if (!dx) {
        dxbuf = calloc((size_t)(rows * R) + 1, aclDataTypeSize(c->in[0]->dtype));
        dx = aclCreateTensor(x.dims, (uint64_t)x.ndim, c->in[0]->dtype, NULL, 0, ACL_FORMAT_ND,
                             x.dims, (uint64_t)x.ndim, dxbuf);
    }
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnRmsNormGradGetWorkspaceSize(c->grad_out, xin, rstd, gin, dx, dg, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnRmsNormGrad);
    if (add && op->in[0].differentiable)
        memcpy(c->results[1].data, c->results[0].data,
               (size_t)(rows * R) * aclDataTypeSize(c->results[0].dtype));
    for (int64_t k = 0; k < R; k++) ogc_store(gres->data, k, gres->dtype, ogc_load(gbuf, k, sdt));
    aclDestroyTensor(dx), aclDestroyTensor(dg), aclDestroyTensor(rstd);
    free(rbuf), free(gbuf), free(dxbuf);
    return st;
}

// AddLayerNorm: mean / rstd are FLOAT (fp32 buffers rounded once into the saved results); xOut
// is asked for (additionalOutput) into a scratch buffer: its values are checked by the
// add_rms_norm entries, which save it, and by tests/api/test_api_norm.c.
static int add_ln_forward(ogc_call *c) {
    const ogc_op *op = c->op;
    int nR = nr_of(op);
    ogc_shape x = shape_of(c->in[0]);
    int64_t rows, R;
    rows_r(op, &x, &rows, &R);
    aclDataType sdt = stat_dt(c);
    double *mbuf = calloc((size_t)(rows * R) + 1, sizeof(double));
    double *rbuf = calloc((size_t)(rows * R) + 1, sizeof(double));
    void *xbuf = calloc((size_t)(rows * R) + 1, aclDataTypeSize(c->in[0]->dtype));
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensor *mean = stat_view(&x, nR, sdt, mbuf), *rstd = stat_view(&x, nR, sdt, rbuf);
    aclTensor *xo = aclCreateTensor(x.dims, (uint64_t)x.ndim, c->in[0]->dtype, NULL, 0,
                                    ACL_FORMAT_ND, x.dims, (uint64_t)x.ndim, xbuf);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st =
        aclnnAddLayerNormGetWorkspaceSize(c->in[0], c->in[1], c->in[2], c->in[3], NULL,
                                          op->attrs[A_EPS], true, out, mean, rstd, xo, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnAddLayerNorm);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < R; j++) {
            ogc_store(c->results[1].data, r * R + j, c->results[1].dtype,
                      ogc_load(mbuf, r * R, sdt));
            ogc_store(c->results[2].data, r * R + j, c->results[2].dtype,
                      ogc_load(rbuf, r * R, sdt));
        }
    aclDestroyTensor(out), aclDestroyTensor(mean), aclDestroyTensor(rstd), aclDestroyTensor(xo);
    free(mbuf), free(rbuf), free(xbuf);
    return st;
}

static int add_ln_backward(ogc_call *c) {
    const ogc_op *op = c->op;
    int nR = nr_of(op);
    ogc_shape x = shape_of(c->in[0]);
    int64_t rows, R;
    rows_r(op, &x, &rows, &R);
    aclTensor *dx = ogc_result_tensor(&c->results[0]);
    aclTensor *dg = ogc_result_tensor(&c->results[2]), *db = ogc_result_tensor(&c->results[3]);
    aclTensor *mean = stat_view(&x, nR, c->saved[0]->dtype, first_of(c->saved[0]));
    aclTensor *rstd = stat_view(&x, nR, c->saved[1]->dtype, first_of(c->saved[1]));
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnAddLayerNormGradGetWorkspaceSize(c->grad_out, c->in[0], c->in[1], rstd, mean,
                                                   c->in[2], NULL, dx, dg, db, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnAddLayerNormGrad);
    memcpy(c->results[1].data, c->results[0].data, // x2's gradient is x1's
           (size_t)(rows * R) * aclDataTypeSize(c->results[0].dtype));
    aclDestroyTensor(dx), aclDestroyTensor(dg), aclDestroyTensor(db);
    aclDestroyTensor(mean), aclDestroyTensor(rstd);
    return st;
}

// AddRmsNorm: rstd FLOAT (rounded once into the saved result), xOut straight into saved[1].
static int add_rms_forward(ogc_call *c) {
    const ogc_op *op = c->op;
    int nR = nr_of(op);
    ogc_shape x = shape_of(c->in[0]);
    int64_t rows, R;
    rows_r(op, &x, &rows, &R);
    aclDataType sdt = stat_dt(c);
    double *rbuf = calloc((size_t)(rows * R) + 1, sizeof(double));
    aclTensor *out = ogc_result_tensor(&c->results[0]), *xo = ogc_result_tensor(&c->results[2]);
    aclTensor *rstd = stat_view(&x, nR, sdt, rbuf);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnAddRmsNormGetWorkspaceSize(c->in[0], c->in[1], c->in[2], op->attrs[A_EPS], out,
                                             rstd, xo, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnAddRmsNorm);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < R; j++)
            ogc_store(c->results[1].data, r * R + j, c->results[1].dtype,
                      ogc_load(rbuf, r * R, sdt));
    aclDestroyTensor(out), aclDestroyTensor(xo), aclDestroyTensor(rstd);
    free(rbuf);
    return st;
}

// ---------------------------------------------------------------------------------------------
// The entries

static const double ln1[] = {1, 1e-5, 1, 1, 0}, ln2[] = {2, 1e-5, 1, 1, 0},
                    ln_none[] = {1, 1e-5, 0, 0, 0}, ln_w[] = {1, 1e-5, 1, 0, 0},
                    ln2_none[] = {2, 1e-5, 0, 0, 0};
static const double rms1[] = {1, 1e-6, 1, 0, 0}, rms2[] = {2, 1e-6, 1, 0, 0};
static const double add_ln1[] = {1, 1e-5, 1, 1, 1}, add_rms1[] = {1, 1e-6, 1, 0, 1};

#define NORM_COMMON                                                                                \
    .dtypes = OG_DTS_FLOATING64, .lo = -3, .hi = 3, .fp32_ulps = 4, .shapes = norm_shapes,         \
    .ref_forward_tensor = ref_forward, .ref_backward_tensor = ref_backward

#define LN_API "aclnnLayerNorm + aclnnLayerNormBackward"
#define LN(entry, attr, n, ...)                                                                    \
    {                                                                                              \
        .name = entry, .api = LN_API, .attrs = attr, .nin = n, .in = {__VA_ARGS__}, .nsaved = 2,   \
        .saved_names = {"mean", "rstd"}, .forward = ln_forward, .backward = ln_backward,           \
        NORM_COMMON,                                                                               \
    }
#define RMS(entry, attr, dx)                                                                       \
    {                                                                                              \
        .name = entry, .api = "aclnnRmsNorm + aclnnRmsNormGrad", .attrs = attr, .nin = 2,          \
        .in = {{"x", dx}, {"gamma", true}}, .nsaved = 1, .saved_names = {"rstd"},                  \
        .forward = rms_forward, .backward = rms_backward, NORM_COMMON,                             \
    }

static const ogc_op norm_ops[] = {
    // outputMask {1, 1, 1}, over the last 1 and 2 dims
    LN("layer_norm", ln1, 3, {"x", true}, {"weight", true}, {"bias", true}),
    LN("layer_norm_2d", ln2, 3, {"x", true}, {"weight", true}, {"bias", true}),
    // the other masks with a gradient (the weight and bias inputs present either way)
    LN("layer_norm_mask100", ln1, 3, {"x", true}, {"weight", false}, {"bias", false}),
    LN("layer_norm_mask010", ln1, 3, {"x", false}, {"weight", true}, {"bias", false}),
    LN("layer_norm_mask001", ln1, 3, {"x", false}, {"weight", false}, {"bias", true}),
    LN("layer_norm_mask110", ln1, 3, {"x", true}, {"weight", true}, {"bias", false}),
    LN("layer_norm_mask101", ln1, 3, {"x", true}, {"weight", false}, {"bias", true}),
    LN("layer_norm_mask011", ln1, 3, {"x", false}, {"weight", true}, {"bias", true}),
    // without bias, without both (dx only: the gradients of absent inputs are not asked for)
    LN("layer_norm_weight_only", ln_w, 2, {"x", true}, {"weight", true}),
    LN("layer_norm_no_affine", ln_none, 1, {"x", true}),
    LN("layer_norm_2d_no_affine", ln2_none, 1, {"x", true}),
    RMS("rms_norm", rms1, true),
    RMS("rms_norm_2d", rms2, true),
    RMS("rms_norm_dgamma_only", rms1, false),
    // the residual forms: x1 and x2 get the same gradient; AddRmsNorm saves xOut for its
    // backward (aclnnRmsNormGrad at xOut), so xOut is checked as a saved output
    {
        .name = "add_layer_norm",
        .api = "aclnnAddLayerNorm + aclnnAddLayerNormGrad",
        .attrs = add_ln1,
        .nin = 4,
        .in = {{"x1", true}, {"x2", true}, {"gamma", true}, {"beta", true}},
        .nsaved = 2,
        .saved_names = {"mean", "rstd"},
        .forward = add_ln_forward,
        .backward = add_ln_backward,
        NORM_COMMON,
    },
    {
        .name = "add_rms_norm",
        .api = "aclnnAddRmsNorm + aclnnRmsNormGrad (at xOut)",
        .attrs = add_rms1,
        .nin = 3,
        .in = {{"x1", true}, {"x2", true}, {"gamma", true}},
        .nsaved = 2,
        .saved_names = {"rstd", "xOut"},
        .forward = add_rms_forward,
        .backward = rms_backward,
        NORM_COMMON,
    },
};

OGC_DEFINE_FAMILY(norm, norm_ops)
