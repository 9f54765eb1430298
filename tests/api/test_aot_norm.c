/* The MindSpore aot entry points of the norms and GLUs (src/aot/aot_norm.c, docs/aot.md):
 * opgrad_LayerNorm, opgrad_RmsNorm, opgrad_SwiGlu, opgrad_GeGlu and their backwards.
 *
 * - every entry point in float32 (spelled "float32" and "float"), float16, bfloat16 and float64
 * against a float64 reference computed here from the (dtype-rounded) inputs, over the last dim,
 * with several ranks (1-D, 8-D), a normalized dim of 1, no rows (weight gradients 0), long rows and
 *   many rows; LayerNorm and RmsNorm also with a float32 gamma for 16-bit x and a float32 dy
 *   (mixed precision). Outputs are prefilled, so every element must be written. The bounds, per
 *   element, with u the output's unit roundoff: the fp32 computation's error (below) plus one
 *   rounding to the output. For the norms, x̂ = (x - mean) rstd is within 2^-21 (|x̂| + |mean|
 *   rstd) (mean and rstd within a few fp32 ulps), a product or fma adds 2^-22 of its magnitude
 *   and a sum of n terms 2^-22 n times the sum of their magnitudes (the naive fp32 bound); for
 *   the GLUs, silu, gelu and their derivatives within 8 fp32 ulps of their magnitude forms
 *   (docs/ops/activation.md's 4-ulp kernels, doubled), and GeGlu's dA is dy times the gelu saved
 *   in x's dtype (one more rounding of gelu for 16-bit x, as aclnnGeGlu saves it);
 * - every result bitwise equal to the aclnn calls the entry point stands for, run here on the
 *   same buffers (the backwards' statistics recomputed by the forward operator, RmsNorm's fp32
 *   dgamma rounded to nearest even for a 16-bit gamma);
 * - bad nparam, NULL arrays and pointers, dtypes, ranks, weights of the wrong shape, an odd GLU
 *   dim, wrong y / dy / gradient shapes and dtypes return non-zero with a message naming the
 *   entry point, the param and the rule; an aclnn refusal keeps its message after the entry
 *   point's name;
 * - the symbols are exported from the shared library (dlopen + dlsym), and a call through it
 *   matches the static library bitwise. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_geglu.h"
#include "aclnnop/aclnn_geglu_backward.h"
#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "aclnnop/aclnn_rms_norm.h"
#include "aclnnop/aclnn_rms_norm_grad.h"
#include "aclnnop/aclnn_swi_glu.h"
#include "aclnnop/aclnn_swi_glu_grad.h"
#include "aot_args.h"
#include "opgrad/custom_op.h"
#include "test.h"
#include "testutil.h"

#define ENTRIES(X)                                                                                 \
    X(LayerNorm)                                                                                   \
    X(LayerNormBackward)                                                                           \
    X(RmsNorm)                                                                                     \
    X(RmsNormBackward)                                                                             \
    X(SwiGlu)                                                                                      \
    X(SwiGluBackward)                                                                              \
    X(GeGlu)                                                                                       \
    X(GeGluBackward)
#define DECL(n) int opgrad_##n(int, void **, int *, int64_t **, const char **, void *, void *);
ENTRIES(DECL)
#undef DECL

static const aclDataType DTS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
#define NDTS ((int)(sizeof DTS / sizeof DTS[0]))
static const double PI = 3.14159265358979323846;

static double *zeros(int64_t n) { return calloc((size_t)(n ? n : 1), sizeof(double)); }

// Param i of a against the float64 values v: |got - v| <= err + one rounding to the dtype.
static void check_ref(const char *what, const argset *a, int i, const double *v,
                      const double *err) {
    aclDataType dt = a->adt[i];
    int bad = 0;
    for (int64_t k = 0; k < a->numel[i]; k++) {
        double got = test_load(a->p[i], k, dt);
        double tol = err[k] + unit_roundoff(dt) * (fabs(v[k]) + err[k]) + min_subnormal(dt);
        if (!(fabs(got - v[k]) <= tol) && bad++ < 3)
            CHECKF(false, "%s %s element %lld: %.9g, float64 %.9g (tol %.3g)", what,
                   dt_str(dt, false), (long long)k, got, v[k], tol);
    }
    CHECKF(bad == 0, "%s %s: %d of %lld elements outside the bound", what, dt_str(dt, false), bad,
           (long long)a->numel[i]);
}

/* ---- bitwise against the aclnn calls ----------------------------------------------------------
 */

// A fresh buffer and tensor with the shape and dtype of param i of a (or dtype dt if not
// ACL_DT_UNDEFINED, the last dim 1 if stat).
typedef struct outbuf {
    void *p;
    aclTensor *t;
    int64_t n;
    aclDataType dt;
} outbuf;

static outbuf out_like(const argset *a, int i, aclDataType dt, bool stat) {
    int64_t dims[8];
    memcpy(dims, a->dims[i], sizeof(int64_t) * (size_t)a->nd[i]);
    if (stat) dims[a->nd[i] - 1] = 1;
    outbuf o = {.dt = dt == ACL_DT_UNDEFINED ? a->adt[i] : dt};
    o.n = prod(dims, a->nd[i]);
    o.p = test_dev_alloc((size_t)o.n * aclDataTypeSize(o.dt));
    o.t = test_tensor(dims, a->nd[i], o.dt, o.p);
    return o;
}
static void out_free(outbuf *o) {
    aclDestroyTensor(o->t);
    aclrtFree(o->p);
}

// Param i of a bitwise equal to o (an fp32 o rounded to nearest even to a 16-bit param).
static void same_bits(const char *what, const argset *a, int i, const outbuf *o) {
    size_t bytes = bytes_of(a, i);
    void *want = o->p;
    if (o->dt != a->adt[i]) {
        want = test_dev_alloc(bytes);
        for (int64_t k = 0; k < o->n; k++)
            test_store(want, k, a->adt[i], test_load(o->p, k, o->dt));
    }
    CHECKF(memcmp(want, a->p[i], bytes) == 0, "%s: params[%d] differs from the aclnn call's", what,
           i);
    if (want != o->p) aclrtFree(want);
}

static aclTensor *tensor_of(const argset *a, int i) {
    return test_tensor(a->dims[i], a->nd[i], a->adt[i], a->p[i]);
}

// f: the forward's params, g: the backward's (LayerNorm x, gamma, beta, y, dy, dx, dgamma, dbeta;
// RmsNorm x, gamma, y, dy, dx, dgamma), both already through the entry points.
static void check_bitwise_norm(const char *what, bool layer, const argset *f, const argset *g) {
    const int nw = layer ? 2 : 1, iy = nw + 1, idy = nw + 2, idx = nw + 3;
    int64_t C = f->dims[0][f->nd[0] - 1];
    aclIntArray *ns = aclCreateIntArray(&C, 1);
    const bool mv[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(mv, 3);
    aclTensor *x = tensor_of(f, 0), *gam = tensor_of(f, 1), *bet = layer ? tensor_of(f, 2) : NULL;
    outbuf y = out_like(f, iy, ACL_DT_UNDEFINED, false);
    // the statistics (and RmsNormGrad's dgamma) in FLOAT, DOUBLE for a float64 x (as the entries)
    aclDataType sdt = f->adt[0] == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    outbuf mean = out_like(f, 0, sdt, true), rstd = out_like(f, 0, sdt, true);
    aclnnStatus st;
    if (layer)
        OP_RUN(
            st,
            aclnnLayerNormGetWorkspaceSize(x, ns, gam, bet, 1e-5, y.t, mean.t, rstd.t, &ws_, &ex_),
            aclnnLayerNorm);
    else
        OP_RUN(st, aclnnRmsNormGetWorkspaceSize(x, gam, 1e-6, y.t, rstd.t, &ws_, &ex_),
               aclnnRmsNorm);
    CHECK_EQ(st, ACLNN_SUCCESS);
    same_bits(what, f, iy, &y);
    // the backward on g's buffers (the same values as f's), with the statistics just computed
    aclTensor *dy = tensor_of(g, idy);
    outbuf dx = out_like(g, idx, ACL_DT_UNDEFINED, false);
    outbuf dgam = out_like(g, idx + 1, layer ? ACL_DT_UNDEFINED : sdt, false);
    outbuf dbet = out_like(g, layer ? idx + 2 : idx + 1, ACL_DT_UNDEFINED, false);
    if (layer)
        OP_RUN(st,
               aclnnLayerNormBackwardGetWorkspaceSize(dy, x, ns, mean.t, rstd.t, gam, bet, mask,
                                                      dx.t, dgam.t, dbet.t, &ws_, &ex_),
               aclnnLayerNormBackward);
    else
        OP_RUN(st, aclnnRmsNormGradGetWorkspaceSize(dy, x, rstd.t, gam, dx.t, dgam.t, &ws_, &ex_),
               aclnnRmsNormGrad);
    CHECK_EQ(st, ACLNN_SUCCESS);
    same_bits(what, g, idx, &dx);
    same_bits(what, g, idx + 1, &dgam);
    if (layer) same_bits(what, g, idx + 2, &dbet);
    out_free(&y), out_free(&mean), out_free(&rstd), out_free(&dx), out_free(&dgam);
    out_free(&dbet);
    aclDestroyTensor(x), aclDestroyTensor(gam), aclDestroyTensor(dy);
    if (bet) aclDestroyTensor(bet);
    aclDestroyIntArray(ns);
    aclDestroyBoolArray(mask);
}

// f: x, y; g: x, y, dy, dx.
static void check_bitwise_glu(const char *what, bool swi, const argset *f, const argset *g) {
    aclTensor *x = tensor_of(f, 0), *dy = tensor_of(g, 2);
    outbuf y = out_like(f, 1, ACL_DT_UNDEFINED, false),
           gelu = out_like(f, 1, ACL_DT_UNDEFINED, false);
    outbuf dx = out_like(g, 3, ACL_DT_UNDEFINED, false);
    aclnnStatus st, st2;
    if (swi) {
        OP_RUN(st, aclnnSwiGluGetWorkspaceSize(x, -1, y.t, &ws_, &ex_), aclnnSwiGlu);
        OP_RUN(st2, aclnnSwiGluGradGetWorkspaceSize(dy, x, -1, dx.t, &ws_, &ex_), aclnnSwiGluGrad);
    } else {
        OP_RUN(st, aclnnGeGluGetWorkspaceSize(x, -1, 0, y.t, gelu.t, &ws_, &ex_), aclnnGeGlu);
        OP_RUN(st2, aclnnGeGluBackwardGetWorkspaceSize(dy, x, gelu.t, -1, 0, dx.t, &ws_, &ex_),
               aclnnGeGluBackward);
    }
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK_EQ(st2, ACLNN_SUCCESS);
    same_bits(what, f, 1, &y);
    same_bits(what, g, 3, &dx);
    out_free(&y), out_free(&gelu), out_free(&dx);
    aclDestroyTensor(x), aclDestroyTensor(dy);
}

/* ---- LayerNorm, RmsNorm ------------------------------------------------------------------------
 */

// One norm case: x [..., C] of dtype dt, gamma (and beta) of dtype wdt, dy of dtype dy_dt.
static void check_norm(bool layer, aclDataType dt, aclDataType wdt, aclDataType dy_dt,
                       const int64_t *xd, int xn, double lo, double hi, uint64_t seed) {
    char what[128];
    snprintf(what, sizeof what, "%s x %s rank %d, gamma %s, dy %s, seed %llu",
             layer ? "LayerNorm" : "RmsNorm", dt_str(dt, false), xn, dt_str(wdt, false),
             dt_str(dy_dt, false), (unsigned long long)seed);
    const double eps = layer ? 1e-5 : 1e-6;
    const int nw = layer ? 2 : 1; // weights: gamma (and beta)
    int64_t C = xd[xn - 1], rows = prod(xd, xn - 1), n = rows * C;
    const int64_t wd[1] = {C};
    opgrad_aot_fn fwd = layer ? opgrad_LayerNorm : opgrad_RmsNorm;
    opgrad_aot_fn bwd = layer ? opgrad_LayerNormBackward : opgrad_RmsNormBackward;

    argset f;
    memset(&f, 0, sizeof f);
    arg(&f, 0, xd, xn, dt, seed, lo, hi);
    for (int i = 1; i <= nw; i++) arg(&f, i, wd, 1, wdt, seed + (uint64_t)i, -1.5, 1.5);
    arg(&f, nw + 1, xd, xn, dt, seed + 3, 9, 9); // prefilled: every element must be written
    int rc = call(fwd, &f);
    CHECKF(rc == 0, "%s: forward returned %d: %s", what, rc, aclGetRecentErrMsg());
    double *X = values(&f, 0), *G = values(&f, 1), *B = layer ? values(&f, 2) : zeros(C);
    // x̂ and the bound of its error (u = compute_u: fp32, or float64 for float64 x), per
    // element; rstd per row; the row statistics in long double (exact enough for float64 too)
    const double u = compute_u(dt);
    double *xh = zeros(n), *exh = zeros(n), *rs = zeros(rows);
    double *y = zeros(n), *ey = zeros(n);
    for (int64_t r = 0; r < rows; r++) {
        const double *x = X + r * C;
        long double mu = 0, var = 0;
        if (layer) {
            for (int64_t j = 0; j < C; j++) mu += x[j];
            mu /= C;
        }
        for (int64_t j = 0; j < C; j++) var += (x[j] - mu) * (x[j] - mu);
        rs[r] = (double)(1 / sqrtl(var / C + eps));
        for (int64_t j = 0; j < C; j++) {
            int64_t k = r * C + j;
            xh[k] = (double)((x[j] - mu) * rs[r]);
            exh[k] = 8 * u * (fabs(xh[k]) + fabs((double)mu) * rs[r]);
            y[k] = xh[k] * G[j] + B[j];
            ey[k] = exh[k] * fabs(G[j]) + 4 * u * (fabs(xh[k] * G[j]) + fabs(B[j]));
        }
    }
    check_ref(what, &f, nw + 1, y, ey);

    // backward: x, gamma, (beta,) y, dy, dx, dgamma, (dbeta)
    argset g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i <= nw; i++)
        arg(&g, i, f.dims[i], f.nd[i], f.adt[i], i ? seed + (uint64_t)i : seed, i ? -1.5 : lo,
            i ? 1.5 : hi);
    const int iy = nw + 1, idy = nw + 2, idx = nw + 3;
    arg(&g, iy, xd, xn, dt, seed + 3, 0, 0);
    memcpy(g.p[iy], f.p[iy], bytes_of(&f, iy));
    arg(&g, idy, xd, xn, dy_dt, seed + 4, -1, 1);
    for (int i = 0; i <= nw; i++)
        arg(&g, idx + i, f.dims[i], f.nd[i], f.adt[i], seed + 5 + (uint64_t)i, 9, 9);
    rc = call(bwd, &g);
    CHECKF(rc == 0, "%s: backward returned %d: %s", what, rc, aclGetRecentErrMsg());
    double *DY = values(&g, idy);
    double *dx = zeros(n), *edx = zeros(n), *dgam = zeros(C), *egam = zeros(C);
    double *dbet = zeros(C), *ebet = zeros(C);
    for (int64_t r = 0; r < rows; r++) {
        // dx = rstd (g - mean(g) - x̂ mean(g x̂)), g = dy gamma (mean(g) only for LayerNorm)
        long double m1 = 0, m2 = 0;
        double a1 = 0, a2 = 0, ae = 0;
        for (int64_t j = 0; j < C; j++) {
            int64_t k = r * C + j;
            double gj = DY[k] * G[j];
            m1 += gj, m2 += gj * xh[k];
            a1 += fabs(gj), a2 += fabs(gj * xh[k]), ae += fabs(gj) * exh[k];
        }
        m1 /= (double)C, m2 /= (double)C, a1 /= (double)C, a2 /= (double)C, ae /= (double)C;
        if (!layer) m1 = a1 = 0;
        for (int64_t j = 0; j < C; j++) {
            int64_t k = r * C + j;
            double gj = DY[k] * G[j];
            dx[k] = (double)(rs[r] * (gj - m1 - xh[k] * m2));
            edx[k] = rs[r] * (4 * u * (double)(C + 4) * (fabs(gj) + a1 + fabs(xh[k]) * a2) +
                              exh[k] * a2 + fabs(xh[k]) * ae) +
                     8 * u * fabs(dx[k]);
            dgam[j] += DY[k] * xh[k];
            egam[j] += 4 * u * (double)(rows + 2) * fabs(DY[k] * xh[k]) + fabs(DY[k]) * exh[k];
            dbet[j] += DY[k];
            ebet[j] += 4 * u * (double)(rows + 1) * fabs(DY[k]);
        }
    }
    char w2[160];
    snprintf(w2, sizeof w2, "%s: dx", what);
    check_ref(w2, &g, idx, dx, edx);
    snprintf(w2, sizeof w2, "%s: dgamma", what);
    check_ref(w2, &g, idx + 1, dgam, egam);
    if (layer) {
        snprintf(w2, sizeof w2, "%s: dbeta", what);
        check_ref(w2, &g, idx + 2, dbet, ebet);
    }
    check_bitwise_norm(what, layer, &f, &g);
    free(X), free(G), free(B), free(xh), free(exh), free(rs), free(y), free(ey), free(DY);
    free(dx), free(edx), free(dgam), free(egam), free(dbet), free(ebet);
    args_free(&f);
    args_free(&g);
}

static const struct {
    int n;
    int64_t d[8];
} NORM_SHAPES[] = {
    {2, {5, 7}},                   // plain
    {3, {2, 3, 16}},               // rows over two dims
    {1, {9}},                      // 1-D: one row
    {2, {4, 1}},                   // C = 1: x̂ = 0 for LayerNorm
    {2, {0, 5}},                   // no rows: dgamma = dbeta = 0
    {8, {1, 2, 1, 1, 2, 1, 3, 5}}, // 8-D
    {2, {3, 300}},                 // long rows
    {2, {200, 3}},                 // many rows (long weight-gradient sums)
};

static void test_norms(void) {
    for (int layer = 0; layer < 2; layer++)
        for (size_t c = 0; c < sizeof NORM_SHAPES / sizeof NORM_SHAPES[0]; c++)
            for (int d = 0; d < NDTS; d++) {
                uint64_t seed = (uint64_t)(1000 * layer + 100 * c + 10 * d + 1);
                check_norm(layer, DTS[d], DTS[d], DTS[d], NORM_SHAPES[c].d, NORM_SHAPES[c].n, -1, 1,
                           seed);
                // an offset: mean and the spread far apart (LayerNorm's cancellation)
                check_norm(layer, DTS[d], DTS[d], DTS[d], NORM_SHAPES[c].d, NORM_SHAPES[c].n, 3, 5,
                           seed + 5000);
            }
    // float32 gamma / beta and a float32 dy for 16-bit x (mixed precision)
    static const int64_t x[] = {6, 11};
    for (int layer = 0; layer < 2; layer++)
        for (int d = 1; d < 3; d++) {
            check_norm(layer, DTS[d], ACL_FLOAT, DTS[d], x, 2, -1, 1, 9000 + (uint64_t)d);
            check_norm(layer, DTS[d], DTS[d], ACL_FLOAT, x, 2, -1, 1, 9100 + (uint64_t)d);
            check_norm(layer, DTS[d], ACL_FLOAT, ACL_FLOAT, x, 2, -2, 3, 9200 + (uint64_t)d);
        }
}

/* ---- SwiGlu, GeGlu -----------------------------------------------------------------------------
 */

static void check_glu(bool swi, aclDataType dt, const int64_t *xd, int xn, uint64_t seed) {
    char what[128];
    snprintf(what, sizeof what, "%s x %s rank %d, seed %llu", swi ? "SwiGlu" : "GeGlu",
             dt_str(dt, false), xn, (unsigned long long)seed);
    int64_t H = xd[xn - 1] / 2, rows = prod(xd, xn - 1), n = rows * H;
    int64_t yd[8];
    memcpy(yd, xd, sizeof(int64_t) * (size_t)xn);
    yd[xn - 1] = H;
    argset f;
    memset(&f, 0, sizeof f);
    arg(&f, 0, xd, xn, dt, seed, -4, 4);
    arg(&f, 1, yd, xn, dt, seed + 1, 9, 9);
    int rc = call(swi ? opgrad_SwiGlu : opgrad_GeGlu, &f);
    CHECKF(rc == 0, "%s: forward returned %d: %s", what, rc, aclGetRecentErrMsg());
    argset g;
    memset(&g, 0, sizeof g);
    arg(&g, 0, xd, xn, dt, seed, -4, 4);
    arg(&g, 1, yd, xn, dt, seed + 1, 0, 0);
    memcpy(g.p[1], f.p[1], bytes_of(&f, 1));
    arg(&g, 2, yd, xn, dt, seed + 2, -1, 1);
    arg(&g, 3, xd, xn, dt, seed + 3, 9, 9);
    rc = call(swi ? opgrad_SwiGluBackward : opgrad_GeGluBackward, &g);
    CHECKF(rc == 0, "%s: backward returned %d: %s", what, rc, aclGetRecentErrMsg());

    double *X = values(&f, 0), *DY = values(&g, 2);
    double *y = zeros(n), *ey = zeros(n), *dx = zeros(2 * n), *edx = zeros(2 * n);
    const double K = 16 * compute_u(dt); // 8 ulps of the computation (fp32, or float64)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < H; j++) {
            int64_t ia = r * 2 * H + j, ib = ia + H, k = r * H + j;
            double a = X[ia], b = X[ib], dy = DY[k];
            if (swi) { // y = silu(a) b; da = dy b silu'(a), db = dy silu(a)
                double s = 1 / (1 + exp(-a)), silu = a * s;
                double d1 = s * (1 + a * (1 - s)), m1 = s * (1 + fabs(a) * (1 - s));
                y[k] = silu * b, ey[k] = K * fabs(y[k]);
                dx[ia] = dy * b * d1, edx[ia] = K * fabs(dy * b) * m1;
                dx[ib] = dy * silu, edx[ib] = K * fabs(dx[ib]);
            } else { // y = a gelu(b); da = dy gelu(b) (gelu saved in x's dtype), db = dy a gelu'(b)
                double cdf = 0.5 * erfc(-b / sqrt(2.0)), pdf = exp(-0.5 * b * b) / sqrt(2 * PI);
                double gelu = b * cdf;
                // erfc(-b / sqrt 2) and exp(-b^2 / 2) move by up to b^2 relative per relative
                // change of b / sqrt 2 or b^2 / 2: a rounding there (in this float64 reference,
                // and in the float64 kernel) costs up to (b^2 + 2) float64 ulps
                double cond = 2 * (b * b + 2) * 0x1p-53;
                y[k] = a * gelu, ey[k] = (K + cond) * fabs(y[k]);
                dx[ia] = dy * gelu;
                edx[ia] = (K + cond + (dt == ACL_FLOAT ? 0 : unit_roundoff(dt))) * fabs(dx[ia]);
                dx[ib] = dy * a * (cdf + b * pdf);
                edx[ib] = (K + cond) * fabs(dy * a) * (cdf + fabs(b) * pdf);
            }
        }
    check_ref(what, &f, 1, y, ey);
    char w2[160];
    snprintf(w2, sizeof w2, "%s: dx", what);
    check_ref(w2, &g, 3, dx, edx);
    check_bitwise_glu(what, swi, &f, &g);
    free(X), free(DY), free(y), free(ey), free(dx), free(edx);
    args_free(&f);
    args_free(&g);
}

static void test_glus(void) {
    static const struct {
        int n;
        int64_t d[8];
    } S[] = {
        {2, {5, 8}},                   // plain
        {3, {2, 3, 6}},                // rows over two dims
        {1, {4}},                      // 1-D
        {2, {3, 2}},                   // halves of 1
        {2, {0, 4}},                   // empty
        {8, {1, 2, 1, 1, 2, 1, 3, 4}}, // 8-D
        {2, {4, 300}},                 // long rows
    };
    for (int swi = 0; swi < 2; swi++)
        for (size_t c = 0; c < sizeof S / sizeof S[0]; c++)
            for (int d = 0; d < NDTS; d++)
                check_glu(swi, DTS[d], S[c].d, S[c].n, (uint64_t)(1000 * swi + 100 * c + 10 * d));
}

/* ---- errors ------------------------------------------------------------------------------------
 */

#define ALL_FNS(n) opgrad_##n,
static const opgrad_aot_fn ALL[] = {ENTRIES(ALL_FNS)};
#undef ALL_FNS

static void test_errors(void) {
    aot_check_called_with_nothing(ALL, sizeof ALL / sizeof ALL[0]);
    // LayerNorm: x, gamma, beta, y, dy, dx, dgamma, dbeta
    static const int64_t x43[] = {4, 3}, c3[] = {3}, c4[] = {4}, y44[] = {4, 4}, c13[] = {1, 3},
                         s9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    argset a;
    memset(&a, 0, sizeof a);
    arg(&a, 0, x43, 2, ACL_FLOAT, 2, -1, 1);
    arg(&a, 1, c3, 1, ACL_FLOAT, 4, -1, 1);
    arg(&a, 2, c3, 1, ACL_FLOAT, 6, -1, 1);
    arg(&a, 3, x43, 2, ACL_FLOAT, 8, 0, 0);
    arg(&a, 4, x43, 2, ACL_FLOAT, 10, -1, 1);
    arg(&a, 5, x43, 2, ACL_FLOAT, 12, 0, 0);
    arg(&a, 6, c3, 1, ACL_FLOAT, 14, 0, 0);
    arg(&a, 7, c3, 1, ACL_FLOAT, 16, 0, 0);
    CHECK_EQ(call(opgrad_LayerNormBackward, &a), 0);
    CHECK_EQ(opgrad_LayerNormBackward(5, a.p, a.nd, a.sh, a.dt, NULL, NULL),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNormBackward: nparam is 5; it takes 8 params (x, gamma, beta, y, dy, "
              "dx, dgamma, dbeta)");
    CHECK_EQ(opgrad_LayerNorm(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNorm: nparam is 3; it takes 4 params (x, gamma, beta, y)");
    CHECK_EQ(opgrad_RmsNorm(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_RmsNorm: nparam is 4; it takes 3 params (x, gamma, y)");
    CHECK_EQ(opgrad_RmsNormBackward(8, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_RmsNormBackward: nparam is 8; it takes 6 params (x, gamma, y, dy, dx, "
              "dgamma)");
    CHECK_EQ(opgrad_LayerNorm(4, a.p, a.nd, NULL, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_LayerNorm: shapes is NULL");
    void *keep = a.p[2];
    a.p[2] = NULL;
    CHECK_EQ(opgrad_LayerNorm(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_LayerNorm: params[2] (beta) is NULL");
    a.p[2] = keep;
    a.dt[6] = NULL;
    CHECK_EQ(call(opgrad_LayerNormBackward, &a), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_LayerNormBackward: dtypes[6] (dgamma) is NULL");
    a.dt[6] = "float32";
    a.dt[0] = "complex64";
    CHECK_EQ(opgrad_LayerNorm(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNorm: x (params[0]) has dtype \"complex64\"");
    a.dt[0] = "float";
    a.nd[3] = 9, a.sh[3] = (int64_t *)s9;
    CHECK_EQ(opgrad_LayerNorm(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNorm: y (params[3]) has rank 9; 0 to 8 dims are supported");
    a.nd[3] = 2, a.sh[3] = a.dims[3];
    a.nd[0] = 0;
    CHECK_EQ(opgrad_LayerNorm(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNorm: x (params[0]) is 0-d; x is [..., C] with 1 to 8 dims");
    a.nd[0] = 2;
    a.sh[1] = (int64_t *)c4;
    CHECK_EQ(opgrad_LayerNorm(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNorm: gamma (params[1]) has shape [4]; it must be [3] (x [4,3] is "
              "normalized over its last dim)");
    a.sh[1] = a.dims[1];
    a.nd[2] = 2, a.sh[2] = (int64_t *)c13;
    CHECK_EQ(call(opgrad_LayerNormBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNormBackward: beta (params[2]) has shape [1,3]; it must be [3]");
    a.nd[2] = 1, a.sh[2] = a.dims[2];
    a.sh[3] = (int64_t *)y44;
    CHECK_EQ(opgrad_LayerNorm(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNorm: y (params[3]) has shape [4,4] but the forward output has shape "
              "[4,3] (the shape of x)");
    a.sh[3] = a.dims[3];
    a.sh[4] = (int64_t *)y44;
    CHECK_EQ(call(opgrad_LayerNormBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNormBackward: dy (params[4]) has shape [4,4] but y has [4,3]");
    a.sh[4] = a.dims[4];
    a.sh[7] = (int64_t *)c4;
    CHECK_EQ(call(opgrad_LayerNormBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNormBackward: dbeta (params[7]) has shape [4] but beta has [3]: a "
              "gradient has its input's shape");
    a.sh[7] = a.dims[7];
    a.dt[6] = "bfloat16";
    CHECK_EQ(call(opgrad_LayerNormBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNormBackward: dgamma (params[6]) has dtype bfloat16 but gamma is "
              "float32: a gradient has its input's dtype");
    a.dt[6] = "float32";
    // an aclnn refusal keeps its message: dgamma inside dy's memory
    keep = a.p[6];
    a.p[6] = a.p[4];
    CHECK_EQ(call(opgrad_LayerNormBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LayerNormBackward: aclnnLayerNormBackwardGetWorkspaceSize:");
    a.p[6] = keep;
    CHECK_EQ(call(opgrad_LayerNormBackward, &a), 0); // all fixed again
    // RmsNorm: x, gamma, y, dy, dx, dgamma (the LayerNorm params without beta)
    argset r;
    memset(&r, 0, sizeof r);
    arg(&r, 0, x43, 2, ACL_BF16, 2, -1, 1);
    arg(&r, 1, c3, 1, ACL_BF16, 4, -1, 1);
    arg(&r, 2, x43, 2, ACL_BF16, 6, 0, 0);
    arg(&r, 3, x43, 2, ACL_BF16, 8, -1, 1);
    arg(&r, 4, x43, 2, ACL_BF16, 10, 0, 0);
    arg(&r, 5, c3, 1, ACL_BF16, 12, 0, 0);
    CHECK_EQ(call(opgrad_RmsNormBackward, &r), 0);
    r.sh[5] = (int64_t *)c4;
    CHECK_EQ(call(opgrad_RmsNormBackward, &r), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_RmsNormBackward: dgamma (params[5]) has shape [4] but gamma has [3]");
    r.sh[5] = r.dims[5];
    r.dt[4] = "float16";
    CHECK_EQ(call(opgrad_RmsNormBackward, &r), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_RmsNormBackward: dx (params[4]) has dtype float16 but x is bfloat16");
    r.dt[4] = "bfloat16";
    r.sh[1] = (int64_t *)c4;
    CHECK_EQ(opgrad_RmsNorm(3, r.p, r.nd, r.sh, r.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_RmsNorm: gamma (params[1]) has shape [4]; it must be [3]");
    r.sh[1] = r.dims[1];
    r.dt[1] = "float16"; // gamma float16 for bfloat16 x: aclnnRmsNorm refuses it
    CHECK_EQ(opgrad_RmsNorm(3, r.p, r.nd, r.sh, r.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_RmsNorm: aclnnRmsNormGetWorkspaceSize:");
    r.dt[1] = "bfloat16";
    CHECK_EQ(call(opgrad_RmsNormBackward, &r), 0);
    args_free(&r);
    args_free(&a);

    // GLUs: x, y, dy, dx
    static const int64_t x46[] = {4, 6}, x45[] = {4, 5}, y43[] = {4, 3}, y46[] = {4, 6};
    memset(&a, 0, sizeof a);
    arg(&a, 0, x46, 2, ACL_FLOAT16, 2, -1, 1);
    arg(&a, 1, y43, 2, ACL_FLOAT16, 4, 0, 0);
    arg(&a, 2, y43, 2, ACL_FLOAT16, 6, -1, 1);
    arg(&a, 3, x46, 2, ACL_FLOAT16, 8, 0, 0);
    CHECK_EQ(call(opgrad_SwiGluBackward, &a), 0);
    CHECK_EQ(call(opgrad_GeGluBackward, &a), 0);
    CHECK_EQ(opgrad_SwiGlu(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_SwiGlu: nparam is 4; it takes 2 params (x, y)");
    CHECK_EQ(opgrad_GeGluBackward(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_GeGluBackward: nparam is 2; it takes 4 params (x, y, dy, dx)");
    a.nd[0] = 0;
    CHECK_EQ(opgrad_GeGlu(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_GeGlu: x (params[0]) is 0-d; x is [..., 2H] with 1 to 8 dims");
    a.nd[0] = 2;
    a.sh[0] = (int64_t *)x45;
    CHECK_EQ(opgrad_SwiGlu(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_SwiGlu: x (params[0]) [4,5] has an odd last dim (5); it is split in two "
              "halves");
    a.sh[0] = a.dims[0];
    a.sh[1] = (int64_t *)y46;
    CHECK_EQ(opgrad_GeGlu(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_GeGlu: y (params[1]) has shape [4,6] but the forward output has shape [4,3] "
              "(x [4,6] with its last dim halved)");
    a.sh[1] = a.dims[1];
    a.sh[3] = (int64_t *)y43;
    CHECK_EQ(call(opgrad_SwiGluBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_SwiGluBackward: dx (params[3]) has shape [4,3] but x has [4,6]");
    a.sh[3] = a.dims[3];
    a.dt[3] = "float32";
    CHECK_EQ(call(opgrad_GeGluBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_GeGluBackward: dx (params[3]) has dtype float32 but x is float16");
    a.dt[3] = "float16";
    keep = a.p[1];
    a.p[1] = NULL;
    CHECK_EQ(call(opgrad_SwiGluBackward, &a), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_SwiGluBackward: params[1] (y) is NULL");
    a.p[1] = keep;
    // an aclnn refusal keeps its message: a float32 dy for float16 x (the GLUs take one dtype)
    aclrtFree(a.p[2]);
    arg(&a, 2, y43, 2, ACL_FLOAT, 6, -1, 1);
    CHECK_EQ(call(opgrad_GeGluBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG(
        "opgrad_GeGluBackward: aclnnGeGluBackwardGetWorkspaceSize: self has dtype float16 but "
        "gradOutput has dtype float32");
    CHECK_EQ(call(opgrad_SwiGluBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG(
        "opgrad_SwiGluBackward: aclnnSwiGluGradGetWorkspaceSize: x has dtype float16 but yGrad "
        "has dtype float32");
    aclrtFree(a.p[2]);
    arg(&a, 2, y43, 2, ACL_FLOAT16, 6, -1, 1);
    CHECK_EQ(call(opgrad_GeGluBackward, &a), 0); // all fixed again
    args_free(&a);
}

/* ---- exported from the shared library ---------------------------------------------------------
 */

#ifndef OPGRAD_SHARED_LIB
#error "OPGRAD_SHARED_LIB (the built libopgrad.so) must be defined by tests/CMakeLists.txt"
#endif

static void test_exported_from_shared_library(void) {
#define NAME(n) "opgrad_" #n,
    static const char *const names[] = {ENTRIES(NAME)};
#undef NAME
    void *h = aot_open_exported(OPGRAD_SHARED_LIB, names, sizeof names / sizeof names[0]);
    if (!h) return;
    static const int64_t x[] = {2, 3, 17}, c[] = {17};
    aot_check_shared_backward(h, "opgrad_LayerNormBackward", opgrad_LayerNormBackward, x, c, 1, c,
                              1, x,
                              "opgrad_LayerNormBackward: gamma (params[1]) has dtype \"int8\"");
    // No dlclose: see test_aot_builtins.c (the second runtime's process-lifetime state).
}

int main(void) {
    RUN(test_norms);
    RUN(test_glus);
    RUN(test_errors);
    RUN(test_exported_from_shared_library);
    return test_summary();
}
