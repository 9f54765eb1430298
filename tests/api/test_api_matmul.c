/* The matmul family through the public API: aclnnMatmul, aclnnMm, aclnnBatchMatMul, aclnnAddmm,
 * aclnnInplaceAddmm, aclnnBaddbmm, aclnnInplaceBaddbmm, aclnnFusedMatmul and
 * aclnnFusedMatmulBackward.
 *  - every status path: NULLs (161001, also bias with a gelu and x3 missing for add / mul),
 *    dtypes, ranks, shapes (the message names both shapes), cubeMathType out of range, unknown
 *    fusedOpType, ops-nn's FusedMatmul dtype rules, outputs overlapping inputs (161002);
 *  - values against float64 loops: fp32 with transposed views, 1-D / 2-D / N-D broadcast
 *    operands, BatchMatMul with a broadcast batch, Addmm / Baddbmm with broadcast self, alpha,
 *    beta and beta = 0 ignoring a NaN self, the in-place forms, FusedMatmul in every fusedOpType,
 *    FusedMatmulBackward against the composition, bf16 / fp16 inputs and outputs, K = 0, empty
 *    results, 67x131x259 (multiples of nothing), USE_FP16 rounding the inputs through fp16;
 *  - 1 and 2 threads give the same bits.
 * Error bound for an fp32 product element: |got - ref| <= 2^-22 * K * sum_k |a_ik||b_kj| (the
 * fixed-order fp32 FMA chain of K terms, with a factor 4 to spare), plus half an ulp of a 16-bit
 * output (one rounding). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_baddbmm.h"
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclnnop/aclnn_fused_matmul.h"
#include "aclnnop/aclnn_fused_matmul_backward.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_mm.h"
#include "opgrad/opgrad.h"
#include "tensor/tensor.h"
#include "test.h"
#include "testutil.h"

/* ---- tensors over their own storage ------------------------------------------------------ */

typedef struct tv {
    aclTensor *t;
    void *buf;
} tv;

// A view of dims over its own block; `trans`: the last two dims are stored transposed (the view
// of a .t() / .mT), `pad`: rows of the storage longer by pad elements, `offset` elements first.
static tv mk_view(int nd, const int64_t *dims, aclDataType dt, bool trans, int64_t pad,
                  int64_t offset) {
    tv v = {0};
    int64_t sdims[OG_MAX_DIMS], sst[OG_MAX_DIMS], st[OG_MAX_DIMS];
    for (int d = 0; d < nd; d++) sdims[d] = dims[d];
    if (trans && nd >= 2) sdims[nd - 2] = dims[nd - 1], sdims[nd - 1] = dims[nd - 2];
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        sst[d] = s;
        s *= (sdims[d] > 0 ? sdims[d] : 1) + (d == nd - 1 ? pad : 0);
    }
    for (int d = 0; d < nd; d++) st[d] = sst[d];
    if (trans && nd >= 2) st[nd - 2] = sst[nd - 1], st[nd - 1] = sst[nd - 2];
    int64_t storage = offset + s;
    size_t bytes = (size_t)storage * aclDataTypeSize(dt);
    v.buf = test_dev_alloc(bytes);
    int64_t sd[1] = {storage};
    v.t = aclCreateTensor(dims, (uint64_t)nd, dt, st, offset, ACL_FORMAT_ND, sd, 1, v.buf);
    return v;
}

static tv mk(int nd, const int64_t *dims, aclDataType dt) {
    return mk_view(nd, dims, dt, false, 0, 0);
}

static void tv_free(tv *v) {
    if (v->t) aclDestroyTensor(v->t);
    if (v->buf) aclrtFree(v->buf);
    v->t = NULL, v->buf = NULL;
}

static int64_t numel(const tv *v) { return v->t->numel; }

static int64_t pos_of(const aclTensor *t, int64_t i) {
    int64_t pos = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        pos += i % t->dims[d] * t->strides[d];
        i /= t->dims[d];
    }
    return pos;
}
static void set(tv *v, int64_t i, double x) { test_store(v->buf, pos_of(v->t, i), v->t->dtype, x); }
static double get(const tv *v, int64_t i) {
    return test_load(v->buf, pos_of(v->t, i), v->t->dtype);
}

// Uniform values in [lo, hi) as stored (rounded to the dtype).
static void fill(tv *v, test_rng *r, double lo, double hi) {
    for (int64_t i = 0; i < numel(v); i++) set(v, i, test_rng_uniform(r, lo, hi));
}
// Multiples of 1/4 in [-2, 2]: products and sums of a few hundred of them are exact in fp32.
static void fill_q(tv *v, test_rng *r) {
    for (int64_t i = 0; i < numel(v); i++) set(v, i, floor(test_rng_uniform(r, -8, 9)) / 4);
}
static double *dense(const tv *v) {
    double *d = malloc(sizeof(double) * (size_t)(numel(v) ? numel(v) : 1));
    for (int64_t i = 0; i < numel(v); i++) d[i] = get(v, i);
    return d;
}

static aclScalar *fscalar(float v) { return aclCreateScalar(&v, ACL_FLOAT); }

// Phase 1 then phase 2; the status of the first that fails.
#define RUN_OP(st, phase1, phase2) OP_RUN(st, phase1, phase2)

/* ---- float64 references ------------------------------------------------------------------- */

// Flat batch index bi over batch[nb] -> the operand's flat batch index (its na batch dims adims,
// right-aligned; dims of 1 broadcast).
static int64_t bmap(int64_t bi, int nb, const int64_t *batch, int na, const int64_t *adims) {
    int64_t off = 0, mul = 1;
    for (int d = nb - 1; d >= 0; d--) {
        int64_t i = bi % batch[d];
        bi /= batch[d];
        int j = d - (nb - na);
        if (j >= 0) {
            if (adims[j] != 1) off += i * mul;
            mul *= adims[j];
        }
    }
    return off;
}

typedef struct mmref {
    int nb;
    int64_t batch[OG_MAX_DIMS];
    int64_t M, N, K;
    double *c, *s; // [batch..., M, N]: the product and sum_k |a||b|
} mmref;

// C = A @ B over the broadcast batch: A [abatch..., M, K] (na batch dims), B [bbatch..., K, N];
// ta / tb: the operand is given as its transpose ([.., K, M] / [.., N, K]).
static mmref ref_mm(const double *A, int na, const int64_t *ab, const double *B, int nbb,
                    const int64_t *bb, int64_t M, int64_t N, int64_t K) {
    mmref r = {.M = M, .N = N, .K = K};
    int bad;
    og_broadcast_shapes(ab, na, bb, nbb, r.batch, &r.nb, &bad);
    int64_t nbat = 1;
    for (int d = 0; d < r.nb; d++) nbat *= r.batch[d];
    size_t n = (size_t)(nbat * M * N) + 1;
    r.c = calloc(n, sizeof(double)), r.s = calloc(n, sizeof(double));
    for (int64_t bi = 0; bi < nbat; bi++) {
        const double *a = A + bmap(bi, r.nb, r.batch, na, ab) * M * K;
        const double *b = B + bmap(bi, r.nb, r.batch, nbb, bb) * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0, s = 0;
                for (int64_t k = 0; k < K; k++) {
                    acc += a[i * K + k] * b[k * N + j];
                    s += fabs(a[i * K + k] * b[k * N + j]);
                }
                r.c[(bi * M + i) * N + j] = acc;
                r.s[(bi * M + i) * N + j] = s;
            }
    }
    return r;
}
static void ref_free(mmref *r) { free(r->c), free(r->s); }

// The fp32 product's bound: 2^-22 K sum |a||b| (into r->s).
static const double *prod_bound(mmref *r) {
    int64_t n = r->M * r->N;
    for (int d = 0; d < r->nb; d++) n *= r->batch[d];
    for (int64_t i = 0; i < n; i++) r->s[i] *= 0x1p-22 * (double)r->K;
    return r->s;
}

static double half_ulp_rel(aclDataType dt) {
    return dt == ACL_BF16 ? 0x1p-8 : dt == ACL_FLOAT16 ? 0x1p-11 : 0x1p-24;
}
static double tiny(aclDataType dt) {
    return dt == ACL_FLOAT16 ? 0x1p-25 : dt == ACL_BF16 ? 0x1p-133 : 0x1p-149;
}

// out against ref within bound (the fp32 error) + one rounding to out's dtype; false (and a
// message for the first few misses) when an element is outside.
static bool close_to(const char *what, const tv *out, const double *ref, const double *bound) {
    int bad = 0;
    aclDataType dt = out->t->dtype;
    for (int64_t i = 0; i < numel(out); i++) {
        double got = get(out, i), want = ref[i];
        double tol = bound[i];
        tol += half_ulp_rel(dt) * (fabs(want) + tol) + tiny(dt);
        bool ok = isnan(want) ? isnan(got) : fabs(got - want) <= tol;
        if (!ok && bad++ < 4)
            fprintf(stderr, "    %s: element %lld: got %.9g, want %.9g (tolerance %.3g)\n", what,
                    (long long)i, got, want, tol);
    }
    return bad == 0;
}

/* ---- status paths ------------------------------------------------------------------------ */

static const int64_t D23[2] = {2, 3}, D34[2] = {3, 4}, D24[2] = {2, 4}, D25[2] = {2, 5},
                     D35[2] = {3, 5};

static void test_null_and_dtype(void) {
    float a[64] = {0}, b[64] = {0}, c[64] = {0};
    aclTensor *x = test_tensor(D23, 2, ACL_FLOAT, a), *w = test_tensor(D34, 2, ACL_FLOAT, b),
              *o = test_tensor(D24, 2, ACL_FLOAT, c);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnMmGetWorkspaceSize(NULL, w, o, 0, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("aclnnMmGetWorkspaceSize: self is NULL");
    CHECK_EQ(aclnnMatmulGetWorkspaceSize(x, NULL, o, 0, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("mat2 is NULL");
    CHECK_EQ(aclnnBatchMatMulGetWorkspaceSize(x, w, NULL, 0, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out is NULL");
    CHECK_EQ(aclnnMmGetWorkspaceSize(x, w, o, 0, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspaceSize is NULL");
    aclScalar *one = fscalar(1);
    CHECK_EQ(aclnnAddmmGetWorkspaceSize(o, x, w, NULL, one, o, 0, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("beta is NULL");
    CHECK_EQ(aclnnInplaceBaddbmmGetWorkspaceSize(NULL, x, w, one, one, 0, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("selfRef is NULL");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, NULL, NULL, NULL, 0, o, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("fusedOpType is NULL");
    // dtypes: an int32 input, an int32 out
    aclTensor *xi = test_tensor(D23, 2, ACL_INT32, a), *oi = test_tensor(D24, 2, ACL_INT32, c);
    CHECK_EQ(aclnnMmGetWorkspaceSize(xi, w, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has dtype int32");
    CHECK_EQ(aclnnMatmulGetWorkspaceSize(x, w, oi, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has dtype int32");
    // cubeMathType out of range
    CHECK_EQ(aclnnMmGetWorkspaceSize(x, w, o, 5, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("cubeMathType = 5 is not one of");
    CHECK_EQ(aclnnAddmmGetWorkspaceSize(o, x, w, one, one, o, -1, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("cubeMathType = -1");
    for (int8_t m = 0; m <= 4; m++) {
        CHECK_EQ(aclnnMmGetWorkspaceSize(x, w, o, m, &ws, &e), ACLNN_SUCCESS);
        aclDestroyAclOpExecutor(e);
    }
    aclDestroyScalar(one);
    aclDestroyTensor(x), aclDestroyTensor(w), aclDestroyTensor(o), aclDestroyTensor(xi),
        aclDestroyTensor(oi);
}

static void test_shapes(void) {
    float a[256] = {0}, b[256] = {0}, c[256] = {0};
    uint64_t ws;
    aclOpExecutor *e;
    aclTensor *x = test_tensor(D23, 2, ACL_FLOAT, a), *w = test_tensor(D34, 2, ACL_FLOAT, b),
              *w5 = test_tensor(D35, 2, ACL_FLOAT, b), *o = test_tensor(D24, 2, ACL_FLOAT, c),
              *o25 = test_tensor(D25, 2, ACL_FLOAT, c);
    // the product's shape, with both operands' shapes in the message
    CHECK_EQ(aclnnMmGetWorkspaceSize(x, w5, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("aclnnMmGetWorkspaceSize: out has shape [2,4] but self [2,3] @ mat2 [3,5] has "
              "shape [2,5]");
    CHECK_EQ(aclnnMmGetWorkspaceSize(x, x, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self [2,3] and mat2 [2,3] do not multiply");
    CHECK_EQ(aclnnMmGetWorkspaceSize(x, w5, o25, 0, &ws, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    // ranks
    int64_t d234[3] = {2, 3, 4}, d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 3}, d0[1] = {1};
    aclTensor *x3 = test_tensor(d234, 3, ACL_FLOAT, a), *x9 = test_tensor(d9, 9, ACL_FLOAT, a),
              *s0 = test_tensor(d0, 0, ACL_FLOAT, a);
    CHECK_EQ(aclnnMmGetWorkspaceSize(x3, w, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has shape [2,3,4] (rank 3); it must have 2 dims");
    CHECK_EQ(aclnnBatchMatMulGetWorkspaceSize(x, w, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("it must have 3 dims");
    CHECK_EQ(aclnnMatmulGetWorkspaceSize(x9, w, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank 9");
    CHECK_EQ(aclnnMatmulGetWorkspaceSize(s0, w, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has rank 0");
    // Matmul: batch dims that do not broadcast; a 1-D operand's dim dropped from out
    int64_t d544[3] = {5, 4, 4}, d234o[3] = {2, 3, 4};
    aclTensor *w534 = test_tensor(d544, 3, ACL_FLOAT, b),
              *o244 = test_tensor(d234o, 3, ACL_FLOAT, c);
    CHECK_EQ(aclnnMatmulGetWorkspaceSize(x3, w534, o244, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("do not broadcast");
    int64_t d3[1] = {3}, d4[1] = {4};
    aclTensor *v3 = test_tensor(d3, 1, ACL_FLOAT, a), *o4 = test_tensor(d4, 1, ACL_FLOAT, c);
    CHECK_EQ(aclnnMatmulGetWorkspaceSize(v3, w, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has shape [2,4] but self [3] @ mat2 [3,4] has shape [4]");
    CHECK_EQ(aclnnMatmulGetWorkspaceSize(v3, w, o4, 0, &ws, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    // Addmm: self that does not broadcast to [M,N]; Baddbmm batches
    aclScalar *one = fscalar(1);
    int64_t d32[2] = {3, 2};
    aclTensor *self32 = test_tensor(d32, 2, ACL_FLOAT, a);
    CHECK_EQ(aclnnAddmmGetWorkspaceSize(self32, x, w, one, one, o, 0, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self [3,2] does not broadcast to the product's shape [2,4]");
    CHECK_EQ(aclnnInplaceAddmmGetWorkspaceSize(w, x, w, one, one, 0, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("selfRef has shape [3,4] but mat1 [2,3] @ mat2 [3,4] has shape [2,4]");
    int64_t b1[3] = {2, 2, 3}, b2[3] = {3, 3, 4}, b2one[3] = {1, 3, 4}, bo[3] = {2, 2, 4};
    aclTensor *t1 = test_tensor(b1, 3, ACL_FLOAT, a), *t2 = test_tensor(b2, 3, ACL_FLOAT, b),
              *t2one = test_tensor(b2one, 3, ACL_FLOAT, b), *to = test_tensor(bo, 3, ACL_FLOAT, c);
    CHECK_EQ(aclnnBaddbmmGetWorkspaceSize(to, t1, t2, one, one, to, 0, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("have batches 2 and 3");
    CHECK_EQ(aclnnBaddbmmGetWorkspaceSize(to, t1, t2one, one, one, to, 0, &ws, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(aclnnInplaceBaddbmmGetWorkspaceSize(to, t1, t2one, one, one, 0, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("the in-place form does not broadcast them");
    CHECK_EQ(aclnnBatchMatMulGetWorkspaceSize(t1, t2one, to, 0, &ws, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    aclDestroyScalar(one);
    aclTensor *all[] = {x,    w,  w5, o,      o25, x3, x9,    s0, w534,
                        o244, v3, o4, self32, t1,  t2, t2one, to};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
}

static void test_fused_rules(void) {
    uint16_t a[64] = {0}, b[64] = {0}, c[64] = {0}, bb[8] = {0};
    float af[64] = {0}, bf[64] = {0}, cf[64] = {0};
    uint64_t ws;
    aclOpExecutor *e;
    int64_t d4[1] = {4};
    aclTensor *x = test_tensor(D23, 2, ACL_FLOAT16, a), *w = test_tensor(D34, 2, ACL_FLOAT16, b),
              *y = test_tensor(D24, 2, ACL_FLOAT16, c), *bias = test_tensor(d4, 1, ACL_FLOAT16, bb),
              *xf = test_tensor(D23, 2, ACL_FLOAT, af), *wf = test_tensor(D34, 2, ACL_FLOAT, bf),
              *yf = test_tensor(D24, 2, ACL_FLOAT, cf);
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, NULL, NULL, "swish", 0, y, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("fusedOpType \"swish\" is not one of");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, bias, NULL, "gelu_erf", 0, y, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("bias must be NULL for fusedOpType \"gelu_erf\"");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, bias, NULL, "add", 0, y, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("x3 is NULL; fusedOpType \"add\" needs it");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(xf, wf, NULL, NULL, "gelu_tanh", 0, yf, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("takes float16 or bfloat16 x1 and x2");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(xf, wf, NULL, NULL, "relu", 1, yf, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("takes float32 inputs only with cubeMathType 3");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(xf, wf, NULL, NULL, "relu", 3, yf, &ws, &e),
             ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, bias, NULL, "16cast32", 0, y, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("fusedOpType \"16cast32\" writes float32");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, bias, NULL, "16cast32", 0, yf, &ws, &e),
             ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, y, NULL, "", 0, y, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("bias has shape [2,4]; it must be [4] or [1,4]");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, NULL, x, "mul", 0, y, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("x3 has shape [2,3] but y is [2,4]");
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(x, w, NULL, NULL, "", 4, y, &ws, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    // the backward: outputs of their inputs' shapes, NULL where there is nothing to differentiate
    uint16_t g1[64], g2[64], g3[64];
    aclTensor *gx1 = test_tensor(D23, 2, ACL_FLOAT16, g1), *gx2 = test_tensor(D34, 2, ACL_BF16, g2),
              *gb = test_tensor(d4, 1, ACL_FLOAT, g3), *gbad = test_tensor(D24, 2, ACL_FLOAT, g3);
    CHECK_EQ(aclnnFusedMatmulBackwardGetWorkspaceSize(y, x, w, bias, NULL, "relu", 0, gx1, gx2, gb,
                                                      NULL, &ws, &e),
             ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(aclnnFusedMatmulBackwardGetWorkspaceSize(y, x, w, NULL, NULL, "relu", 0, gx1, gx2, gb,
                                                      NULL, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradBias is given but bias is NULL: it must be NULL");
    CHECK_EQ(aclnnFusedMatmulBackwardGetWorkspaceSize(y, x, w, NULL, NULL, "relu", 0, gbad, NULL,
                                                      NULL, NULL, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradX1 has shape [2,4] but x1 has shape [2,3]");
    CHECK_EQ(aclnnFusedMatmulBackwardGetWorkspaceSize(y, x, w, NULL, NULL, "gelu_erf", 0, NULL,
                                                      NULL, NULL, NULL, &ws, &e),
             ACLNN_SUCCESS);
    CHECK_EQ(ws, 0);
    aclDestroyAclOpExecutor(e);
    CHECK_EQ(aclnnFusedMatmulBackwardGetWorkspaceSize(NULL, x, w, NULL, NULL, "relu", 0, gx1, NULL,
                                                      NULL, NULL, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("gradY is NULL");
    aclTensor *all[] = {x, w, y, bias, xf, wf, yf, gx1, gx2, gb, gbad};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
}

static void test_memory(void) {
    float *buf = test_dev_alloc(4096), *b2 = test_dev_alloc(4096);
    uint64_t ws;
    aclOpExecutor *e;
    int64_t d33[2] = {3, 3};
    aclTensor *x = test_tensor(d33, 2, ACL_FLOAT, buf), *w = test_tensor(d33, 2, ACL_FLOAT, b2),
              *o = test_tensor(d33, 2, ACL_FLOAT, buf + 4);
    CHECK_EQ(aclnnMmGetWorkspaceSize(x, w, o, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out overlaps self: the matrix product reads self while it writes out");
    CHECK_EQ(aclnnMmGetWorkspaceSize(x, w, x, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out overlaps self");
    // Addmm: out may be self element for element, not in another layout
    aclScalar *one = fscalar(1);
    aclTensor *s = test_tensor(d33, 2, ACL_FLOAT, buf + 64),
              *o2 = test_tensor(d33, 2, ACL_FLOAT, buf + 64);
    CHECK_EQ(aclnnAddmmGetWorkspaceSize(s, x, w, one, one, o2, 0, &ws, &e), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    aclTensor *o3 = test_tensor(d33, 2, ACL_FLOAT, buf + 65);
    CHECK_EQ(aclnnAddmmGetWorkspaceSize(s, x, w, one, one, o3, 0, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out overlaps self with a different layout");
    CHECK_EQ(aclnnInplaceAddmmGetWorkspaceSize(x, x, w, one, one, 0, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("selfRef overlaps mat1");
    // an output writing one address twice
    int64_t st0[2] = {0, 1}, sd[1] = {3};
    aclTensor *bcast = aclCreateTensor(d33, 2, ACL_FLOAT, st0, 0, ACL_FORMAT_ND, sd, 1, buf + 256);
    CHECK_EQ(aclnnMmGetWorkspaceSize(x, w, bcast, 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("makes several elements share one memory location");
    // the backward's outputs in one place
    int64_t d3[1] = {3};
    aclTensor *bias = test_tensor(d3, 1, ACL_FLOAT, b2 + 100),
              *g = test_tensor(d33, 2, ACL_FLOAT, b2 + 200);
    aclTensor *gx1 = test_tensor(d33, 2, ACL_FLOAT, buf + 512),
              *gx2 = test_tensor(d33, 2, ACL_FLOAT, buf + 514);
    CHECK_EQ(aclnnFusedMatmulBackwardGetWorkspaceSize(g, x, w, bias, NULL, "relu", 3, gx1, gx2,
                                                      NULL, NULL, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradX2 and gradX1 share memory");
    // data NULL
    aclTensor *nodata = aclCreateTensor(d33, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, d33, 2, NULL);
    CHECK_EQ(aclnnMmGetWorkspaceSize(nodata, w, gx1, 0, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self has no data");
    aclDestroyScalar(one);
    aclTensor *all[] = {x, w, o, s, o2, o3, bcast, bias, g, gx1, gx2, nodata};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
    aclrtFree(buf), aclrtFree(b2);
}

/* ---- values ------------------------------------------------------------------------------ */

// Mm fp32 67x131x259 with self and mat2 transposed views (and a padded, offset out), each
// cubeMathType; USE_FP16 against the inputs rounded through fp16.
static void test_mm_fp32_views(void) {
    const int64_t M = 67, N = 131, K = 259;
    test_rng r;
    test_rng_seed(&r, 1);
    int64_t da[2] = {M, K}, db[2] = {K, N}, dc[2] = {M, N};
    for (int layout = 0; layout < 4; layout++) {
        tv a = mk_view(2, da, ACL_FLOAT, layout & 1, 0, 0);
        tv b = mk_view(2, db, ACL_FLOAT, layout & 2, layout == 3 ? 5 : 0, 3);
        tv c = mk_view(2, dc, ACL_FLOAT, false, layout, layout);
        fill(&a, &r, -1, 1), fill(&b, &r, -1, 1);
        double *A = dense(&a), *B = dense(&b);
        mmref ref = ref_mm(A, 0, NULL, B, 0, NULL, M, N, K);
        prod_bound(&ref);
        for (int8_t cube = 0; cube <= 4; cube++) {
            aclnnStatus st;
            RUN_OP(st, aclnnMmGetWorkspaceSize(a.t, b.t, c.t, cube, &ws_, &ex_), aclnnMm);
            CHECK_EQ(st, ACLNN_SUCCESS);
            if (cube != 2) {
                CHECKF(close_to("mm", &c, ref.c, ref.s), "layout %d cube %d", layout, cube);
            } else {
                double *A16 = dense(&a), *B16 = dense(&b);
                for (int64_t i = 0; i < M * K; i++) A16[i] = test_round_to(ACL_FLOAT16, A16[i]);
                for (int64_t i = 0; i < K * N; i++) B16[i] = test_round_to(ACL_FLOAT16, B16[i]);
                mmref r16 = ref_mm(A16, 0, NULL, B16, 0, NULL, M, N, K);
                CHECKF(close_to("mm fp16", &c, r16.c, prod_bound(&r16)), "layout %d", layout);
                // and not the fp32 product: the rounding happened
                bool differs = false;
                for (int64_t i = 0; i < M * N && !differs; i++)
                    differs = fabs(get(&c, i) - ref.c[i]) > ref.s[i];
                CHECK(differs);
                ref_free(&r16), free(A16), free(B16);
            }
        }
        ref_free(&ref), free(A), free(B);
        tv_free(&a), tv_free(&b), tv_free(&c);
    }
}

// Runs Matmul on shapes sa @ sb (fp32, random values) and checks against the reference.
static void matmul_case(int na, const int64_t *sa, int nb, const int64_t *sb, aclDataType dt,
                        aclDataType odt) {
    test_rng r;
    test_rng_seed(&r, (uint64_t)(na * 31 + nb));
    tv a = mk(na, sa, dt), b = mk(nb, sb, dt);
    fill(&a, &r, -2, 2), fill(&b, &r, -2, 2);
    int64_t M = na >= 2 ? sa[na - 2] : 1, K = sa[na - 1], N = nb >= 2 ? sb[nb - 1] : 1;
    double *A = dense(&a), *B = dense(&b);
    mmref ref = ref_mm(A, na > 2 ? na - 2 : 0, sa, B, nb > 2 ? nb - 2 : 0, sb, M, N, K);
    int64_t od[OG_MAX_DIMS];
    int on = ref.nb;
    memcpy(od, ref.batch, sizeof(int64_t) * (size_t)on);
    if (na >= 2) od[on++] = M;
    if (nb >= 2) od[on++] = N;
    tv c = mk(on, od, odt);
    aclnnStatus st;
    RUN_OP(st, aclnnMatmulGetWorkspaceSize(a.t, b.t, c.t, 0, &ws_, &ex_), aclnnMatmul);
    CHECK_EQ(st, ACLNN_SUCCESS);
    char s1[64], s2[64];
    CHECKF(close_to("matmul", &c, ref.c, prod_bound(&ref)), "%s @ %s",
           og_shape_str(sa, na, s1, sizeof s1), og_shape_str(sb, nb, s2, sizeof s2));
    ref_free(&ref), free(A), free(B);
    tv_free(&a), tv_free(&b), tv_free(&c);
}

static void test_matmul_ranks(void) {
    int64_t v[1] = {37}, m[2] = {37, 9}, mt[2] = {5, 37}, b3[3] = {3, 5, 37}, b3k[3] = {3, 37, 4},
            b4[4] = {2, 1, 5, 37}, bb[3] = {3, 37, 6}, b2[2] = {37, 6};
    matmul_case(1, v, 1, v, ACL_FLOAT, ACL_FLOAT);   // dot: 0-d out
    matmul_case(1, v, 2, m, ACL_FLOAT, ACL_FLOAT);   // [37] @ [37,9] -> [9]
    matmul_case(2, mt, 1, v, ACL_FLOAT, ACL_FLOAT);  // [5,37] @ [37] -> [5]
    matmul_case(1, v, 3, b3k, ACL_FLOAT, ACL_FLOAT); // [37] @ [3,37,4] -> [3,4]
    matmul_case(3, b3, 1, v, ACL_FLOAT, ACL_FLOAT);  // [3,5,37] @ [37] -> [3,5]
    matmul_case(4, b4, 3, bb, ACL_FLOAT, ACL_FLOAT); // [2,1,5,37] @ [3,37,6] -> [2,3,5,6]
    matmul_case(3, b3, 2, b2, ACL_FLOAT, ACL_FLOAT); // [3,5,37] @ [37,6]: B shared
    matmul_case(2, mt, 3, bb, ACL_FLOAT, ACL_FLOAT); // [5,37] @ [3,37,6]: A shared
    // 16-bit inputs, 16-bit or fp32 outputs
    matmul_case(4, b4, 3, bb, ACL_BF16, ACL_BF16);
    matmul_case(3, b3, 2, b2, ACL_FLOAT16, ACL_FLOAT);
    matmul_case(2, mt, 1, v, ACL_BF16, ACL_FLOAT16);
}

static void test_batch_matmul(void) {
    test_rng r;
    test_rng_seed(&r, 5);
    for (int which = 0; which < 3; which++) {
        int64_t B = 4, M = 9, N = 7, K = 33;
        int64_t da[3] = {which == 1 ? 1 : B, M, K}, db[3] = {which == 2 ? 1 : B, K, N},
                dc[3] = {B, M, N};
        tv a = mk_view(3, da, ACL_BF16, which == 2, 0, 0), b = mk(3, db, ACL_FLOAT),
           c = mk(3, dc, ACL_FLOAT);
        fill(&a, &r, -1, 1), fill(&b, &r, -1, 1);
        double *A = dense(&a), *Bd = dense(&b);
        mmref ref = ref_mm(A, 1, da, Bd, 1, db, M, N, K);
        aclnnStatus st;
        RUN_OP(st, aclnnBatchMatMulGetWorkspaceSize(a.t, b.t, c.t, 1, &ws_, &ex_),
               aclnnBatchMatMul);
        CHECK_EQ(st, ACLNN_SUCCESS);
        CHECKF(close_to("bmm", &c, ref.c, prod_bound(&ref)), "case %d", which);
        ref_free(&ref), free(A), free(Bd);
        tv_free(&a), tv_free(&b), tv_free(&c);
    }
}

// Addmm / Baddbmm: out = beta self + alpha (m1 @ m2), self of shape sself (broadcast).
static void addmm_case(bool batched, bool inplace, int ns, const int64_t *sself, double beta,
                       double alpha, bool nan_self, aclDataType odt) {
    test_rng r;
    test_rng_seed(&r, 11 + (uint64_t)ns);
    int64_t B = 3, M = 13, N = 21, K = 40;
    int nd = batched ? 3 : 2;
    int64_t d1[3], d2[3], dc[3];
    if (batched) d1[0] = B, d2[0] = B, dc[0] = B;
    d1[nd - 2] = M, d1[nd - 1] = K, d2[nd - 2] = K, d2[nd - 1] = N, dc[nd - 2] = M, dc[nd - 1] = N;
    tv m1 = mk(nd, d1, ACL_FLOAT), m2 = mk_view(nd, d2, ACL_FLOAT, true, 0, 0);
    tv self = inplace ? mk(nd, dc, odt) : mk(ns, sself, ACL_FLOAT);
    tv out = inplace ? self : mk(nd, dc, odt);
    fill(&m1, &r, -1, 1), fill(&m2, &r, -1, 1), fill(&self, &r, -4, 4);
    if (nan_self) set(&self, 0, NAN);
    double *A = dense(&m1), *Bd = dense(&m2), *S = dense(&self);
    mmref ref = ref_mm(A, nd - 2, d1, Bd, nd - 2, d2, M, N, K);
    int64_t n = numel(&out);
    prod_bound(&ref);
    double *want = malloc(sizeof(double) * (size_t)n);
    const aclTensor *st_ = self.t;
    for (int64_t i = 0; i < n; i++) {
        // the element of self that broadcasts to out's element i
        int64_t rem = i, off = 0, mul = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t idx = rem % dc[d];
            rem /= dc[d];
            int j = d - (nd - st_->ndim);
            if (j >= 0) {
                if (st_->dims[j] != 1) off += idx * mul;
                mul *= st_->dims[j];
            }
        }
        double sv = beta == 0 ? 0 : beta * S[off];
        want[i] = sv + alpha * ref.c[i];
        // alpha * acc, beta * self and their sum: three fp32 roundings
        ref.s[i] = ref.s[i] * fabs(alpha) + 0x1p-22 * (fabs(sv) + fabs(alpha * ref.c[i]));
    }
    aclScalar *sb = fscalar((float)beta), *sa = fscalar((float)alpha);
    aclnnStatus st;
    if (!batched && !inplace)
        RUN_OP(st, aclnnAddmmGetWorkspaceSize(self.t, m1.t, m2.t, sb, sa, out.t, 0, &ws_, &ex_),
               aclnnAddmm);
    else if (!batched)
        RUN_OP(st, aclnnInplaceAddmmGetWorkspaceSize(self.t, m1.t, m2.t, sb, sa, 0, &ws_, &ex_),
               aclnnInplaceAddmm);
    else if (!inplace)
        RUN_OP(st, aclnnBaddbmmGetWorkspaceSize(self.t, m1.t, m2.t, sb, sa, out.t, 0, &ws_, &ex_),
               aclnnBaddbmm);
    else
        RUN_OP(st, aclnnInplaceBaddbmmGetWorkspaceSize(self.t, m1.t, m2.t, sb, sa, 0, &ws_, &ex_),
               aclnnInplaceBaddbmm);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECKF(close_to("addmm", &out, want, ref.s),
           "batched %d inplace %d self rank %d beta %g alpha %g nan %d", batched, inplace, ns, beta,
           alpha, nan_self);
    aclDestroyScalar(sb), aclDestroyScalar(sa);
    ref_free(&ref), free(A), free(Bd), free(S), free(want);
    tv_free(&m1), tv_free(&m2), tv_free(&self);
    if (!inplace) tv_free(&out);
}

static void test_addmm(void) {
    int64_t n1[1] = {21}, one[1] = {1}, m1[2] = {13, 1}, full[2] = {13, 21}, r1[2] = {1, 21},
            b1[3] = {1, 13, 21}, bfull[3] = {3, 13, 21}, bcol[3] = {3, 13, 1};
    addmm_case(false, false, 1, n1, 2.0, 0.5, false, ACL_FLOAT);
    addmm_case(false, false, 0, one, 1.5, -0.5, false, ACL_FLOAT); // a 0-d self (PyTorch)
    addmm_case(true, false, 0, one, -0.5, 2.0, false, ACL_BF16);
    addmm_case(false, false, 1, one, -1.5, 1.0, false, ACL_FLOAT);
    addmm_case(false, false, 2, m1, 1.0, -2.0, false, ACL_BF16);
    addmm_case(false, false, 2, full, 0.25, 3.0, false, ACL_FLOAT16);
    addmm_case(false, false, 2, r1, 0.0, 1.0, true, ACL_FLOAT); // beta 0: the NaN is ignored
    addmm_case(false, true, 2, full, 0.5, 2.0, false, ACL_FLOAT);
    addmm_case(false, true, 2, full, 0.0, 1.0, true, ACL_FLOAT);
    addmm_case(true, false, 3, b1, 2.0, 0.5, false, ACL_FLOAT);
    addmm_case(true, false, 3, bcol, 1.0, 1.0, false, ACL_FLOAT);
    addmm_case(true, false, 1, n1, 0.0, 1.0, true, ACL_BF16);
    addmm_case(true, false, 3, bfull, -1.0, 0.75, false, ACL_FLOAT);
    addmm_case(true, true, 3, bfull, 1.0, -1.0, false, ACL_FLOAT16);
}

// K = 0 (zeros, or beta * self), and empty results (workspace 0).
static void test_empty(void) {
    int64_t d30[2] = {3, 0}, d04[2] = {0, 4}, d34[2] = {3, 4}, d05[2] = {0, 5}, d54[2] = {5, 4},
            d04o[2] = {0, 4}, d4[1] = {4};
    tv a = mk(2, d30, ACL_FLOAT), b = mk(2, d04, ACL_FLOAT), c = mk(2, d34, ACL_BF16);
    for (int64_t i = 0; i < 12; i++) set(&c, i, 7);
    aclnnStatus st;
    RUN_OP(st, aclnnMmGetWorkspaceSize(a.t, b.t, c.t, 0, &ws_, &ex_), aclnnMm);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int64_t i = 0; i < 12; i++) CHECK(get(&c, i) == 0);
    // Addmm K = 0: beta * self
    tv s = mk(1, d4, ACL_FLOAT);
    for (int64_t j = 0; j < 4; j++) set(&s, j, j + 1);
    aclScalar *beta = fscalar(2), *alpha = fscalar(3);
    RUN_OP(st, aclnnAddmmGetWorkspaceSize(s.t, a.t, b.t, beta, alpha, c.t, 0, &ws_, &ex_),
           aclnnAddmm);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int64_t i = 0; i < 12; i++) CHECK(get(&c, i) == 2.0 * (i % 4 + 1));
    // FusedMatmul relu with K = 0: relu(bias)
    tv a16 = mk(2, d30, ACL_FLOAT16), b16 = mk(2, d04, ACL_FLOAT16), y = mk(2, d34, ACL_FLOAT16),
       bias = mk(1, d4, ACL_FLOAT16);
    for (int64_t j = 0; j < 4; j++) set(&bias, j, j - 1.5);
    RUN_OP(st,
           aclnnFusedMatmulGetWorkspaceSize(a16.t, b16.t, bias.t, NULL, "relu", 0, y.t, &ws_, &ex_),
           aclnnFusedMatmul);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int64_t i = 0; i < 12; i++) CHECK(get(&y, i) == fmax(0, i % 4 - 1.5));
    // M = 0: nothing to do, no workspace
    tv e0 = mk(2, d05, ACL_FLOAT), w = mk(2, d54, ACL_FLOAT), o0 = mk(2, d04o, ACL_FLOAT);
    uint64_t ws = 1;
    aclOpExecutor *ex = NULL;
    CHECK_EQ(aclnnMmGetWorkspaceSize(e0.t, w.t, o0.t, 0, &ws, &ex), ACLNN_SUCCESS);
    CHECK_EQ(ws, 0);
    CHECK_EQ(aclnnMm(NULL, 0, ex, NULL), ACLNN_SUCCESS);
    // a zero batch
    int64_t z1[3] = {0, 3, 5}, z2[3] = {1, 5, 4}, zo[3] = {0, 3, 4};
    tv za = mk(3, z1, ACL_FLOAT), zb = mk(3, z2, ACL_FLOAT), zc = mk(3, zo, ACL_FLOAT);
    CHECK_EQ(aclnnBatchMatMulGetWorkspaceSize(za.t, zb.t, zc.t, 0, &ws, &ex), ACLNN_SUCCESS);
    CHECK_EQ(ws, 0);
    CHECK_EQ(aclnnBatchMatMul(NULL, 0, ex, NULL), ACLNN_SUCCESS);
    aclDestroyScalar(beta), aclDestroyScalar(alpha);
    tv *all[] = {&a, &b, &c, &s, &a16, &b16, &y, &bias, &e0, &w, &o0, &za, &zb, &zc};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tv_free(all[i]);
}

/* ---- FusedMatmul and its backward ------------------------------------------------------- */

static double gelu_erf(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double gelu_erf_d(double x) {
    return 0.5 * (1 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / 2.5066282746310002;
}
static const double C_TANH = 0.7978845608028654; // sqrt(2 / pi)
static double gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(C_TANH * (x + 0.044715 * x * x * x)));
}
static double gelu_tanh_d(double x) {
    double u = C_TANH * (x + 0.044715 * x * x * x), t = tanh(u);
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * C_TANH * (1 + 3 * 0.044715 * x * x);
}

typedef struct fcase {
    const char *type;
    aclDataType dt;    // x1, x2
    aclDataType ydt;   // y (and the gradients)
    int n1, n2;        // ranks of x1 and x2 (2 or 3)
    bool bias, bias2d; // a bias, as [1,N]
    int n3;            // x3's rank (add / mul); x3 of batch 1 when 3 and n3b1
    bool n3b1;
    int8_t cube;
    bool x1t; // x1 a transposed view (its batch does not fold into its rows)
} fcase;

static double act(const char *type, double z) {
    if (!strcmp(type, "relu")) return z > 0 ? z : 0;
    if (!strcmp(type, "gelu_erf")) return gelu_erf(z);
    if (!strcmp(type, "gelu_tanh")) return gelu_tanh(z);
    return z;
}
static double act_d(const char *type, double z) {
    if (!strcmp(type, "relu")) return z > 0 ? 1 : 0;
    if (!strcmp(type, "gelu_erf")) return gelu_erf_d(z);
    if (!strcmp(type, "gelu_tanh")) return gelu_tanh_d(z);
    return 1;
}

// The tensors of a FusedMatmul case: x1 [B?,M,K], x2 [B?,K,N], bias, x3, y / gradY [B,M,N]
// (quarter-integer x1, x2, bias: z is exact in fp32).
typedef struct fdata {
    int64_t B, M, N, K;
    tv x1, x2, bias, x3, y, g;
    bool has_bias, has_x3;
    int yn;
    int64_t yd[3];
    double *X1, *X2, *BI, *X3, *G, *Z; // dense; Z = x1 @ x2 + bias [B,M,N]
} fdata;

static int64_t d3_of(int n, int64_t b, int64_t r, int64_t c, int64_t *d) {
    if (n == 3) d[0] = b;
    d[n - 2] = r, d[n - 1] = c;
    return n;
}

static fdata fdata_make(const fcase *fc, test_rng *r) {
    fdata f = {.B = 3, .M = 19, .N = 45, .K = 70};
    bool batched = fc->n1 == 3 || fc->n2 == 3;
    f.yn = batched ? 3 : 2;
    int64_t d1[3], d2[3], d3[3], db[2];
    d3_of(fc->n1, f.B, f.M, f.K, d1);
    d3_of(fc->n2, f.B, f.K, f.N, d2);
    d3_of(f.yn, f.B, f.M, f.N, f.yd);
    f.x1 = mk_view(fc->n1, d1, fc->dt, fc->x1t, 0, 0);
    f.x2 = mk_view(fc->n2, d2, fc->dt, true, 0, 0); // a transposed weight, as a Linear stores it
    f.y = mk(f.yn, f.yd, fc->ydt);
    f.g = mk(f.yn, f.yd, fc->ydt);
    fill_q(&f.x1, r), fill_q(&f.x2, r), fill(&f.g, r, -1, 1);
    f.X1 = dense(&f.x1), f.X2 = dense(&f.x2), f.G = dense(&f.g);
    f.has_bias = fc->bias;
    if (fc->bias) {
        db[0] = 1, db[1] = f.N;
        f.bias = fc->bias2d ? mk(2, db, fc->dt) : mk(1, db + 1, fc->dt);
        fill_q(&f.bias, r);
        f.BI = dense(&f.bias);
    }
    f.has_x3 = fc->n3 > 0;
    if (f.has_x3) {
        d3_of(fc->n3, fc->n3b1 ? 1 : f.B, f.M, f.N, d3);
        f.x3 = mk(fc->n3, d3, fc->dt);
        fill(&f.x3, r, -2, 2);
        f.X3 = dense(&f.x3);
    }
    int64_t nb = batched ? f.B : 1;
    mmref z = ref_mm(f.X1, fc->n1 - 2, d1, f.X2, fc->n2 - 2, d2, f.M, f.N, f.K);
    f.Z = z.c;
    free(z.s);
    for (int64_t i = 0; i < nb * f.M * f.N; i++)
        if (f.has_bias) f.Z[i] += f.BI[i % f.N];
    return f;
}

static double x3_at(const fdata *f, int64_t i) { // x3's element broadcast to y's element i
    int64_t mn = f->M * f->N;
    return f->X3[numel(&f->x3) == mn ? i % mn : i];
}

static void fdata_free(fdata *f) {
    tv_free(&f->x1), tv_free(&f->x2), tv_free(&f->y), tv_free(&f->g);
    if (f->has_bias) tv_free(&f->bias);
    if (f->has_x3) tv_free(&f->x3);
    free(f->X1), free(f->X2), free(f->G), free(f->Z), free(f->BI), free(f->X3);
}

static void fused_forward_case(const fcase *fc) {
    test_rng r;
    test_rng_seed(&r, 100 + (uint64_t)fc->n1 * 7 + (uint64_t)strlen(fc->type));
    fdata f = fdata_make(fc, &r);
    aclnnStatus st;
    RUN_OP(st,
           aclnnFusedMatmulGetWorkspaceSize(f.x1.t, f.x2.t, f.has_bias ? f.bias.t : NULL,
                                            f.has_x3 ? f.x3.t : NULL, fc->type, fc->cube, f.y.t,
                                            &ws_, &ex_),
           aclnnFusedMatmul);
    CHECKF(st == ACLNN_SUCCESS, "%s", fc->type);
    int64_t n = numel(&f.y);
    double *want = malloc(sizeof(double) * (size_t)n), *s = calloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        double z = f.Z[i];
        if (!strcmp(fc->type, "add")) z += x3_at(&f, i);
        if (!strcmp(fc->type, "mul")) z *= x3_at(&f, i);
        want[i] = act(fc->type, z);
        s[i] = 0x1p-20 * (fabs(want[i]) + fabs(z)) + 0x1p-40; // the activation's few ulps
    }
    CHECKF(close_to(fc->type, &f.y, want, s), "FusedMatmul %s", fc->type);
    free(want), free(s);
    fdata_free(&f);
}

static void test_fused_matmul(void) {
    const fcase cases[] = {
        {"", ACL_FLOAT, ACL_FLOAT, 3, 2, true, false, 0, false, 3, false},
        {"", ACL_BF16, ACL_BF16, 3, 3, true, true, 0, false, 0, false},
        {"relu", ACL_BF16, ACL_BF16, 2, 2, true, true, 0, false, 0, false},
        {"relu", ACL_FLOAT, ACL_FLOAT, 2, 3, true, false, 0, false, 3, false},
        {"gelu_erf", ACL_FLOAT16, ACL_FLOAT16, 2, 2, false, false, 0, false, 0, false},
        {"gelu_tanh", ACL_BF16, ACL_FLOAT, 2, 2, false, false, 0, false, 1, false},
        {"add", ACL_FLOAT16, ACL_FLOAT16, 3, 3, true, false, 2, false, 0, false},
        {"add", ACL_FLOAT, ACL_FLOAT, 3, 2, false, false, 3, true, 3, false},
        {"mul", ACL_BF16, ACL_BF16, 3, 3, true, false, 3, false, 0, false},
        {"mul", ACL_FLOAT, ACL_FLOAT, 2, 2, true, true, 2, false, 3, false},
        {"16cast32", ACL_BF16, ACL_FLOAT, 2, 2, true, false, 0, false, 0, false},
        {"16cast32", ACL_FLOAT16, ACL_FLOAT, 3, 3, false, false, 0, false, 2, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) fused_forward_case(&cases[i]);
}

// gradX1 / gradX2 / gradBias / gradX3 against the composition in float64.
static void fused_backward_case(const fcase *fc) {
    test_rng r;
    test_rng_seed(&r, 200 + (uint64_t)fc->n1 * 7 + (uint64_t)fc->n2 + strlen(fc->type));
    fdata f = fdata_make(fc, &r);
    int64_t nb = f.yn == 3 ? f.B : 1, M = f.M, N = f.N, K = f.K, ny = numel(&f.y);
    bool is_mul = !strcmp(fc->type, "mul"), is_add = !strcmp(fc->type, "add");
    // dZ and its error bound: dZ = g act'(z) (or g x3), formed in fp32
    double *dz = malloc(sizeof(double) * (size_t)ny), *dze = malloc(sizeof(double) * (size_t)ny);
    for (int64_t i = 0; i < ny; i++) {
        double w = is_mul ? x3_at(&f, i) : act_d(fc->type, f.Z[i]);
        dz[i] = f.G[i] * w;
        dze[i] = 0x1p-19 * fabs(f.G[i]) * (1 + fabs(w));
    }
    tv gx1 = mk(f.x1.t->ndim, f.x1.t->dims, fc->ydt), gx2 = mk(f.x2.t->ndim, f.x2.t->dims, fc->ydt);
    tv gb = {0}, gx3 = {0};
    if (f.has_bias) gb = mk(f.bias.t->ndim, f.bias.t->dims, fc->ydt);
    if (f.has_x3) gx3 = mk(f.x3.t->ndim, f.x3.t->dims, fc->ydt);
    aclnnStatus st;
    RUN_OP(st,
           aclnnFusedMatmulBackwardGetWorkspaceSize(
               f.g.t, f.x1.t, f.x2.t, f.has_bias ? f.bias.t : NULL, f.has_x3 ? f.x3.t : NULL,
               fc->type, fc->cube, gx1.t, gx2.t, f.has_bias ? gb.t : NULL, f.has_x3 ? gx3.t : NULL,
               &ws_, &ex_),
           aclnnFusedMatmulBackward);
    CHECKF(st == ACLNN_SUCCESS, "%s", fc->type);
    // gradX1 [b1?, M, K] = sum over the batch dims x1 lacks of dZ @ x2^T
    int64_t n1 = numel(&gx1), n2 = numel(&gx2);
    double *w1 = calloc((size_t)n1, sizeof(double)), *s1 = calloc((size_t)n1, sizeof(double));
    double *w2 = calloc((size_t)n2, sizeof(double)), *s2 = calloc((size_t)n2, sizeof(double));
    bool x1b = fc->n1 == 3, x2b = fc->n2 == 3;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                int64_t yi = (b * M + m) * N + n;
                for (int64_t k = 0; k < K; k++) {
                    double xv2 = f.X2[(x2b ? b * K * N : 0) + k * N + n];
                    double xv1 = f.X1[(x1b ? b * M * K : 0) + m * K + k];
                    int64_t i1 = (x1b ? b * M * K : 0) + m * K + k;
                    int64_t i2 = (x2b ? b * K * N : 0) + k * N + n;
                    w1[i1] += dz[yi] * xv2;
                    s1[i1] += (fabs(dz[yi]) * 0x1p-22 * (double)N + dze[yi]) * fabs(xv2);
                    w2[i2] += xv1 * dz[yi];
                    s2[i2] += (fabs(dz[yi]) * 0x1p-22 * (double)(M * nb) + dze[yi]) * fabs(xv1);
                }
            }
    CHECKF(close_to("gradX1", &gx1, w1, s1), "%s", fc->type);
    CHECKF(close_to("gradX2", &gx2, w2, s2), "%s", fc->type);
    if (f.has_bias) {
        double *wb = calloc((size_t)N, sizeof(double)), *sb = calloc((size_t)N, sizeof(double));
        for (int64_t i = 0; i < ny; i++) {
            wb[i % N] += dz[i];
            sb[i % N] += 0x1p-18 * fabs(dz[i]) + dze[i];
        }
        CHECKF(close_to("gradBias", &gb, wb, sb), "%s", fc->type);
        free(wb), free(sb);
    }
    if (f.has_x3) {
        int64_t n3 = numel(&gx3);
        double *w3 = calloc((size_t)n3, sizeof(double)), *s3 = calloc((size_t)n3, sizeof(double));
        for (int64_t i = 0; i < ny; i++) {
            int64_t j = n3 == M * N ? i % (M * N) : i;
            double v = is_add ? f.G[i] : f.G[i] * f.Z[i];
            w3[j] += v;
            s3[j] += 0x1p-18 * fabs(v);
        }
        CHECKF(close_to("gradX3", &gx3, w3, s3), "%s", fc->type);
        free(w3), free(s3);
    }
    free(w1), free(s1), free(w2), free(s2), free(dz), free(dze);
    tv_free(&gx1), tv_free(&gx2);
    if (f.has_bias) tv_free(&gb);
    if (f.has_x3) tv_free(&gx3);
    fdata_free(&f);
}

static void test_fused_matmul_backward(void) {
    const fcase cases[] = {
        // a Linear layer: x1 [B,M,K] @ x2 [K,N] (gradX2 folds the batch into its sum)
        {"relu", ACL_FLOAT, ACL_FLOAT, 3, 2, true, false, 0, false, 3, false},
        {"relu", ACL_FLOAT, ACL_FLOAT, 3, 2, true, false, 0, false, 3, true}, // summed after
        {"gelu_erf", ACL_FLOAT16, ACL_FLOAT, 3, 2, false, false, 0, false, 0, false},
        {"gelu_tanh", ACL_BF16, ACL_BF16, 2, 2, false, false, 0, false, 0, false},
        {"", ACL_FLOAT, ACL_FLOAT, 2, 3, true, true, 0, false, 3, false}, // x1 broadcast: summed
        {"16cast32", ACL_BF16, ACL_FLOAT, 3, 3, true, false, 0, false, 0, false},
        {"add", ACL_FLOAT, ACL_FLOAT, 3, 3, true, false, 2, false, 3, false}, // gradX3 summed
        {"mul", ACL_FLOAT, ACL_FLOAT, 3, 2, true, false, 3, false, 3,
         false}, // gradX3 in the epilogue
        {"mul", ACL_BF16, ACL_FLOAT, 3, 3, false, false, 3, true, 0, false}, // gradX3 summed
        {"mul", ACL_FLOAT16, ACL_FLOAT16, 2, 2, true, true, 2, false, 0, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) fused_backward_case(&cases[i]);
    // only some gradients: the others are not computed
    fcase fc = {"mul", ACL_FLOAT, ACL_FLOAT, 3, 2, true, false, 2, false, 3, false};
    test_rng r;
    test_rng_seed(&r, 9);
    fdata f = fdata_make(&fc, &r);
    tv gx2 = mk(2, f.x2.t->dims, ACL_FLOAT);
    for (int64_t i = 0; i < numel(&gx2); i++) set(&gx2, i, 0);
    aclnnStatus st;
    RUN_OP(st,
           aclnnFusedMatmulBackwardGetWorkspaceSize(f.g.t, f.x1.t, f.x2.t, f.bias.t, f.x3.t, "mul",
                                                    3, NULL, gx2.t, NULL, NULL, &ws_, &ex_),
           aclnnFusedMatmulBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double s = 0;
    for (int64_t i = 0; i < numel(&gx2); i++) s += fabs(get(&gx2, i));
    CHECK(s > 0);
    tv_free(&gx2);
    fdata_free(&f);
}

// 1 and 2 threads: the same bits.
static void test_threads_bitwise(void) {
    int64_t da[3] = {2, 67, 259}, db[2] = {259, 131}, dc[3] = {2, 67, 131};
    test_rng r;
    test_rng_seed(&r, 77);
    tv a = mk(3, da, ACL_FLOAT), b = mk_view(2, db, ACL_FLOAT, true, 0, 0),
       c1 = mk(3, dc, ACL_BF16), c2 = mk(3, dc, ACL_BF16);
    fill(&a, &r, -1, 1), fill(&b, &r, -1, 1);
    int before = opgrad_get_num_threads();
    aclnnStatus st;
    opgrad_set_num_threads(1);
    RUN_OP(st, aclnnMatmulGetWorkspaceSize(a.t, b.t, c1.t, 0, &ws_, &ex_), aclnnMatmul);
    CHECK_EQ(st, ACLNN_SUCCESS);
    opgrad_set_num_threads(2);
    RUN_OP(st, aclnnMatmulGetWorkspaceSize(a.t, b.t, c2.t, 0, &ws_, &ex_), aclnnMatmul);
    CHECK_EQ(st, ACLNN_SUCCESS);
    opgrad_set_num_threads(before);
    CHECK(memcmp(c1.buf, c2.buf, (size_t)numel(&c1) * 2) == 0);
    tv_free(&a), tv_free(&b), tv_free(&c1), tv_free(&c2);
}

int main(void) {
    aclInit(NULL);
    RUN(test_null_and_dtype);
    RUN(test_shapes);
    RUN(test_fused_rules);
    RUN(test_memory);
    RUN(test_mm_fp32_views);
    RUN(test_matmul_ranks);
    RUN(test_batch_matmul);
    RUN(test_addmm);
    RUN(test_empty);
    RUN(test_fused_matmul);
    RUN(test_fused_matmul_backward);
    RUN(test_threads_bitwise);
    return test_summary();
}
