/* The MindSpore aot entry points of the matmul family (src/aot/aot_matmul.c, docs/aot.md):
 * opgrad_Matmul, opgrad_Linear, opgrad_LinearRelu, opgrad_LinearGelu, opgrad_LinearGeluErf and
 * their backwards.
 *
 * - every entry point in float32 (spelled "float32" and "float"), float16, bfloat16 and float64
 * against a float64 naive reference computed from the (dtype-rounded) inputs, including batch
 * broadcast (gradients summed over the broadcast dims), 1-D operands (torch.matmul), empty tensors,
 * 8-D, a bias [out] or [1,out], and dy in float32 for 16-bit inputs. Outputs are prefilled, so
 *   every element must be written. The bounds, per element, with u the output's unit roundoff
 *   and n the number of products summed (the batch included): the GEMM engine's fp32 bound
 *   2^-22 n sum|terms| (docs/ops/matmul.md, Accuracy) plus one rounding to the output; for the
 *   activations their Lipschitz constants times the error of z (relu 1, gelu 1.2, gelu' 1) and
 *   the kernels' 4-ulp bound taken as 8 ulps (docs/ops/activation.md); where relu's mask is
 *   ambiguous (|z| within z's error) the term may go either way and its magnitude is allowed;
 * - Matmul and Linear / LinearRelu (both directions) bitwise against the one aclnn call they
 *   stand for (aclnnMatmul; aclnnFusedMatmul / aclnnFusedMatmulBackward on the transposed view
 *   of w);
 * - bad nparam, NULL arrays and pointers, dtypes, ranks, shapes that do not multiply or
 *   broadcast, wrong y / dy / gradient shapes and dtypes return non-zero with a message naming
 *   the entry point, the param and the rule; an aclnn refusal keeps its message after the
 *   entry point's name;
 * - the symbols are exported from the shared library (dlopen + dlsym), and a call through it
 *   matches the static library bitwise. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_fused_matmul.h"
#include "aclnnop/aclnn_fused_matmul_backward.h"
#include "aclnnop/aclnn_matmul.h"
#include "aot_args.h"
#include "opgrad/custom_op.h"
#include "test.h"
#include "testutil.h"

#define ENTRIES(X)                                                                                 \
    X(Matmul)                                                                                      \
    X(MatmulBackward)                                                                              \
    X(Linear)                                                                                      \
    X(LinearBackward)                                                                              \
    X(LinearRelu)                                                                                  \
    X(LinearReluBackward)                                                                          \
    X(LinearGelu)                                                                                  \
    X(LinearGeluBackward)                                                                          \
    X(LinearGeluErf)                                                                               \
    X(LinearGeluErfBackward)
#define DECL(n) int opgrad_##n(int, void **, int *, int64_t **, const char **, void *, void *);
ENTRIES(DECL)
#undef DECL

static const aclDataType DTS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
#define NDTS ((int)(sizeof DTS / sizeof DTS[0]))

/* ---- aot argument sets ----------------------------------------------------------------------- */

// A float64 reference with, per element, the bound of the fp32 computation before the final
// rounding (err) and the count of products summed (cnt) with their magnitudes (abs).
typedef struct ref {
    int64_t n;
    double *v, *abs, *err;
    int64_t *cnt;
} ref;

static ref ref_new(int64_t n) {
    size_t m = (size_t)(n ? n : 1);
    ref r = {n, calloc(m, sizeof(double)), calloc(m, sizeof(double)), calloc(m, sizeof(double)),
             calloc(m, sizeof(int64_t))};
    return r;
}
static void ref_free(ref *r) {
    free(r->v);
    free(r->abs);
    free(r->err);
    free(r->cnt);
}

// Param i of a against r: |got - v| <= 4 u cnt abs + err (u: compute_u, float64 for float64
// operands, else fp32), plus one rounding to the dtype.
static void check_ref(const char *what, const argset *a, int i, const ref *r) {
    CHECKF(a->numel[i] == r->n, "%s: %lld elements, reference %lld", what, (long long)a->numel[i],
           (long long)r->n);
    if (a->numel[i] != r->n) return;
    aclDataType dt = a->adt[i];
    int bad = 0;
    for (int64_t k = 0; k < r->n; k++) {
        double got = test_load(a->p[i], k, dt);
        double e = 4 * compute_u(dt) * (double)r->cnt[k] * r->abs[k] + r->err[k];
        double tol = e + unit_roundoff(dt) * (fabs(r->v[k]) + e) + min_subnormal(dt);
        double d = fabs(got - r->v[k]);
        if (!(d <= tol) && bad++ < 3)
            CHECKF(false, "%s %s element %lld: %.9g, float64 %.9g (tol %.3g, %lld terms)", what,
                   dt_str(dt, false), (long long)k, got, r->v[k], tol, (long long)r->cnt[k]);
    }
    CHECKF(bad == 0, "%s %s: %d of %lld elements outside the bound", what, dt_str(dt, false), bad,
           (long long)r->n);
}

/* ---- Matmul ------------------------------------------------------------------------------------
 */

// The batch of y (NumPy broadcast of a's and b's dims but the last two).
static int broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out) {
    int n = na > nb ? na : nb;
    for (int j = 0; j < n; j++) {
        int ia = j - (n - na), ib = j - (n - nb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        out[j] = da == 1 ? db : da;
    }
    return n;
}

// Flat index, in an operand of batch dims (d, n), of the full batch's flat element k.
static int64_t bcast_index(int64_t k, const int64_t *full, int nfull, const int64_t *d, int n) {
    int64_t idx = 0, stride = 1;
    for (int j = nfull - 1; j >= 0; j--) {
        int64_t c = k % full[j];
        k /= full[j];
        int ij = j - (nfull - n);
        if (ij >= 0) {
            if (d[ij] != 1) idx += c * stride;
            stride *= d[ij];
        }
    }
    return idx;
}

static aclnnStatus aclnn_matmul(argset *a) { // a, b, y
    aclTensor *t[3];
    for (int i = 0; i < 3; i++) t[i] = test_tensor(a->dims[i], a->nd[i], a->adt[i], a->p[i]);
    aclnnStatus st;
    OP_RUN(st, aclnnMatmulGetWorkspaceSize(t[0], t[1], t[2], 0, &ws_, &ex_), aclnnMatmul);
    for (int i = 0; i < 3; i++) aclDestroyTensor(t[i]);
    return st;
}

static void check_matmul(aclDataType dt, aclDataType dy_dt, const int64_t *ad, int an,
                         const int64_t *bd, int bn, uint64_t seed) {
    char what[96];
    snprintf(what, sizeof what, "Matmul a rank %d, b rank %d, seed %llu", an, bn,
             (unsigned long long)seed);
    int64_t M = an >= 2 ? ad[an - 2] : 1, K = ad[an - 1], N = bn >= 2 ? bd[bn - 1] : 1;
    int nab = an > 2 ? an - 2 : 0, nbb = bn > 2 ? bn - 2 : 0;
    int64_t batch[8], yd[8];
    int nbatch = broadcast(ad, nab, bd, nbb, batch), ny = nbatch;
    memcpy(yd, batch, sizeof(int64_t) * (size_t)nbatch);
    if (an >= 2) yd[ny++] = M;
    if (bn >= 2) yd[ny++] = N;
    int64_t B = prod(batch, nbatch);

    argset f;
    memset(&f, 0, sizeof f);
    arg(&f, 0, ad, an, dt, seed, -1, 1);
    arg(&f, 1, bd, bn, dt, seed + 1, -1, 1);
    arg(&f, 2, yd, ny, dt, seed + 2, 9, 9); // prefilled: every element must be written
    int rc = call(opgrad_Matmul, &f);
    CHECKF(rc == 0, "%s: opgrad_Matmul returned %d: %s", what, rc, aclGetRecentErrMsg());
    double *A = values(&f, 0), *Bv = values(&f, 1);
    ref y = ref_new(f.numel[2]);
    for (int64_t bi = 0; bi < B; bi++) {
        int64_t ai = bcast_index(bi, batch, nbatch, ad, nab);
        int64_t bj = bcast_index(bi, batch, nbatch, bd, nbb);
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                int64_t o = (bi * M + m) * N + n;
                for (int64_t k = 0; k < K; k++) {
                    double t = A[(ai * M + m) * K + k] * Bv[(bj * K + k) * N + n];
                    y.v[o] += t, y.abs[o] += fabs(t);
                }
                y.cnt[o] = K;
            }
    }
    check_ref(what, &f, 2, &y);
    // bitwise the aclnnMatmul call
    void *got = malloc(bytes_of(&f, 2) + 1);
    memcpy(got, f.p[2], bytes_of(&f, 2));
    memset(f.p[2], 0x5a, bytes_of(&f, 2));
    CHECK_EQ(aclnn_matmul(&f), ACLNN_SUCCESS);
    CHECKF(memcmp(got, f.p[2], bytes_of(&f, 2)) == 0, "%s %s: y differs from aclnnMatmul's", what,
           dt_str(dt, false));
    free(got);

    // backward: a, b, y, dy, da, db
    argset g;
    memset(&g, 0, sizeof g);
    arg(&g, 0, ad, an, dt, seed, -1, 1);
    arg(&g, 1, bd, bn, dt, seed + 1, -1, 1);
    arg(&g, 2, yd, ny, dt, seed + 2, 0, 0);
    memcpy(g.p[2], f.p[2], bytes_of(&f, 2));
    arg(&g, 3, yd, ny, dy_dt, seed + 3, -1, 1);
    arg(&g, 4, ad, an, dt, seed + 4, 9, 9);
    arg(&g, 5, bd, bn, dt, seed + 5, 9, 9);
    rc = call(opgrad_MatmulBackward, &g);
    CHECKF(rc == 0, "%s: opgrad_MatmulBackward returned %d: %s", what, rc, aclGetRecentErrMsg());
    double *DY = values(&g, 3);
    ref da = ref_new(g.numel[4]), db = ref_new(g.numel[5]);
    for (int64_t bi = 0; bi < B; bi++) {
        int64_t ai = bcast_index(bi, batch, nbatch, ad, nab);
        int64_t bj = bcast_index(bi, batch, nbatch, bd, nbb);
        for (int64_t m = 0; m < M; m++)
            for (int64_t k = 0; k < K; k++)
                for (int64_t n = 0; n < N; n++) {
                    double d = DY[(bi * M + m) * N + n];
                    int64_t ia = (ai * M + m) * K + k, ib = (bj * K + k) * N + n;
                    double ta = d * Bv[ib], tb = A[ia] * d;
                    da.v[ia] += ta, da.abs[ia] += fabs(ta), da.cnt[ia]++;
                    db.v[ib] += tb, db.abs[ib] += fabs(tb), db.cnt[ib]++;
                }
    }
    char w2[140];
    snprintf(w2, sizeof w2, "%s: da", what);
    check_ref(w2, &g, 4, &da);
    snprintf(w2, sizeof w2, "%s: db", what);
    check_ref(w2, &g, 5, &db);
    free(A), free(Bv), free(DY);
    ref_free(&y), ref_free(&da), ref_free(&db);
    args_free(&f);
    args_free(&g);
}

static void test_matmul(void) {
    static const struct {
        int an, bn;
        int64_t ad[8], bd[8];
    } S[] = {
        {2, 2, {5, 7}, {7, 6}},                         // plain
        {3, 2, {3, 5, 7}, {7, 6}},                      // db: the batch folds into K
        {2, 4, {5, 7}, {2, 3, 7, 6}},                   // da summed over [2,3]
        {4, 3, {2, 1, 5, 7}, {3, 7, 6}},                // both broadcast
        {3, 3, {1, 5, 7}, {4, 7, 6}},                   // a batch of 1
        {3, 3, {4, 5, 7}, {4, 7, 6}},                   // equal batches
        {1, 2, {7}, {7, 6}},                            // 1-D a: a row
        {3, 1, {3, 5, 7}, {7}},                         // 1-D b: a column
        {1, 1, {7}, {7}},                               // dot: 0-d y
        {1, 3, {7}, {2, 7, 6}},                         // 1-D a, batched b
        {3, 1, {2, 5, 7}, {7}},                         // batched a, 1-D b
        {2, 2, {0, 7}, {7, 6}},                         // empty y: db = 0
        {2, 2, {5, 0}, {0, 6}},                         // K = 0: y = 0
        {2, 3, {5, 7}, {0, 7, 6}},                      // empty batch: da = 0
        {8, 2, {1, 2, 1, 2, 1, 1, 3, 4}, {4, 2}},       // 8-D
        {4, 8, {3, 1, 2, 4}, {2, 1, 1, 1, 3, 1, 4, 5}}, // 8-D b, a broadcast
        {2, 2, {4, 300}, {300, 5}},                     // long sums
        {3, 3, {16, 2, 3}, {1, 3, 2}},                  // db summed over 16
    };
    for (size_t c = 0; c < sizeof S / sizeof S[0]; c++)
        for (int d = 0; d < NDTS; d++)
            check_matmul(DTS[d], DTS[d], S[c].ad, S[c].an, S[c].bd, S[c].bn,
                         (uint64_t)(100 * c + 10 * d));
    // dy in float32 for 16-bit operands (mixed precision)
    static const int64_t a3[] = {3, 5, 7}, a2[] = {5, 7}, b2[] = {7, 6}, b4[] = {2, 3, 7, 6};
    check_matmul(ACL_BF16, ACL_FLOAT, a3, 3, b2, 2, 7001);
    check_matmul(ACL_FLOAT16, ACL_FLOAT, a2, 2, b4, 4, 7002);
}

/* ---- Linear ------------------------------------------------------------------------------------
 */

enum { ACT_NONE, ACT_RELU, ACT_GELU, ACT_GELU_ERF };
static const opgrad_aot_fn LIN_FWD[] = {opgrad_Linear, opgrad_LinearRelu, opgrad_LinearGelu,
                                        opgrad_LinearGeluErf};
static const opgrad_aot_fn LIN_BWD[] = {opgrad_LinearBackward, opgrad_LinearReluBackward,
                                        opgrad_LinearGeluBackward, opgrad_LinearGeluErfBackward};
static const char *const LIN_NAME[] = {"Linear", "LinearRelu", "LinearGelu", "LinearGeluErf"};

static const double PI = 3.14159265358979323846;

static double gelu64(int act, double z, double *deriv) {
    if (act == ACT_GELU) { // tanh approximation
        double c = sqrt(2.0 / PI), u = c * (z + 0.044715 * z * z * z), t = tanh(u);
        *deriv = 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * c * (1 + 3 * 0.044715 * z * z);
        return 0.5 * z * (1 + t);
    }
    double cdf = 0.5 * erfc(-z / sqrt(2.0)), pdf = exp(-0.5 * z * z) / sqrt(2 * PI);
    *deriv = cdf + z * pdf;
    return z * cdf;
}

// The aclnn calls Linear and LinearRelu stand for, on the same buffers: x as [rows, in], w^T as
// a strided view. t: x, w, b, y (forward) or x, w, b, y, dy, dx, dw, db.
static aclnnStatus aclnn_linear(argset *a, int act, bool backward) {
    int64_t in = a->dims[1][1], out = a->dims[1][0], rows = prod(a->dims[0], a->nd[0] - 1);
    const int64_t xd[2] = {rows, in}, yd[2] = {rows, out}, wd[2] = {in, out}, ws[2] = {1, in};
    aclTensor *x = test_tensor(xd, 2, a->adt[0], a->p[0]);
    aclTensor *wT = aclCreateTensor(wd, 2, a->adt[1], ws, 0, ACL_FORMAT_ND, NULL, 0, a->p[1]);
    aclTensor *b = test_tensor(a->dims[2], a->nd[2], a->adt[2], a->p[2]);
    bool f32 = a->adt[0] == ACL_FLOAT || a->adt[1] == ACL_FLOAT || a->adt[0] != a->adt[1];
    int8_t cube = f32 ? 3 : 0;
    const char *type = act == ACT_RELU ? "relu" : "";
    aclnnStatus st;
    if (!backward) {
        aclTensor *y = test_tensor(yd, 2, a->adt[3], a->p[3]);
        OP_RUN(st, aclnnFusedMatmulGetWorkspaceSize(x, wT, b, NULL, type, cube, y, &ws_, &ex_),
               aclnnFusedMatmul);
        aclDestroyTensor(y);
    } else {
        aclTensor *dy = test_tensor(yd, 2, a->adt[4], a->p[4]);
        aclTensor *dx = test_tensor(xd, 2, a->adt[5], a->p[5]);
        aclTensor *dwT = aclCreateTensor(wd, 2, a->adt[6], ws, 0, ACL_FORMAT_ND, NULL, 0, a->p[6]);
        aclTensor *db = test_tensor(a->dims[7], a->nd[7], a->adt[7], a->p[7]);
        OP_RUN(st,
               aclnnFusedMatmulBackwardGetWorkspaceSize(dy, x, wT, b, NULL, type, cube, dx, dwT, db,
                                                        NULL, &ws_, &ex_),
               aclnnFusedMatmulBackward);
        aclDestroyTensor(dy), aclDestroyTensor(dx), aclDestroyTensor(dwT), aclDestroyTensor(db);
    }
    aclDestroyTensor(x), aclDestroyTensor(wT), aclDestroyTensor(b);
    return st;
}

// Outputs first..a->n-1 of a bitwise equal to the aclnn calls'.
static void check_bitwise_linear(const char *what, argset *a, int act, bool backward, int first) {
    void *saved[MAXP] = {0};
    for (int i = first; i < a->n; i++) {
        saved[i] = malloc(bytes_of(a, i) + 1);
        memcpy(saved[i], a->p[i], bytes_of(a, i));
        memset(a->p[i], 0x5a, bytes_of(a, i));
    }
    CHECK_EQ(aclnn_linear(a, act, backward), ACLNN_SUCCESS);
    for (int i = first; i < a->n; i++) {
        CHECKF(memcmp(saved[i], a->p[i], bytes_of(a, i)) == 0,
               "%s: output %d differs from the aclnn call's", what, i);
        free(saved[i]);
    }
}

static void check_linear(int act, aclDataType dt, aclDataType dy_dt, const int64_t *xd, int xn,
                         int64_t out, bool bias2d, uint64_t seed) {
    char what[96];
    snprintf(what, sizeof what, "%s %s x rank %d, out %lld, seed %llu", LIN_NAME[act],
             dt_str(dt, false), xn, (long long)out, (unsigned long long)seed);
    int64_t in = xd[xn - 1], rows = prod(xd, xn - 1);
    const int64_t wd[2] = {out, in}, bd[2] = {1, out};
    int64_t yd[8];
    memcpy(yd, xd, sizeof(int64_t) * (size_t)xn);
    yd[xn - 1] = out;
    argset f;
    memset(&f, 0, sizeof f);
    arg(&f, 0, xd, xn, dt, seed, -1, 1);
    arg(&f, 1, wd, 2, dt, seed + 1, -1, 1);
    arg(&f, 2, bias2d ? bd : bd + 1, bias2d ? 2 : 1, dt, seed + 2, -1, 1);
    arg(&f, 3, yd, xn, dt, seed + 3, 9, 9);
    int rc = call(LIN_FWD[act], &f);
    CHECKF(rc == 0, "%s: forward returned %d: %s", what, rc, aclGetRecentErrMsg());
    double *X = values(&f, 0), *W = values(&f, 1), *Bv = values(&f, 2);
    // z = x @ w^T + b, its magnitude sum and the bound of its fp32 error
    size_t nz = (size_t)(rows * out > 0 ? rows * out : 1);
    double *z = calloc(nz, sizeof(double)), *zabs = calloc(nz, sizeof(double));
    double *zerr = calloc(nz, sizeof(double));
    ref y = ref_new(f.numel[3]);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < out; o++) {
            int64_t i = r * out + o;
            z[i] = Bv[o], zabs[i] = fabs(Bv[o]);
            for (int64_t k = 0; k < in; k++) {
                double t = X[r * in + k] * W[o * in + k];
                z[i] += t, zabs[i] += fabs(t);
            }
            zerr[i] = 4 * compute_u(dt) * (double)(in + 1) * zabs[i];
            double dg;
            switch (act) {
            case ACT_NONE:
                y.v[i] = z[i], y.abs[i] = zabs[i], y.cnt[i] = in + 1;
                break;
            case ACT_RELU: // 1-Lipschitz
                y.v[i] = z[i] > 0 ? z[i] : 0, y.abs[i] = zabs[i], y.cnt[i] = in + 1;
                break;
            default: // gelu: 1.2-Lipschitz, the kernel within 8 fp32 ulps of its value
                y.v[i] = gelu64(act, z[i], &dg);
                y.err[i] = 1.2 * zerr[i] + 16 * compute_u(dt) * (fabs(y.v[i]) + 1.2 * zerr[i]) +
                           compute_tiny(dt);
            }
        }
    check_ref(what, &f, 3, &y);
    if (act <= ACT_RELU) check_bitwise_linear(what, &f, act, false, 3);

    // backward: x, w, b, y, dy, dx, dw, db
    argset g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < 3; i++) arg(&g, i, f.dims[i], f.nd[i], dt, seed + (uint64_t)i, -1, 1);
    arg(&g, 3, yd, xn, dt, seed + 3, 0, 0);
    memcpy(g.p[3], f.p[3], bytes_of(&f, 3));
    arg(&g, 4, yd, xn, dy_dt, seed + 4, -1, 1);
    for (int i = 0; i < 3; i++)
        arg(&g, 5 + i, f.dims[i], f.nd[i], dt, seed + 5 + (uint64_t)i, 9, 9);
    rc = call(LIN_BWD[act], &g);
    CHECKF(rc == 0, "%s: backward returned %d: %s", what, rc, aclGetRecentErrMsg());
    double *DY = values(&g, 4);
    // dz = dy * act'(z), with the bound of its error (edz) and, where relu's mask is ambiguous,
    // the magnitude the term may take either way (amb)
    double *dz = calloc(nz, sizeof(double)), *edz = calloc(nz, sizeof(double));
    bool *amb = calloc(nz, sizeof(bool));
    for (int64_t i = 0; i < rows * out; i++) {
        double dg = 1;
        if (act == ACT_RELU) {
            dg = z[i] > 0;
            amb[i] = fabs(z[i]) <= zerr[i];
        } else if (act >= ACT_GELU) { // gelu'' within 1; the kernel within 8 ulps
            gelu64(act, z[i], &dg);
            edz[i] = fabs(DY[i]) * (zerr[i] + 16 * compute_u(dt) * (fabs(dg) + zerr[i])) +
                     compute_tiny(dt);
        }
        dz[i] = DY[i] * dg;
    }
    ref dx = ref_new(g.numel[5]), dw = ref_new(g.numel[6]), db = ref_new(g.numel[7]);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < out; o++) {
            int64_t i = r * out + o;
            double m = amb[i] ? fabs(DY[i]) : 0; // an ambiguous mask: either value
            for (int64_t k = 0; k < in; k++) {
                int64_t ix = r * in + k, iw = o * in + k;
                double tx = dz[i] * W[iw], tw = dz[i] * X[ix];
                dx.v[ix] += tx, dx.abs[ix] += fabs(tx), dx.cnt[ix]++;
                dx.err[ix] += (edz[i] + m) * fabs(W[iw]);
                dw.v[iw] += tw, dw.abs[iw] += fabs(tw), dw.cnt[iw]++;
                dw.err[iw] += (edz[i] + m) * fabs(X[ix]);
            }
            db.v[o] += dz[i], db.abs[o] += fabs(dz[i]), db.cnt[o]++;
            db.err[o] += edz[i] + m;
        }
    const char *gn[3] = {"dx", "dw", "db"};
    ref *gr[3] = {&dx, &dw, &db};
    for (int i = 0; i < 3; i++) {
        char w2[140];
        snprintf(w2, sizeof w2, "%s: %s", what, gn[i]);
        check_ref(w2, &g, 5 + i, gr[i]);
    }
    if (act <= ACT_RELU) check_bitwise_linear(what, &g, act, true, 5);
    free(X), free(W), free(Bv), free(DY), free(z), free(zabs), free(zerr), free(dz), free(edz);
    free(amb);
    ref_free(&y), ref_free(&dx), ref_free(&dw), ref_free(&db);
    args_free(&f);
    args_free(&g);
}

static void test_linear(void) {
    static const struct {
        int xn;
        int64_t xd[8], out;
        bool bias2d;
    } S[] = {
        {2, {6, 13}, 9, false},                  // nn.Dense
        {3, {2, 3, 13}, 9, true},                // a batch (folded into the rows); bias [1,out]
        {1, {13}, 5, false},                     // 1-D x
        {2, {0, 13}, 4, false},                  // no rows: dw = db = 0
        {2, {4, 0}, 3, false},                   // in = 0: y = act(b)
        {8, {1, 2, 1, 1, 2, 1, 3, 5}, 4, false}, // 8-D
        {2, {40, 200}, 7, false},                // long sums
    };
    for (int act = 0; act < 4; act++)
        for (size_t c = 0; c < sizeof S / sizeof S[0]; c++)
            for (int d = 0; d < NDTS; d++)
                check_linear(act, DTS[d], DTS[d], S[c].xd, S[c].xn, S[c].out, S[c].bias2d,
                             (uint64_t)(1000 * act + 100 * c + 10 * d + 1));
    // dy in float32 for 16-bit inputs
    static const int64_t x[] = {5, 11};
    for (int act = 0; act < 4; act++) {
        check_linear(act, ACL_BF16, ACL_FLOAT, x, 2, 6, false, 9000 + (uint64_t)act);
        check_linear(act, ACL_FLOAT16, ACL_FLOAT, x, 2, 6, true, 9100 + (uint64_t)act);
    }
}

/* ---- errors ------------------------------------------------------------------------------------
 */

#define ALL_FNS(n) opgrad_##n,
static const opgrad_aot_fn ALL[] = {ENTRIES(ALL_FNS)};
#undef ALL_FNS

static void test_errors(void) {
    aot_check_called_with_nothing(ALL, sizeof ALL / sizeof ALL[0]);
    argset a;
    static const int64_t a43[] = {4, 3}, b32[] = {3, 2}, y42[] = {4, 2}, y43[] = {4, 3},
                         b52[] = {5, 2}, s9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    memset(&a, 0, sizeof a);
    arg(&a, 0, a43, 2, ACL_FLOAT, 2, -1, 1);
    arg(&a, 1, b32, 2, ACL_FLOAT, 4, -1, 1);
    arg(&a, 2, y42, 2, ACL_FLOAT, 6, 0, 0);
    arg(&a, 3, y42, 2, ACL_FLOAT, 8, -1, 1);
    arg(&a, 4, a43, 2, ACL_FLOAT, 10, 0, 0);
    arg(&a, 5, b32, 2, ACL_FLOAT, 12, 0, 0);
    // nparam, NULL arrays and pointers
    CHECK_EQ(opgrad_MatmulBackward(5, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_MatmulBackward: nparam is 5; it takes 6 params (a, b, y, dy, da, db)");
    CHECK_EQ(opgrad_Matmul(6, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: nparam is 6; it takes 3 params (a, b, y)");
    CHECK_EQ(opgrad_LinearBackward(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LinearBackward: nparam is 4; it takes 8 params (x, w, b, y, dy, dx, dw, db)");
    CHECK_EQ(opgrad_LinearGeluErf(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LinearGeluErf: nparam is 3; it takes 4 params (x, w, b, y)");
    CHECK_EQ(opgrad_Matmul(3, NULL, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_Matmul: params is NULL");
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, NULL, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_Matmul: shapes is NULL");
    void *keep = a.p[1];
    a.p[1] = NULL;
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_Matmul: params[1] (b) is NULL");
    a.p[1] = keep;
    a.dt[4] = NULL;
    CHECK_EQ(call(opgrad_MatmulBackward, &a), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_MatmulBackward: dtypes[4] (da) is NULL");
    a.dt[4] = "float32";
    // dtypes, ranks, dims
    a.dt[0] = "complex64";
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: a (params[0]) has dtype \"complex64\"");
    a.dt[0] = "int32";
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    a.dt[0] = "float";
    a.nd[1] = 9, a.sh[1] = (int64_t *)s9;
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: b (params[1]) has rank 9; 0 to 8 dims are supported");
    a.nd[1] = 0;
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: b (params[1]) is 0-d; torch.matmul takes tensors of 1 to 8 dims");
    a.nd[1] = 2, a.sh[1] = a.dims[1];
    a.dims[2][1] = -2;
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: y (params[2]) has dim 1 = -2");
    a.dims[2][1] = 2;
    // shapes that do not multiply or broadcast; y, dy and gradients of the wrong shape / dtype
    a.sh[1] = (int64_t *)b52;
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: a [4,3] and b [5,2] do not multiply: a's last dim (3) must equal "
              "b's second-to-last dim (5)");
    a.sh[1] = a.dims[1];
    a.sh[2] = (int64_t *)y43;
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: y (params[2]) has shape [4,3] but the forward output has shape "
              "[4,2] (a [4,3] @ b [3,2] (torch.matmul))");
    a.sh[2] = a.dims[2];
    a.sh[3] = (int64_t *)y43;
    CHECK_EQ(call(opgrad_MatmulBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_MatmulBackward: dy (params[3]) has shape [4,3] but y has [4,2]");
    a.sh[3] = a.dims[3];
    a.sh[5] = (int64_t *)y42;
    CHECK_EQ(call(opgrad_MatmulBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_MatmulBackward: db (params[5]) has shape [4,2] but b has [3,2]: a "
              "gradient has its input's shape");
    a.sh[5] = a.dims[5];
    a.dt[4] = "bfloat16";
    CHECK_EQ(call(opgrad_MatmulBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_MatmulBackward: da (params[4]) has dtype bfloat16 but a is float32");
    a.dt[4] = "float32";
    CHECK_EQ(call(opgrad_MatmulBackward, &a), 0); // all fixed again
    // an aclnn refusal keeps its message: y is a's memory
    keep = a.p[2];
    a.p[2] = a.p[0];
    CHECK_EQ(opgrad_Matmul(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: aclnnMatmulGetWorkspaceSize:");
    a.p[2] = keep;
    args_free(&a);

    // batch dims that do not broadcast
    static const int64_t a243[] = {2, 4, 3}, b332[] = {3, 3, 2}, y242[] = {2, 4, 2};
    memset(&a, 0, sizeof a);
    arg(&a, 0, a243, 3, ACL_FLOAT16, 2, -1, 1);
    arg(&a, 1, b332, 3, ACL_FLOAT16, 4, -1, 1);
    arg(&a, 2, y242, 3, ACL_FLOAT16, 6, 0, 0);
    CHECK_EQ(call(opgrad_Matmul, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Matmul: the batch dims (all but the last two) of a [2,4,3] and b [3,3,2] do "
              "not broadcast (batch dim 0 differs and neither is 1)");
    args_free(&a);

    // Linear: x, w, b, y, dy, dx, dw, db
    static const int64_t x63[] = {6, 3}, w53[] = {5, 3}, b5[] = {5}, y65[] = {6, 5}, w3[] = {3},
                         w54[] = {5, 4}, b4[] = {4}, b25[] = {2, 5}, y64[] = {6, 4};
    memset(&a, 0, sizeof a);
    arg(&a, 0, x63, 2, ACL_BF16, 2, -1, 1);
    arg(&a, 1, w53, 2, ACL_BF16, 4, -1, 1);
    arg(&a, 2, b5, 1, ACL_BF16, 6, -1, 1);
    arg(&a, 3, y65, 2, ACL_BF16, 8, 0, 0);
    arg(&a, 4, y65, 2, ACL_BF16, 10, -1, 1);
    arg(&a, 5, x63, 2, ACL_BF16, 12, 0, 0);
    arg(&a, 6, w53, 2, ACL_BF16, 14, 0, 0);
    arg(&a, 7, b5, 1, ACL_BF16, 16, 0, 0);
    for (int act = 0; act < 4; act++) CHECK_EQ(call(LIN_BWD[act], &a), 0);
    a.nd[0] = 0;
    CHECK_EQ(call(opgrad_LinearBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LinearBackward: x (params[0]) is 0-d; x is [..., in] with 1 to 8 dims");
    a.nd[0] = 2;
    a.nd[1] = 1, a.sh[1] = (int64_t *)w3;
    CHECK_EQ(opgrad_Linear(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Linear: w (params[1]) has shape [3]; it must be [out, in]");
    a.nd[1] = 2, a.sh[1] = (int64_t *)w54;
    CHECK_EQ(opgrad_LinearRelu(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LinearRelu: x [6,3] and w [5,4] do not multiply: x's last dim (3) must "
              "equal w's dim 1 (in, 4)");
    a.sh[1] = a.dims[1];
    a.sh[2] = (int64_t *)b4;
    CHECK_EQ(opgrad_LinearGelu(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LinearGelu: b (params[2]) has shape [4]; it must be [5] or [1,5]");
    a.nd[2] = 2, a.sh[2] = (int64_t *)b25;
    CHECK_EQ(opgrad_LinearGelu(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("b (params[2]) has shape [2,5]");
    a.nd[2] = 1, a.sh[2] = a.dims[2];
    a.sh[3] = (int64_t *)y64;
    CHECK_EQ(opgrad_Linear(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Linear: y (params[3]) has shape [6,4] but the forward output has shape "
              "[6,5] (x [6,3] @ w^T + b, w [5,3])");
    a.sh[3] = a.dims[3];
    a.dt[6] = "float16";
    CHECK_EQ(call(opgrad_LinearGeluErfBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LinearGeluErfBackward: dw (params[6]) has dtype float16 but w is bfloat16: "
              "a gradient has its input's dtype");
    a.dt[6] = "bfloat16";
    a.sh[7] = (int64_t *)b4;
    CHECK_EQ(call(opgrad_LinearReluBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LinearReluBackward: db (params[7]) has shape [4] but b has [5]");
    a.sh[7] = a.dims[7];
    keep = a.p[7];
    a.p[7] = NULL;
    CHECK_EQ(call(opgrad_LinearReluBackward, &a), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_LinearReluBackward: params[7] (db) is NULL");
    // an aclnn refusal keeps its message: db is b's memory
    a.p[7] = a.p[2];
    CHECK_EQ(call(opgrad_LinearBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_LinearBackward: aclnnFusedMatmulBackwardGetWorkspaceSize:");
    a.p[7] = keep;
    keep = a.p[0];
    a.p[0] = a.p[3]; // x inside y's memory
    CHECK_EQ(opgrad_Linear(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Linear: aclnnFusedMatmulGetWorkspaceSize:");
    a.p[0] = keep;
    CHECK_EQ(call(opgrad_LinearBackward, &a), 0); // all fixed again
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
    CHECK(dlsym(h, "og_aot_wrap_params") == NULL); // internals stay hidden
    CHECK(dlsym(h, "og_aot_reduce_to") == NULL);
    static const int64_t x[] = {2, 3, 17}, w[] = {6, 17}, b[] = {6}, y[] = {2, 3, 6};
    aot_check_shared_backward(h, "opgrad_LinearGeluBackward", opgrad_LinearGeluBackward, x, w, 2, b,
                              1, y, "opgrad_LinearGeluBackward: w (params[1]) has dtype \"int8\"");
    // No dlclose: see test_aot_builtins.c (the second runtime's process-lifetime state).
}

int main(void) {
    RUN(test_matmul);
    RUN(test_linear);
    RUN(test_errors);
    RUN(test_exported_from_shared_library);
    return test_summary();
}
