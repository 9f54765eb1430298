/* Registry entries of the 'batch_norm' family:
 *
 *   batch_norm           aclnnBatchNorm (training) + aclnnBatchNormBackward (training): x, weight,
 *                        bias; the batch statistics are part of the function, so the reference
 *                        gradient goes through the mean and the variance
 *   batch_norm_noaffine  the same with weight and bias NULL
 *   batch_norm_eval      eval mode: x, weight, runningMean, runningVar (not differentiable;
 *                        runningVar = 0.25 + v^2 of the drawn v, the same mapping in the reference)
 *   batch_norm_stats     training: the output is [4, C] = saveMean, saveInvstd and the updated
 *                        runningMean, runningVar (momentum 0.1, the unbiased variance); nothing
 *                        differentiable (the statistics' gradients are the first entry's)
 *   group_norm(_g1/_g4)  aclnnGroupNorm + aclnnGroupNormBackward, 2 (1, 4) groups: x, gamma, beta
 *   group_norm_noaffine  gamma and beta NULL
 *   group_norm_stats     the output is [2, N, group] = meanOut, rstdOut
 *
 * x is [N, C, *] (the layout's shape, a 1-d one as [2, 4, n/8]); the per-channel tensors are [C].
 * The backwards' entry points first run the forward for the saved statistics (they are [C] or
 * [N, group], not of the output's shape, so they cannot be the checker's saved tensors), then the
 * backward with every outputMask entry true, then with each of the 7 other masks, and fail (status
 * 161002 with a message) unless each selected gradient is bitwise the full call's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_batch_norm.h"
#include "aclnnop/aclnn_batch_norm_backward.h"
#include "aclnnop/aclnn_group_norm.h"
#include "aclnnop/aclnn_group_norm_backward.h"
#include "check/check.h"
#include "check/check_internal.h"
#include "check/compare.h"
#include "check/registry.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

#define BN_EPS 1e-5
#define BN_MOMENTUM 0.1

// attrs: {kind, groups}
enum { K_TRAIN, K_NOAFFINE, K_EVAL, K_STATS };
static const double a_train[] = {K_TRAIN, 0}, a_noaff[] = {K_NOAFFINE, 0}, a_eval[] = {K_EVAL, 0},
                    a_stats[] = {K_STATS, 0};
static const double g_train2[] = {K_TRAIN, 2}, g_train1[] = {K_TRAIN, 1}, g_train4[] = {K_TRAIN, 4},
                    g_noaff2[] = {K_NOAFFINE, 2}, g_stats2[] = {K_STATS, 2};

static int kind_of(const ogc_op *op) { return (int)op->attrs[0]; }
static int64_t groups_of(const ogc_op *op) { return (int64_t)op->attrs[1]; }

// ---------------------------------------------------------------------------------------------
// Shapes

// x from the layout's first input: [N, C, *]; false for layouts that do not give one.
static bool x_shape(const char *layout, ogc_shape *x) {
    if (!strncmp(layout, "bcast", 5) || !strcmp(layout, "sweep") || x->ndim == 0) return false;
    if (x->ndim == 1) {
        if (x->dims[0] < 64) return false;
        *x = (ogc_shape){.ndim = 3, .dims = {2, 4, x->dims[0] / 8}};
    }
    if (ogc_numel(x) == 0) // empty: no channels, so that the per-channel tensors are empty too
        for (int d = 0; d < x->ndim; d++) x->dims[d] = d == 1 ? 0 : 3;
    return true;
}

static bool bn_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    ogc_shape x = in[0];
    if (!x_shape(layout, &x)) return false;
    int64_t C = x.dims[1], K = 1;
    for (int d = 0; d < x.ndim; d++) K *= d == 1 ? 1 : x.dims[d];
    if (K == 1) return false; // one value per channel: var 0, the unbiased variance undefined
    in[0] = x;
    for (int k = 1; k < op->nin; k++) in[k] = (ogc_shape){.ndim = 1, .dims = {C}};
    *out = x;
    if (kind_of(op) == K_STATS) *out = (ogc_shape){.ndim = 2, .dims = {4, C}};
    return true;
}

static bool gn_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    ogc_shape x = in[0];
    if (!x_shape(layout, &x)) return false;
    int64_t G = groups_of(op);
    if (x.dims[1] == 0) x.dims[0] = 0; // empty: the statistics [N, group] are empty too
    // C a multiple of the groups (at least 2 channels per group when there are several groups)
    int64_t per = (x.dims[1] + G - 1) / G;
    if (G > 1 && per < 2) per = 2;
    if (x.dims[1] > 0) x.dims[1] = per * G;
    int64_t C = x.dims[1], M = per;
    for (int d = 2; d < x.ndim; d++) M *= x.dims[d];
    if (M < 2 && x.dims[0] * C > 0) return false; // a group of one value
    in[0] = x;
    for (int k = 1; k < op->nin; k++) in[k] = (ogc_shape){.ndim = 1, .dims = {C}};
    *out = x;
    if (kind_of(op) == K_STATS) *out = (ogc_shape){.ndim = 3, .dims = {2, x.dims[0], G}};
    return true;
}

// ---------------------------------------------------------------------------------------------
// Float64 references. A "set" is the values one statistic is taken over: channel c of a BatchNorm
// (every n and spatial position), group (n, g) of a GroupNorm. idx lists the set's elements.

typedef struct geom {
    int64_t N, C, S, G; // S = spatial size; G = groups (BatchNorm: 0)
} geom;

static geom geom_of(const ogc_op *op, const ogc_shape *x) {
    geom g = {x->dims[0], x->dims[1], 1, groups_of(op)};
    for (int d = 2; d < x->ndim; d++) g.S *= x->dims[d];
    return g;
}
static int64_t nsets(const geom *g) { return g->G ? g->N * g->G : g->C; }
static int64_t set_size(const geom *g) { return g->G ? g->C / g->G * g->S : g->N * g->S; }
// The j-th element (row-major in x) of set s.
static int64_t set_elem(const geom *g, int64_t s, int64_t j) {
    if (g->G) {
        int64_t n = s / g->G, grp = s % g->G, cg = g->C / g->G;
        return (n * g->C + grp * cg) * g->S + j; // a group's values are contiguous
    }
    int64_t n = j / g->S, i = j % g->S;
    return (n * g->C + s) * g->S + i;
}
static int64_t chan_of(const geom *g, int64_t e) { return e / g->S % g->C; }

// The running-variance input of the eval entry from its drawn value.
static double eval_var(double v) { return (double)(float)(0.25 + v * v); }

typedef struct stats {
    double *mean, *rstd, *var;
} stats;

static stats stats_of(const geom *g, const double *x) {
    int64_t ns = nsets(g), m = set_size(g);
    stats st = {calloc((size_t)ns + 1, sizeof(double)), calloc((size_t)ns + 1, sizeof(double)),
                calloc((size_t)ns + 1, sizeof(double))};
    for (int64_t s = 0; s < ns; s++) {
        long double sum = 0, sq = 0;
        for (int64_t j = 0; j < m; j++) sum += x[set_elem(g, s, j)];
        long double mean = sum / m;
        for (int64_t j = 0; j < m; j++) {
            long double d = x[set_elem(g, s, j)] - mean;
            sq += d * d;
        }
        st.mean[s] = (double)mean;
        st.var[s] = (double)(sq / m);
        st.rstd[s] = (double)(1.0L / sqrtl(sq / m + BN_EPS));
    }
    return st;
}
static void stats_free(stats *st) { free(st->mean), free(st->rstd), free(st->var); }

static void norm_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                             const ogc_shape *out, double *y, double *const *saved, double *mag,
                             int64_t *terms) {
    (void)out, (void)saved;
    geom g = geom_of(op, &in[0]);
    int kind = kind_of(op);
    int64_t ns = nsets(&g), m = set_size(&g), n = g.N * g.C * g.S;
    *terms = m > 0 ? m : 1;
    if (n == 0) return;
    bool affine = kind == K_TRAIN || kind == K_EVAL;
    stats st = stats_of(&g, x[0]);
    if (kind == K_STATS) {
        for (int64_t s = 0; s < ns; s++) {
            y[s] = mag[s] = st.mean[s];
            y[ns + s] = mag[ns + s] = st.rstd[s];
            if (!g.G) { // the running statistics, from the drawn inputs
                double unbiased = st.var[s] * (double)m / (double)(m - 1);
                y[2 * ns + s] = (1 - BN_MOMENTUM) * x[1][s] + BN_MOMENTUM * st.mean[s];
                y[3 * ns + s] = (1 - BN_MOMENTUM) * x[2][s] + BN_MOMENTUM * unbiased;
                mag[2 * ns + s] =
                    fabs((1 - BN_MOMENTUM) * x[1][s]) + BN_MOMENTUM * fabs(st.mean[s]);
                mag[3 * ns + s] = fabs((1 - BN_MOMENTUM) * x[2][s]) + BN_MOMENTUM * unbiased;
            }
        }
        // the mean's error bound: the values' absolute sum
        for (int64_t s = 0; s < ns; s++) {
            long double a = 0;
            for (int64_t j = 0; j < m; j++) a += fabs(x[0][set_elem(&g, s, j)]);
            mag[s] = (double)(a / m);
        }
        stats_free(&st);
        return;
    }
    for (int64_t s = 0; s < ns; s++) {
        double mean = st.mean[s], rstd = st.rstd[s];
        if (kind == K_EVAL) {
            mean = x[2][s];
            rstd = 1.0 / sqrt(eval_var(x[3][s]) + BN_EPS);
        }
        long double abs_mean = 0;
        for (int64_t j = 0; j < m; j++) abs_mean += fabs(x[0][set_elem(&g, s, j)]);
        abs_mean /= m;
        for (int64_t j = 0; j < m; j++) {
            int64_t e = set_elem(&g, s, j), c = chan_of(&g, e);
            double w = affine ? x[1][c] : 1, b = kind == K_TRAIN ? x[2][c] : 0;
            y[e] = (x[0][e] - mean) * rstd * w + b;
            mag[e] = (fabs(x[0][e]) + (kind == K_EVAL ? fabs(mean) : (double)abs_mean)) * rstd *
                         fabs(w) +
                     fabs(b);
        }
    }
    stats_free(&st);
}

static void norm_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                              const ogc_shape *out, const double *const *saved, const double *gy,
                              double *const *gx, double *const *mag, int64_t *terms) {
    (void)out, (void)saved;
    geom g = geom_of(op, &in[0]);
    int kind = kind_of(op);
    int64_t ns = nsets(&g), m = set_size(&g), n = g.N * g.C * g.S;
    for (int k = 0; k < op->nin; k++) terms[k] = m > 0 ? m : 1;
    if (g.G) terms[1] = terms[2] = g.N * g.S > 0 ? g.N * g.S : 1;
    // nothing differentiable (stats); or the weight and bias gradients are sums over nothing: 0
    if (kind == K_STATS || n == 0) return;
    bool affine = kind == K_TRAIN || kind == K_EVAL;
    stats st = stats_of(&g, x[0]);
    for (int64_t s = 0; s < ns; s++) {
        double mean = st.mean[s], rstd = st.rstd[s];
        if (kind == K_EVAL) {
            mean = x[2][s];
            rstd = 1.0 / sqrt(eval_var(x[3][s]) + BN_EPS);
        }
        // over the set: the gradient of the normalised value xhat, gh = dy * w. The magnitude
        // bounds take x - mean as |x| + |mean|: in fp32 the difference carries the error of
        // both (x close to the mean leaves few correct bits in any fp32 implementation).
        long double sgh = 0, sghx = 0, agh = 0, aghx = 0;
        for (int64_t j = 0; j < m; j++) {
            int64_t e = set_elem(&g, s, j), c = chan_of(&g, e);
            double w = affine ? x[1][c] : 1;
            long double xh = (x[0][e] - mean) * (long double)rstd, gh = gy[e] * (long double)w;
            long double axh = (fabs(x[0][e]) + fabs(mean)) * (long double)rstd;
            sgh += gh, sghx += gh * xh, agh += fabsl(gh), aghx += fabsl(gh) * axh;
            if (affine) {
                gx[1][c] += (double)(gy[e] * xh);
                mag[1][c] += (double)(fabs(gy[e]) * axh);
            }
            if (kind == K_TRAIN) {
                gx[2][c] += gy[e];
                mag[2][c] += fabs(gy[e]);
            }
        }
        for (int64_t j = 0; j < m; j++) {
            int64_t e = set_elem(&g, s, j), c = chan_of(&g, e);
            double w = affine ? x[1][c] : 1;
            long double xh = (x[0][e] - mean) * (long double)rstd, gh = gy[e] * (long double)w;
            if (kind == K_EVAL) { // the running statistics are constants
                gx[0][e] = (double)(gh * rstd);
                mag[0][e] = fabs(gx[0][e]);
            } else {
                long double axh = (fabs(x[0][e]) + fabs(mean)) * (long double)rstd;
                gx[0][e] = (double)(rstd * (gh - sgh / m - xh * sghx / m));
                mag[0][e] = (double)(rstd * (fabsl(gh) + agh / m + axh * aghx / m));
            }
        }
    }
    stats_free(&st);
}

// ---------------------------------------------------------------------------------------------
// Entry points

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

// A contiguous tensor of dtype dt over fresh memory, zero-filled (freed with free_tensor).
static aclTensor *new_tensor(aclDataType dt, int ndim, const int64_t *dims) {
    int64_t strides[OG_MAX_DIMS], n = 1;
    for (int d = ndim - 1; d >= 0; d--) strides[d] = n, n *= dims[d] > 0 ? dims[d] : 1;
    for (int d = 0; d < ndim; d++) n = dims[d] == 0 ? 0 : n;
    void *p = NULL;
    size_t bytes = (size_t)(n > 0 ? n : 1) * aclDataTypeSize(dt);
    if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != 0) return NULL;
    memset(p, 0, bytes);
    return aclCreateTensor(dims, (uint64_t)ndim, dt, strides, 0, ACL_FORMAT_ND, &n, 1, p);
}
static void free_tensor(aclTensor *t) {
    if (!t) return;
    void *p = t->data;
    aclDestroyTensor(t);
    aclrtFree(p);
}
// Row r of a contiguous [rows, n] result buffer as a [n] tensor (shares the result's memory).
static aclTensor *row_of(const ogc_result *res, int64_t r, int64_t n, int64_t rows) {
    int64_t one = 1, storage = rows * n;
    return aclCreateTensor(&n, 1, res->dtype, &one, r * n, ACL_FORMAT_ND, &storage, 1, res->data);
}
// Element i (row-major) of a view, as double.
static double load_elem(const aclTensor *t, int64_t i) {
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->dims[d]) * t->strides[d];
        i /= t->dims[d];
    }
    return ogc_load(t->data, off, t->dtype);
}
static void store_elem(void *p, int64_t i, aclDataType dt, double v) {
    float f = (float)v;
    if (dt == ACL_DOUBLE)
        ((double *)p)[i] = v;
    else if (dt == ACL_FLOAT)
        ((float *)p)[i] = f;
    else if (dt == ACL_FLOAT16)
        ((uint16_t *)p)[i] = og_f32_to_f16(f);
    else
        ((uint16_t *)p)[i] = og_f32_to_bf16(f);
}
// The dtype of the statistics (saveMean, saveInvstd, meanOut, rstdOut) and of the eval entry's
// runningVar: FLOAT, DOUBLE in a float64 case (opgrad's float64 extension).
static aclDataType stat_dt(const ogc_call *c) {
    return c->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
}
// The eval entry's runningVar: 0.25 + v^2 of each drawn v, in fp32 (exact in a DOUBLE tensor).
static aclTensor *eval_var_tensor(const ogc_call *c, const aclTensor *v) {
    aclTensor *t = new_tensor(stat_dt(c), 1, v->dims);
    if (!t) return NULL;
    for (int64_t i = 0; i < v->dims[0]; i++)
        store_elem(t->data, i, t->dtype, eval_var(load_elem(v, i)));
    return t;
}

static int launch(int st, uint64_t ws, aclOpExecutor *ex, phase2_fn p2) {
    return st ? st : ogc_launch(ws, ex, p2);
}

static int bn_forward_into(ogc_call *c, aclTensor *out, aclTensor *mean, aclTensor *rstd,
                           aclTensor *rm, aclTensor *rv) {
    int kind = kind_of(c->op);
    bool affine = kind == K_TRAIN || kind == K_EVAL;
    const aclTensor *w = affine ? c->in[1] : NULL, *b = kind == K_TRAIN ? c->in[2] : NULL;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnBatchNormGetWorkspaceSize(c->in[0], w, b, rm, rv, kind != K_EVAL, BN_MOMENTUM,
                                            BN_EPS, out, mean, rstd, &ws, &ex);
    return launch(st, ws, ex, aclnnBatchNorm);
}

static int bn_forward(ogc_call *c) {
    int kind = kind_of(c->op);
    int64_t C = c->in[0]->dims[1];
    int st;
    if (kind == K_STATS) {
        // saveMean, saveInvstd and the running statistics (initialised from the inputs, updated
        // in place) are the rows of the [4, C] result
        ogc_result *r = &c->results[0];
        aclTensor *rows[4];
        for (int k = 0; k < 4; k++) rows[k] = row_of(r, k, C, 4);
        for (int64_t i = 0; i < C; i++) {
            store_elem(r->data, 2 * C + i, r->dtype, load_elem(c->in[1], i));
            store_elem(r->data, 3 * C + i, r->dtype, load_elem(c->in[2], i));
        }
        aclTensor *y = new_tensor(c->dtype, c->in[0]->ndim, c->in[0]->dims);
        st = y ? bn_forward_into(c, y, rows[0], rows[1], rows[2], rows[3]) : ACLNN_ERR_INNER;
        free_tensor(y);
        for (int k = 0; k < 4; k++) aclDestroyTensor(rows[k]);
        return st;
    }
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensor *mean = new_tensor(stat_dt(c), 1, &C), *rstd = new_tensor(stat_dt(c), 1, &C);
    aclTensor *rm = NULL, *rv = NULL;
    if (kind == K_EVAL) {
        rm = (aclTensor *)c->in[2];
        rv = eval_var_tensor(c, c->in[3]);
    } else {
        // running statistics given (their update is batch_norm_stats' check)
        rm = new_tensor(stat_dt(c), 1, &C), rv = new_tensor(stat_dt(c), 1, &C);
    }
    st = bn_forward_into(c, out, mean, rstd, rm, rv);
    if (kind != K_EVAL) free_tensor(rm);
    free_tensor(rv), free_tensor(mean), free_tensor(rstd);
    aclDestroyTensor(out);
    return st;
}

// Bitwise equality of two results' data (n elements of dtype dt).
static bool same_bits(const aclTensor *a, const aclTensor *b) {
    if (!a || !b) return a == b;
    size_t bytes = (size_t)a->numel * aclDataTypeSize(a->dtype);
    return !memcmp(og_tensor_first(a), og_tensor_first(b), bytes);
}

// Runs a backward with each of the 7 partial masks into fresh tensors and compares every
// selected gradient with the full call's `full` (NULL entries: gradients the entry has not).
typedef int (*bwd_call)(ogc_call *c, const aclBoolArray *mask, aclTensor *const *g, void *ctx);
static int check_masks(ogc_call *c, aclTensor *const *full, bwd_call run, void *ctx,
                       const char *name) {
    for (int bits = 0; bits < 7; bits++) {
        bool m[3] = {bits & 1, bits & 2, bits & 4};
        aclTensor *g[3] = {NULL, NULL, NULL};
        for (int k = 0; k < 3; k++)
            if (m[k] && full[k]) g[k] = new_tensor(full[k]->dtype, full[k]->ndim, full[k]->dims);
        // an unselected gradient the operator does not have is requested as NULL; one it has
        // but the mask leaves out is NULL as well (and must not be written)
        aclBoolArray *mask = aclCreateBoolArray(m, 3);
        int st = run(c, mask, g, ctx);
        aclDestroyBoolArray(mask);
        bool ok = true;
        int bad = -1;
        for (int k = 0; k < 3 && !st; k++)
            if (m[k] && full[k] && !same_bits(g[k], full[k])) ok = false, bad = k;
        for (int k = 0; k < 3; k++) free_tensor(g[k]);
        if (st) return st;
        if (!ok)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: outputMask {%d,%d,%d}: gradient %d differs from the full call's",
                           name, m[0], m[1], m[2], bad);
    }
    return 0;
}

typedef struct bn_ctx {
    aclTensor *mean, *rstd, *rm, *rv;
} bn_ctx;

static int bn_bwd_run(ogc_call *c, const aclBoolArray *mask, aclTensor *const *g, void *vctx) {
    bn_ctx *x = vctx;
    int kind = kind_of(c->op);
    bool affine = kind == K_TRAIN || kind == K_EVAL;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnBatchNormBackwardGetWorkspaceSize(c->grad_out, c->in[0], affine ? c->in[1] : NULL,
                                                    x->rm, x->rv, x->mean, x->rstd, kind != K_EVAL,
                                                    BN_EPS, mask, g[0], g[1], g[2], &ws, &ex);
    return launch(st, ws, ex, aclnnBatchNormBackward);
}

static int bn_backward(ogc_call *c) {
    int kind = kind_of(c->op);
    if (kind == K_STATS) {
        c->nresults = 0;
        return 0;
    }
    int64_t C = c->in[0]->dims[1];
    bn_ctx x = {new_tensor(stat_dt(c), 1, &C), new_tensor(stat_dt(c), 1, &C), NULL, NULL};
    if (kind == K_EVAL) {
        x.rm = (aclTensor *)c->in[2];
        x.rv = eval_var_tensor(c, c->in[3]);
    }
    // the forward's saved statistics (training), from the same inputs
    aclTensor *y = new_tensor(c->dtype, c->in[0]->ndim, c->in[0]->dims);
    int st = bn_forward_into(c, y, x.mean, x.rstd, kind == K_EVAL ? x.rm : NULL,
                             kind == K_EVAL ? x.rv : NULL);
    free_tensor(y);
    aclTensor *g[3] = {NULL, NULL, NULL};
    int ndiff = kind == K_NOAFFINE ? 1 : kind == K_EVAL ? 2 : 3;
    for (int k = 0; k < ndiff; k++) g[k] = ogc_result_tensor(&c->results[k]);
    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    // gradients the entry does not check are still asked for, into scratch tensors
    aclTensor *extra[3] = {NULL, NULL, NULL};
    for (int k = ndiff; k < 3; k++) g[k] = extra[k] = new_tensor(c->dtype, 1, &C);
    if (!st) st = bn_bwd_run(c, mask, g, &x);
    aclDestroyBoolArray(mask);
    if (!st) st = check_masks(c, g, bn_bwd_run, &x, "BatchNormBackward");
    for (int k = 0; k < 3; k++) {
        if (extra[k])
            free_tensor(extra[k]);
        else
            aclDestroyTensor(g[k]);
    }
    free_tensor(x.mean), free_tensor(x.rstd);
    if (kind == K_EVAL) free_tensor(x.rv);
    return st;
}

// GroupNorm

static int gn_forward_into(ogc_call *c, aclTensor *out, aclTensor *mean, aclTensor *rstd) {
    const aclTensor *x = c->in[0];
    int64_t N = x->dims[0], C = x->dims[1], S = 1;
    for (int d = 2; d < x->ndim; d++) S *= x->dims[d];
    bool affine = kind_of(c->op) == K_TRAIN;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st =
        aclnnGroupNormGetWorkspaceSize(x, affine ? c->in[1] : NULL, affine ? c->in[2] : NULL, N, C,
                                       S, groups_of(c->op), BN_EPS, out, mean, rstd, &ws, &ex);
    return launch(st, ws, ex, aclnnGroupNorm);
}

static int gn_forward(ogc_call *c) {
    int64_t ng[2] = {c->in[0]->dims[0], groups_of(c->op)};
    if (kind_of(c->op) == K_STATS) {
        ogc_result *r = &c->results[0];
        int64_t storage = 2 * ng[0] * ng[1], one[2] = {ng[1], 1};
        aclTensor *mean =
            aclCreateTensor(ng, 2, r->dtype, one, 0, ACL_FORMAT_ND, &storage, 1, r->data);
        aclTensor *rstd = aclCreateTensor(ng, 2, r->dtype, one, ng[0] * ng[1], ACL_FORMAT_ND,
                                          &storage, 1, r->data);
        aclTensor *y = new_tensor(c->dtype, c->in[0]->ndim, c->in[0]->dims);
        int st = y ? gn_forward_into(c, y, mean, rstd) : ACLNN_ERR_INNER;
        free_tensor(y);
        aclDestroyTensor(mean), aclDestroyTensor(rstd);
        return st;
    }
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensor *mean = new_tensor(stat_dt(c), 2, ng), *rstd = new_tensor(stat_dt(c), 2, ng);
    int st = gn_forward_into(c, out, mean, rstd);
    free_tensor(mean), free_tensor(rstd);
    aclDestroyTensor(out);
    return st;
}

typedef struct gn_ctx {
    aclTensor *mean, *rstd;
} gn_ctx;

static int gn_bwd_run(ogc_call *c, const aclBoolArray *mask, aclTensor *const *g, void *vctx) {
    gn_ctx *x = vctx;
    const aclTensor *in = c->in[0];
    int64_t N = in->dims[0], C = in->dims[1], S = 1;
    for (int d = 2; d < in->ndim; d++) S *= in->dims[d];
    bool affine = kind_of(c->op) == K_TRAIN;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int st = aclnnGroupNormBackwardGetWorkspaceSize(
        c->grad_out, in, x->mean, x->rstd, affine ? c->in[1] : NULL, N, C, S, groups_of(c->op),
        mask, g[0], g[1], g[2], &ws, &ex);
    return launch(st, ws, ex, aclnnGroupNormBackward);
}

static int gn_backward(ogc_call *c) {
    int kind = kind_of(c->op);
    if (kind == K_STATS) {
        c->nresults = 0;
        return 0;
    }
    int64_t ng[2] = {c->in[0]->dims[0], groups_of(c->op)}, C = c->in[0]->dims[1];
    gn_ctx x = {new_tensor(stat_dt(c), 2, ng), new_tensor(stat_dt(c), 2, ng)};
    aclTensor *y = new_tensor(c->dtype, c->in[0]->ndim, c->in[0]->dims);
    int st = gn_forward_into(c, y, x.mean, x.rstd);
    free_tensor(y);
    int ndiff = kind == K_NOAFFINE ? 1 : 3;
    aclTensor *g[3] = {NULL, NULL, NULL}, *extra[3] = {NULL, NULL, NULL};
    for (int k = 0; k < ndiff; k++) g[k] = ogc_result_tensor(&c->results[k]);
    for (int k = ndiff; k < 3; k++) g[k] = extra[k] = new_tensor(c->dtype, 1, &C);
    bool all[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(all, 3);
    if (!st) st = gn_bwd_run(c, mask, g, &x);
    aclDestroyBoolArray(mask);
    if (!st) st = check_masks(c, g, gn_bwd_run, &x, "GroupNormBackward");
    for (int k = 0; k < 3; k++) {
        if (extra[k])
            free_tensor(extra[k]);
        else
            aclDestroyTensor(g[k]);
    }
    free_tensor(x.mean), free_tensor(x.rstd);
    return st;
}

// ---------------------------------------------------------------------------------------------

#define BN_API "aclnnBatchNorm + aclnnBatchNormBackward"
#define GN_API "aclnnGroupNorm + aclnnGroupNormBackward"
#define NORM_COMMON(shape_fn, prefix)                                                              \
    .dtypes = OG_DTS_FLOATING64, .lo = -2, .hi = 2, .fp32_ulps = 8, .forward = prefix##_forward,   \
    .backward = prefix##_backward, .shapes = shape_fn, .ref_forward_tensor = norm_ref_forward,     \
    .ref_backward_tensor = norm_ref_backward

static const ogc_op batch_norm_ops[] = {
    {.name = "batch_norm",
     .api = BN_API " (training)",
     .nin = 3,
     .in = {{"input", true}, {"weight", true}, {"bias", true}},
     .attrs = a_train,
     NORM_COMMON(bn_shapes, bn)},
    {.name = "batch_norm_noaffine",
     .api = BN_API " (training, weight and bias NULL)",
     .nin = 1,
     .in = {{"input", true}},
     .attrs = a_noaff,
     NORM_COMMON(bn_shapes, bn)},
    {.name = "batch_norm_eval",
     .api = BN_API " (eval)",
     .nin = 4,
     .in = {{"input", true}, {"weight", true}, {"runningMean", false}, {"runningVar", false}},
     .attrs = a_eval,
     NORM_COMMON(bn_shapes, bn)},
    {.name = "batch_norm_stats",
     .api = "aclnnBatchNorm (training: saveMean, saveInvstd, runningMean, runningVar)",
     .nin = 3,
     .in = {{"input", false}, {"runningMean", false}, {"runningVar", false}},
     .attrs = a_stats,
     NORM_COMMON(bn_shapes, bn)},
    {.name = "group_norm",
     .api = GN_API " (2 groups)",
     .nin = 3,
     .in = {{"self", true}, {"gamma", true}, {"beta", true}},
     .attrs = g_train2,
     NORM_COMMON(gn_shapes, gn)},
    {.name = "group_norm_g1",
     .api = GN_API " (1 group)",
     .nin = 3,
     .in = {{"self", true}, {"gamma", true}, {"beta", true}},
     .attrs = g_train1,
     NORM_COMMON(gn_shapes, gn)},
    {.name = "group_norm_g4",
     .api = GN_API " (4 groups)",
     .nin = 3,
     .in = {{"self", true}, {"gamma", true}, {"beta", true}},
     .attrs = g_train4,
     NORM_COMMON(gn_shapes, gn)},
    {.name = "group_norm_noaffine",
     .api = GN_API " (2 groups, gamma and beta NULL)",
     .nin = 1,
     .in = {{"self", true}},
     .attrs = g_noaff2,
     NORM_COMMON(gn_shapes, gn)},
    {.name = "group_norm_stats",
     .api = "aclnnGroupNorm (meanOut, rstdOut; 2 groups)",
     .nin = 1,
     .in = {{"self", false}},
     .attrs = g_stats2,
     NORM_COMMON(gn_shapes, gn)},
};

OGC_DEFINE_FAMILY(batch_norm, batch_norm_ops)
