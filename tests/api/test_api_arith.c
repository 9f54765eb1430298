/* API-level tests of the arith family: every status path of Add/Adds/InplaceAdd/InplaceAdds,
 * Mul/Muls/InplaceMul/InplaceMuls, ReduceSum, FusedAddScale(Backward), with the status code and
 * the text of aclGetRecentErrMsg(); promotion, output dtype/shape, in place, 0-d / empty / 8-d /
 * 9-d tensors, strided views, executors (single use, repeatable, re-pointed), streams. Each
 * failing call is paired with the valid call it differs from where that keeps the test honest. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_fused_add_scale.h"
#include "aclnnop/aclnn_fused_add_scale_backward.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h" // view strides/offset, to address elements in the checks
#include "test.h"
#include "testutil.h"

/* ---- tensors over their own storage ------------------------------------------------------ */

typedef struct tview {
    aclTensor *t;
    void *buf;
} tview;

static tview tv_strided(const int64_t *dims, int nd, aclDataType dt, const int64_t *strides,
                        int64_t offset) {
    tview v = {0};
    int64_t st[32], s = 1, maxoff = offset;
    bool empty = false;
    for (int d = nd - 1; d >= 0; d--) {
        st[d] = strides ? strides[d] : s;
        s *= dims[d] > 0 ? dims[d] : 1;
        empty |= dims[d] == 0;
    }
    if (!empty)
        for (int d = 0; d < nd; d++) maxoff += st[d] * (dims[d] - 1);
    int64_t storage = maxoff + 1;
    size_t bytes = (size_t)storage * aclDataTypeSize(dt);
    if (aclrtMalloc(&v.buf, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return v;
    memset(v.buf, 0, bytes);
    int64_t sd[1] = {storage};
    v.t = aclCreateTensor(dims, (uint64_t)nd, dt, st, offset, ACL_FORMAT_ND, sd, 1, v.buf);
    return v;
}

static tview tv(const int64_t *dims, int nd, aclDataType dt) {
    return tv_strided(dims, nd, dt, NULL, 0);
}

static void tv_free(tview *v) {
    if (v->t) aclDestroyTensor(v->t);
    if (v->buf) aclrtFree(v->buf);
    v->t = NULL;
    v->buf = NULL;
}

static int64_t pos_of(const aclTensor *t, int64_t i) {
    int64_t pos = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        pos += i % t->dims[d] * t->strides[d];
        i /= t->dims[d];
    }
    return pos;
}
static void set(tview *v, int64_t i, double x) {
    test_store(v->buf, pos_of(v->t, i), v->t->dtype, x);
}
static double get(const tview *v, int64_t i) {
    return test_load(v->buf, pos_of(v->t, i), v->t->dtype);
}

static aclScalar *fscalar(float v) { return aclCreateScalar(&v, ACL_FLOAT); }

#define RUN_OK(phase1, phase2)                                                                     \
    do {                                                                                           \
        uint64_t ws_ = 0;                                                                          \
        aclOpExecutor *ex_ = NULL;                                                                 \
        aclnnStatus p1_ = (phase1);                                                                \
        aclnnStatus st_ = test_run(p1_, ws_, ex_, (phase2), NULL);                                 \
        CHECKF(st_ == ACLNN_SUCCESS, "%s: status %d: %s", #phase2, (int)st_,                       \
               aclGetRecentErrMsg());                                                              \
    } while (0)

static const int64_t D23[] = {2, 3}, D3[] = {3}, D43[] = {4, 3}, D13[] = {1, 3}, D21[] = {2, 1};

/* ---- Add ------------------------------------------------------------------------------------ */

static void test_add_nulls(void) {
    tview a = tv(D23, 2, ACL_FLOAT), b = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    aclScalar *one = fscalar(1);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnAddGetWorkspaceSize(NULL, b.t, one, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self is NULL");
    CHECK_EQ(aclnnAddGetWorkspaceSize(a.t, NULL, one, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("other is NULL");
    CHECK_EQ(aclnnAddGetWorkspaceSize(a.t, b.t, NULL, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("alpha is NULL");
    CHECK_EQ(aclnnAddGetWorkspaceSize(a.t, b.t, one, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out is NULL");
    CHECK_EQ(aclnnAddGetWorkspaceSize(a.t, b.t, one, y.t, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspaceSize");
    CHECK_EQ(aclnnAddGetWorkspaceSize(a.t, b.t, one, y.t, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    CHECK_EQ(aclnnAddsGetWorkspaceSize(a.t, one, NULL, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("alpha is NULL");
    CHECK_EQ(aclnnAddsGetWorkspaceSize(a.t, NULL, one, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("other is NULL");
    CHECK_EQ(aclnnInplaceAddGetWorkspaceSize(a.t, b.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("alpha is NULL");
    CHECK_EQ(aclnnInplaceAddGetWorkspaceSize(NULL, b.t, one, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("selfRef is NULL");
    CHECK_EQ(aclnnInplaceAddsGetWorkspaceSize(a.t, one, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    RUN_OK(aclnnAddGetWorkspaceSize(a.t, b.t, one, y.t, &ws_, &ex_), aclnnAdd);
    aclDestroyScalar(one);
    tv_free(&a), tv_free(&b), tv_free(&y);
}

static void test_add_values_and_broadcast(void) {
    tview a = tv(D23, 2, ACL_FLOAT), b = tv(D3, 1, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    for (int i = 0; i < 6; i++) set(&a, i, i);
    for (int i = 0; i < 3; i++) set(&b, i, 10 * (i + 1));
    aclScalar *alpha = fscalar(-0.5f);
    RUN_OK(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, y.t, &ws_, &ex_), aclnnAdd);
    for (int i = 0; i < 6; i++)
        CHECKF(get(&y, i) == i - 0.5 * 10 * (i % 3 + 1), "y[%d] = %g", i, get(&y, i));
    // the other way round: other [2,3] broadcasts self [3]
    RUN_OK(aclnnAddGetWorkspaceSize(b.t, a.t, alpha, y.t, &ws_, &ex_), aclnnAdd);
    for (int i = 0; i < 6; i++) CHECK(get(&y, i) == 10 * (i % 3 + 1) - 0.5 * i);
    // [2,1] + [1,3] -> [2,3]
    tview c = tv(D21, 2, ACL_FLOAT), d = tv(D13, 2, ACL_FLOAT);
    set(&c, 0, 1), set(&c, 1, 2), set(&d, 0, 10), set(&d, 1, 20), set(&d, 2, 30);
    aclScalar *one = fscalar(1);
    RUN_OK(aclnnAddGetWorkspaceSize(c.t, d.t, one, y.t, &ws_, &ex_), aclnnAdd);
    CHECK(get(&y, 0) == 11 && get(&y, 5) == 32);
    // an integer alpha (castable to float)
    int32_t two = 2;
    aclScalar *ialpha = aclCreateScalar(&two, ACL_INT32);
    RUN_OK(aclnnAddGetWorkspaceSize(a.t, a.t, ialpha, y.t, &ws_, &ex_), aclnnAdd);
    CHECK(get(&y, 4) == 12);
    aclDestroyScalar(alpha), aclDestroyScalar(one), aclDestroyScalar(ialpha);
    tv_free(&a), tv_free(&b), tv_free(&y), tv_free(&c), tv_free(&d);
}

static void test_add_shape_errors(void) {
    tview a = tv(D23, 2, ACL_FLOAT), b = tv(D43, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT),
          y43 = tv(D43, 2, ACL_FLOAT);
    aclScalar *one = fscalar(1);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnAddGetWorkspaceSize(a.t, b.t, one, y.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("does not broadcast");
    tview c = tv(D3, 1, ACL_FLOAT);
    CHECK_EQ(aclnnAddGetWorkspaceSize(c.t, b.t, one, y.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has shape [2,3] but the inputs broadcast to [4,3]");
    RUN_OK(aclnnAddGetWorkspaceSize(c.t, b.t, one, y43.t, &ws_, &ex_), aclnnAdd);
    // in place: selfRef must have the broadcast shape
    CHECK_EQ(aclnnInplaceAddGetWorkspaceSize(c.t, b.t, one, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("selfRef has shape [3] but the inputs broadcast to [4,3]");
    RUN_OK(aclnnInplaceAddGetWorkspaceSize(b.t, c.t, one, &ws_, &ex_), aclnnInplaceAdd);
    // Adds: out must have self's shape
    CHECK_EQ(aclnnAddsGetWorkspaceSize(c.t, one, one, y.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("must be equal");
    aclDestroyScalar(one);
    tv_free(&a), tv_free(&b), tv_free(&y), tv_free(&y43), tv_free(&c);
}

static void test_add_dtypes(void) {
    uint64_t ws;
    aclOpExecutor *e;
    aclScalar *one = fscalar(1);
    tview i32 = tv(D23, 2, ACL_INT32), f = tv(D23, 2, ACL_FLOAT), h = tv(D23, 2, ACL_FLOAT16),
          bf = tv(D23, 2, ACL_BF16), d64 = tv(D23, 2, ACL_COMPLEX64), u16 = tv(D23, 2, ACL_UINT16);
    CHECK_EQ(aclnnAddGetWorkspaceSize(i32.t, f.t, one, f.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has dtype int32; opgrad supports float32, float16, bfloat16 and float64");
    CHECK_MSG("aclnn also accepts");
    CHECK_EQ(aclnnAddGetWorkspaceSize(f.t, d64.t, one, f.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("other has dtype complex64");
    CHECK_EQ(aclnnAddGetWorkspaceSize(f.t, f.t, one, u16.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has dtype uint16");
    // promotion: f16 + f32 -> f32; bf16 + f16 -> f32; any float out is castable
    for (int i = 0; i < 6; i++)
        set(&h, i, 1 + i / 1024.0), set(&bf, i, 1 + i / 128.0), set(&f, i, 1e-4);
    tview out = tv(D23, 2, ACL_FLOAT);
    RUN_OK(aclnnAddGetWorkspaceSize(h.t, f.t, one, out.t, &ws_, &ex_), aclnnAdd);
    CHECK(get(&out, 1) == (double)(float)(1 + 1 / 1024.0 + (double)1e-4f)); // not rounded to f16
    RUN_OK(aclnnAddGetWorkspaceSize(bf.t, h.t, one, out.t, &ws_, &ex_), aclnnAdd);
    CHECK(get(&out, 1) == (1 + 1 / 128.0) + (1 + 1 / 1024.0)); // f32: exact, neither 16-bit type
    // f16 + f16 into an f32 out: the result is the f16 one (aclnn casts the promoted result)
    tview h2 = tv(D23, 2, ACL_FLOAT16);
    set(&h2, 0, 1.0 / 2048);
    RUN_OK(aclnnAddGetWorkspaceSize(h.t, h2.t, one, out.t, &ws_, &ex_), aclnnAdd);
    CHECK(get(&out, 0) == 1.0); // 1 + 2^-11 rounds to 1 in f16 first
    // alpha must be castable to the promoted dtype: complex is not
    float cplx[2] = {1, 0};
    aclScalar *calpha = aclCreateScalar(cplx, ACL_COMPLEX64);
    CHECK_EQ(aclnnAddGetWorkspaceSize(f.t, f.t, calpha, out.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("alpha has dtype complex64");
    CHECK_EQ(aclnnAddsGetWorkspaceSize(f.t, calpha, one, out.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("other has dtype complex64");
    aclDestroyScalar(calpha), aclDestroyScalar(one);
    tv_free(&i32), tv_free(&f), tv_free(&h), tv_free(&bf), tv_free(&d64), tv_free(&u16),
        tv_free(&out), tv_free(&h2);
}

static void test_add_ranks(void) {
    aclScalar *one = fscalar(1);
    uint64_t ws;
    aclOpExecutor *e;
    // 0-d + [2,3]
    tview s = tv(NULL, 0, ACL_FLOAT), a = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    set(&s, 0, 5);
    set(&a, 4, 1);
    RUN_OK(aclnnAddGetWorkspaceSize(s.t, a.t, one, y.t, &ws_, &ex_), aclnnAdd);
    CHECK(get(&y, 4) == 6 && get(&y, 0) == 5);
    // empty: success, workspace 0, nothing written
    int64_t e0[2] = {0, 3};
    tview ea = tv(e0, 2, ACL_FLOAT), ey = tv(e0, 2, ACL_FLOAT);
    CHECK_EQ(aclnnAddGetWorkspaceSize(ea.t, a.t, one, ey.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID); // [0,3] vs [2,3]
    CHECK_EQ(aclnnAddGetWorkspaceSize(ea.t, s.t, one, ey.t, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(ws, 0);
    CHECK_EQ(aclnnAdd(NULL, 0, e, NULL), ACLNN_SUCCESS);
    // 8-d fine, 9-d refused
    int64_t d8[8] = {2, 1, 2, 1, 1, 2, 1, 2}, d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
    tview a8 = tv(d8, 8, ACL_FLOAT), y8 = tv(d8, 8, ACL_FLOAT), a9 = tv(d9, 9, ACL_FLOAT),
          y9 = tv(d9, 9, ACL_FLOAT);
    RUN_OK(aclnnAddGetWorkspaceSize(a8.t, s.t, one, y8.t, &ws_, &ex_), aclnnAdd);
    CHECK(get(&y8, 15) == 5);
    CHECK_EQ(aclnnAddGetWorkspaceSize(a9.t, a9.t, one, y9.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank 9");
    aclDestroyScalar(one);
    tv_free(&s), tv_free(&a), tv_free(&y), tv_free(&ea), tv_free(&ey), tv_free(&a8), tv_free(&y8),
        tv_free(&a9), tv_free(&y9);
}

static void test_adds_and_inplace(void) {
    tview a = tv(D23, 2, ACL_FLOAT16), y = tv(D23, 2, ACL_FLOAT16), b = tv(D3, 1, ACL_FLOAT16);
    for (int i = 0; i < 6; i++) set(&a, i, i);
    for (int i = 0; i < 3; i++) set(&b, i, 1);
    aclScalar *other = fscalar(0.1f), *alpha = fscalar(3);
    // Adds in float16: other is rounded to float16 first (aclnn makes it a float16 tensor)
    RUN_OK(aclnnAddsGetWorkspaceSize(a.t, other, alpha, y.t, &ws_, &ex_), aclnnAdds);
    double o16 = test_round_to(ACL_FLOAT16, 0.1f);
    for (int i = 0; i < 6; i++)
        CHECK(get(&y, i) == test_round_to(ACL_FLOAT16, (float)(i + 3 * o16)));
    RUN_OK(aclnnInplaceAddsGetWorkspaceSize(a.t, other, alpha, &ws_, &ex_), aclnnInplaceAdds);
    CHECK(get(&a, 5) == get(&y, 5));
    RUN_OK(aclnnInplaceAddGetWorkspaceSize(a.t, b.t, alpha, &ws_, &ex_), aclnnInplaceAdd);
    CHECK(get(&a, 5) == test_round_to(ACL_FLOAT16, get(&y, 5) + 3));
    aclDestroyScalar(other), aclDestroyScalar(alpha);
    tv_free(&a), tv_free(&y), tv_free(&b);
}

/* ---- Mul ------------------------------------------------------------------------------------ */

static void test_mul_statuses(void) {
    tview a = tv(D23, 2, ACL_FLOAT), b = tv(D3, 1, ACL_BF16), y = tv(D23, 2, ACL_FLOAT),
          i8 = tv(D23, 2, ACL_INT8);
    aclScalar *two = fscalar(2);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnMulGetWorkspaceSize(NULL, b.t, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self is NULL");
    CHECK_EQ(aclnnMulGetWorkspaceSize(a.t, NULL, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnMulGetWorkspaceSize(a.t, b.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out is NULL");
    CHECK_EQ(aclnnMulsGetWorkspaceSize(a.t, NULL, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnInplaceMulGetWorkspaceSize(a.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnInplaceMulsGetWorkspaceSize(NULL, two, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnMulGetWorkspaceSize(a.t, i8.t, y.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("other has dtype int8");
    tview b43 = tv(D43, 2, ACL_FLOAT);
    CHECK_EQ(aclnnMulGetWorkspaceSize(a.t, b43.t, y.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("does not broadcast");
    CHECK_EQ(aclnnInplaceMulGetWorkspaceSize(b.t, a.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("selfRef has shape [3] but the inputs broadcast to [2,3]");
    // values: f32 [2,3] * bf16 [3] -> f32
    for (int i = 0; i < 6; i++) set(&a, i, i + 0.5);
    for (int i = 0; i < 3; i++) set(&b, i, i - 1);
    RUN_OK(aclnnMulGetWorkspaceSize(a.t, b.t, y.t, &ws_, &ex_), aclnnMul);
    for (int i = 0; i < 6; i++) CHECK(get(&y, i) == (i + 0.5) * (i % 3 - 1));
    RUN_OK(aclnnMulsGetWorkspaceSize(a.t, two, y.t, &ws_, &ex_), aclnnMuls);
    CHECK(get(&y, 5) == 11);
    RUN_OK(aclnnInplaceMulGetWorkspaceSize(a.t, b.t, &ws_, &ex_), aclnnInplaceMul);
    CHECK(get(&a, 5) == 5.5);
    RUN_OK(aclnnInplaceMulsGetWorkspaceSize(a.t, two, &ws_, &ex_), aclnnInplaceMuls);
    CHECK(get(&a, 5) == 11);
    // Muls of bfloat16 computes in float32: the scalar is not rounded to bfloat16 first
    tview hb = tv(D3, 1, ACL_BF16), yb = tv(D3, 1, ACL_FLOAT);
    set(&hb, 0, 1);
    aclScalar *fine = fscalar(1.00390625f); // 1 + 2^-8: not a bfloat16
    RUN_OK(aclnnMulsGetWorkspaceSize(hb.t, fine, yb.t, &ws_, &ex_), aclnnMuls);
    CHECK(get(&yb, 0) == 1.00390625);
    aclDestroyScalar(two), aclDestroyScalar(fine);
    tv_free(&a), tv_free(&b), tv_free(&y), tv_free(&i8), tv_free(&b43), tv_free(&hb), tv_free(&yb);
}

static void test_mul_strided_views(void) {
    // a transposed [3,2] view of a [2,3] buffer times a padded view, into a strided output
    int64_t d32[2] = {3, 2}, st_t[2] = {1, 3}, st_p[2] = {4, 1}, st_o[2] = {1, 3};
    tview a = tv_strided(d32, 2, ACL_FLOAT, st_t, 0), b = tv_strided(d32, 2, ACL_FLOAT, st_p, 1),
          y = tv_strided(d32, 2, ACL_FLOAT, st_o, 0);
    for (int i = 0; i < 6; i++) set(&a, i, i + 1), set(&b, i, 10 + i);
    RUN_OK(aclnnMulGetWorkspaceSize(a.t, b.t, y.t, &ws_, &ex_), aclnnMul);
    for (int i = 0; i < 6; i++) CHECK(get(&y, i) == (i + 1) * (10 + i));
    tv_free(&a), tv_free(&b), tv_free(&y);
}

static void test_mul_ranks(void) {
    uint64_t ws;
    aclOpExecutor *e;
    aclScalar *two = fscalar(2);
    tview s = tv(NULL, 0, ACL_BF16), sy = tv(NULL, 0, ACL_FLOAT);
    set(&s, 0, 3);
    RUN_OK(aclnnMulGetWorkspaceSize(s.t, s.t, sy.t, &ws_, &ex_), aclnnMul);
    CHECK(get(&sy, 0) == 9);
    RUN_OK(aclnnInplaceMulsGetWorkspaceSize(s.t, two, &ws_, &ex_), aclnnInplaceMuls);
    CHECK(get(&s, 0) == 6);
    int64_t e0[3] = {2, 0, 3}, d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
    tview ea = tv(e0, 3, ACL_FLOAT16), ey = tv(e0, 3, ACL_FLOAT16), a9 = tv(d9, 9, ACL_FLOAT);
    CHECK_EQ(aclnnMulGetWorkspaceSize(ea.t, s.t, ey.t, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(ws, 0);
    CHECK_EQ(aclnnMul(NULL, 0, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMulsGetWorkspaceSize(ea.t, two, ey.t, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMuls(NULL, 0, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMulsGetWorkspaceSize(a9.t, two, a9.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank 9");
    aclDestroyScalar(two);
    tv_free(&s), tv_free(&sy), tv_free(&ea), tv_free(&ey), tv_free(&a9);
}

/* ---- ReduceSum ------------------------------------------------------------------------------ */

static aclnnStatus rsum1(const tview *x, const int64_t *dims, int n, bool keep, aclDataType dt,
                         const tview *out, uint64_t *ws, aclOpExecutor **e) {
    aclIntArray *a = aclCreateIntArray(dims, (uint64_t)n);
    aclnnStatus st = aclnnReduceSumGetWorkspaceSize(x->t, a, keep, dt, out->t, ws, e);
    aclDestroyIntArray(a);
    return st;
}

static void test_reduce_sum_statuses(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D3, 1, ACL_FLOAT), y2 = tv(D21, 2, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *e;
    const int64_t d0[] = {0}, d1[] = {1}, dm1[] = {-1}, d2[] = {2}, dm3[] = {-3}, dup[] = {0, -2};
    aclIntArray *a0 = aclCreateIntArray(d0, 1);
    CHECK_EQ(aclnnReduceSumGetWorkspaceSize(NULL, a0, false, ACL_FLOAT, y.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self is NULL");
    CHECK_EQ(aclnnReduceSumGetWorkspaceSize(x.t, NULL, false, ACL_FLOAT, y.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("dims is NULL");
    CHECK_EQ(aclnnReduceSumGetWorkspaceSize(x.t, a0, false, ACL_FLOAT, NULL, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out is NULL");
    CHECK_EQ(aclnnReduceSumGetWorkspaceSize(x.t, a0, false, ACL_FLOAT, y.t, NULL, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnReduceSumGetWorkspaceSize(x.t, a0, false, ACL_FLOAT, y.t, &ws, NULL),
             ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyIntArray(a0);
    CHECK_EQ(rsum1(&x, d0, 1, false, ACL_FLOAT, &y, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    // dims out of range, duplicated
    CHECK_EQ(rsum1(&x, d2, 1, false, ACL_FLOAT, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dims[0] = 2 is out of range: self has rank 2, so a dim must be in [-2, 1]");
    CHECK_EQ(rsum1(&x, dm3, 1, false, ACL_FLOAT, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out of range");
    CHECK_EQ(rsum1(&x, dup, 2, false, ACL_FLOAT, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dim 0 appears more than once");
    // dtype: must equal out's, and be a supported float type
    CHECK_EQ(rsum1(&x, d0, 1, false, ACL_FLOAT16, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has dtype float32 but dtype is float16");
    tview yi = tv(D3, 1, ACL_INT32), xi = tv(D23, 2, ACL_INT64);
    CHECK_EQ(rsum1(&x, d0, 1, false, ACL_INT32, &yi, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad supports float32, float16, bfloat16 and float64");
    CHECK_EQ(rsum1(&xi, d0, 1, false, ACL_FLOAT, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has dtype int64");
    // out shape
    CHECK_EQ(rsum1(&x, d1, 1, false, ACL_FLOAT, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG(
        "out has shape [3] but summing self [2,3] over the given dims (no keepDims) gives [2]");
    CHECK_EQ(rsum1(&x, d1, 1, true, ACL_FLOAT, &y2, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(rsum1(&x, dm1, 1, false, ACL_FLOAT, &y2, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    tv_free(&x), tv_free(&y), tv_free(&y2), tv_free(&yi), tv_free(&xi);
}

static void test_reduce_sum_values(void) {
    int64_t d234[3] = {2, 3, 4};
    tview x = tv(d234, 3, ACL_FLOAT);
    for (int i = 0; i < 24; i++) set(&x, i, i);
    // dims [0, -1] with keepDims -> [1,3,1]
    int64_t k131[3] = {1, 3, 1};
    tview y = tv(k131, 3, ACL_FLOAT);
    const int64_t d0m1[] = {0, -1};
    RUN_OK(rsum1(&x, d0m1, 2, true, ACL_FLOAT, &y, &ws_, &ex_), aclnnReduceSum);
    for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 4; c++) s += a * 12 + j * 4 + c;
        CHECK(get(&y, j) == s);
    }
    // empty dims: every dim; a 0-d out, or any one-element out
    tview s0 = tv(NULL, 0, ACL_FLOAT), s1 = tv((const int64_t[]){1}, 1, ACL_FLOAT);
    RUN_OK(rsum1(&x, NULL, 0, false, ACL_FLOAT, &s0, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&s0, 0) == 276);
    RUN_OK(rsum1(&x, NULL, 0, true, ACL_FLOAT, &s1, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&s1, 0) == 276);
    // a 0-d self: dims 0 / -1 are valid, 1 is not
    set(&s0, 0, 2.5);
    const int64_t d0[] = {0}, dm1[] = {-1}, d1[] = {1};
    RUN_OK(rsum1(&s0, d0, 1, false, ACL_FLOAT, &s1, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&s1, 0) == 2.5);
    RUN_OK(rsum1(&s0, dm1, 1, true, ACL_FLOAT, &s1, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&s1, 0) == 2.5);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(rsum1(&s0, d1, 1, false, ACL_FLOAT, &s1, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    // the sum of an empty self is 0 (out non-empty), and an empty out is a no-op
    int64_t e203[3] = {2, 0, 3}, e23[2] = {2, 3}, e20[2] = {2, 0};
    tview ex = tv(e203, 3, ACL_FLOAT), ey = tv(e23, 2, ACL_FLOAT), ey0 = tv(e20, 2, ACL_FLOAT);
    for (int i = 0; i < 6; i++) set(&ey, i, 7);
    RUN_OK(rsum1(&ex, d1, 1, false, ACL_FLOAT, &ey, &ws_, &ex_), aclnnReduceSum);
    for (int i = 0; i < 6; i++) CHECK(get(&ey, i) == 0 && !signbit(get(&ey, i)));
    const int64_t d2[] = {2};
    CHECK_EQ(rsum1(&ex, d2, 1, false, ACL_FLOAT, &ey0, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(ws, 0);
    CHECK_EQ(aclnnReduceSum(NULL, 0, e, NULL), ACLNN_SUCCESS);
    // 8-d fine, 9-d refused
    int64_t d8[8] = {2, 1, 2, 1, 1, 2, 1, 2}, d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
    tview x8 = tv(d8, 8, ACL_FLOAT), x9 = tv(d9, 9, ACL_FLOAT);
    for (int i = 0; i < 16; i++) set(&x8, i, 1);
    RUN_OK(rsum1(&x8, NULL, 0, false, ACL_FLOAT, &s0, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&s0, 0) == 16);
    CHECK_EQ(rsum1(&x9, NULL, 0, false, ACL_FLOAT, &s0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank 9");
    tv_free(&x), tv_free(&y), tv_free(&s0), tv_free(&s1), tv_free(&ex), tv_free(&ey), tv_free(&ey0),
        tv_free(&x8), tv_free(&x9);
}

static void test_reduce_sum_dtype_casts_first(void) {
    // self float32 summed in dtype float16: each value is rounded to float16 first (aclnn casts
    // self to dtype), then summed in fp32 and rounded once
    int64_t d2[1] = {2};
    tview x = tv(d2, 1, ACL_FLOAT), y16 = tv(NULL, 0, ACL_FLOAT16), y32 = tv(NULL, 0, ACL_FLOAT);
    set(&x, 0, 1 + 0x1p-11 + 0x1p-20);
    set(&x, 1, -1);
    RUN_OK(rsum1(&x, NULL, 0, false, ACL_FLOAT16, &y16, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&y16, 0) == 0x1p-10); // (1 + 2^-10) - 1
    RUN_OK(rsum1(&x, NULL, 0, false, ACL_FLOAT, &y32, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&y32, 0) == 0x1p-11 + 0x1p-20);
    // float16 self summed in float32: exact widening
    tview h = tv(d2, 1, ACL_FLOAT16);
    set(&h, 0, 65504), set(&h, 1, 65504);
    RUN_OK(rsum1(&h, NULL, 0, false, ACL_FLOAT, &y32, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&y32, 0) == 131008); // no float16 overflow on the way
    RUN_OK(rsum1(&h, NULL, 0, false, ACL_FLOAT16, &y16, &ws_, &ex_), aclnnReduceSum);
    CHECK(isinf(get(&y16, 0)));
    tv_free(&x), tv_free(&y16), tv_free(&y32), tv_free(&h);
}

static void test_reduce_sum_memory_rules(void) {
    tview x = tv(D23, 2, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *e;
    const int64_t d1[] = {1};
    // out overlapping self
    int64_t d2[1] = {2}, st1[1] = {1};
    aclTensor *alias =
        aclCreateTensor(d2, 1, ACL_FLOAT, st1, 1, ACL_FORMAT_ND, (const int64_t[]){6}, 1, x.buf);
    tview yv = {alias, NULL};
    CHECK_EQ(rsum1(&x, d1, 1, false, ACL_FLOAT, &yv, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("may not overlap");
    aclDestroyTensor(alias);
    // an out whose elements share one address
    int64_t st0[1] = {0};
    tview y0 = tv_strided(d2, 1, ACL_FLOAT, st0, 0);
    CHECK_EQ(rsum1(&x, d1, 1, false, ACL_FLOAT, &y0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("share one memory location");
    // a NULL data address
    aclTensor *nodata = aclCreateTensor(d2, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, d2, 1, NULL);
    tview yn = {nodata, NULL};
    CHECK_EQ(rsum1(&x, d1, 1, false, ACL_FLOAT, &yn, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("no data");
    aclDestroyTensor(nodata);
    // a strided out: row sums written every 3rd element
    int64_t st3[1] = {3};
    tview y3 = tv_strided(d2, 1, ACL_FLOAT, st3, 0);
    for (int i = 0; i < 6; i++) set(&x, i, i);
    ((float *)y3.buf)[1] = 42;
    RUN_OK(rsum1(&x, d1, 1, false, ACL_FLOAT, &y3, &ws_, &ex_), aclnnReduceSum);
    CHECK(get(&y3, 0) == 3 && get(&y3, 1) == 12 && ((float *)y3.buf)[1] == 42);
    tv_free(&x), tv_free(&y0), tv_free(&y3);
}

static void test_reduce_sum_executor(void) {
    int64_t d[2] = {300, 70};
    tview x = tv(d, 2, ACL_FLOAT), x2 = tv(d, 2, ACL_FLOAT), y = tv(d + 1, 1, ACL_FLOAT);
    for (int i = 0; i < 300 * 70; i++) set(&x, i, 1), set(&x2, i, 2);
    const int64_t d0[] = {0};
    uint64_t ws;
    aclOpExecutor *e;
    // single use
    CHECK_EQ(rsum1(&x, d0, 1, false, ACL_FLOAT, &y, &ws, &e), ACLNN_SUCCESS);
    void *w = NULL;
    if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    if (ws) {
        CHECK_EQ(aclnnReduceSum(w, ws - 1, e, NULL), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("smaller than");
    }
    CHECK_EQ(aclnnReduceSum(w, ws, e, NULL), ACLNN_SUCCESS);
    CHECK(get(&y, 69) == 300);
    CHECK_EQ(aclnnReduceSum(w, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("already consumed");
    // repeatable, re-pointed at another input, on a stream
    CHECK_EQ(rsum1(&x, d0, 1, false, ACL_FLOAT, &y, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    aclrtStream stream;
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    CHECK_EQ(aclnnReduceSum(w, ws, e, stream), ACLNN_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK(get(&y, 0) == 300);
    CHECK_EQ(aclSetInputTensorAddr(e, 0, x.t, x2.buf), ACLNN_SUCCESS);
    CHECK_EQ(aclnnReduceSum(w, ws, e, stream), ACLNN_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK(get(&y, 0) == 600);
    CHECK_EQ(aclSetOutputTensorAddr(e, 1, NULL, y.buf), ACLNN_ERR_PARAM_INVALID); // one output
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    // another operator's phase 2
    CHECK_EQ(rsum1(&x, d0, 1, false, ACL_FLOAT, &y, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMul(w, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("planned by aclnnReduceSumGetWorkspaceSize");
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    if (w) aclrtFree(w);
    tv_free(&x), tv_free(&x2), tv_free(&y);
}

/* ---- FusedAddScale -------------------------------------------------------------------------- */

static void test_fused_add_scale(void) {
    tview x = tv(D23, 2, ACL_FLOAT), b = tv(D3, 1, ACL_FLOAT),
          s1 = tv((const int64_t[]){1}, 1, ACL_FLOAT), sc = tv(D3, 1, ACL_FLOAT),
          y = tv(D23, 2, ACL_FLOAT), b2 = tv((const int64_t[]){2}, 1, ACL_FLOAT),
          s0 = tv(NULL, 0, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnFusedAddScaleGetWorkspaceSize(NULL, b.t, s1.t, y.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("x is NULL");
    CHECK_EQ(aclnnFusedAddScaleGetWorkspaceSize(x.t, NULL, s1.t, y.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnFusedAddScaleGetWorkspaceSize(x.t, b.t, NULL, y.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("scale is NULL");
    CHECK_EQ(aclnnFusedAddScaleGetWorkspaceSize(x.t, b2.t, s1.t, y.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("bias has shape [2] but x [2,3] has C = 3 channels");
    CHECK_EQ(aclnnFusedAddScaleGetWorkspaceSize(x.t, b.t, b2.t, y.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("scale has shape [2]; it must have one element ([1]) or one per channel ([3])");
    CHECK_EQ(aclnnFusedAddScaleGetWorkspaceSize(s0.t, b.t, s1.t, y.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("x has rank 0");
    CHECK_EQ(aclnnFusedAddScaleGetWorkspaceSize(x.t, b.t, s1.t, b.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("must be equal");
    for (int i = 0; i < 6; i++) set(&x, i, i);
    for (int j = 0; j < 3; j++) set(&b, j, 10 * j), set(&sc, j, j + 1);
    set(&s1, 0, -2), set(&s0, 0, 0.5);
    RUN_OK(aclnnFusedAddScaleGetWorkspaceSize(x.t, b.t, s1.t, y.t, &ws_, &ex_), aclnnFusedAddScale);
    for (int i = 0; i < 6; i++) CHECK(get(&y, i) == (i + 10 * (i % 3)) * -2.0);
    RUN_OK(aclnnFusedAddScaleGetWorkspaceSize(x.t, b.t, sc.t, y.t, &ws_, &ex_), aclnnFusedAddScale);
    for (int i = 0; i < 6; i++) CHECK(get(&y, i) == (i + 10 * (i % 3)) * (i % 3 + 1.0));
    RUN_OK(aclnnFusedAddScaleGetWorkspaceSize(x.t, b.t, s0.t, y.t, &ws_, &ex_), aclnnFusedAddScale);
    CHECK(get(&y, 5) == 12.5);
    tv_free(&x), tv_free(&b), tv_free(&s1), tv_free(&sc), tv_free(&y), tv_free(&b2), tv_free(&s0);
}

static void test_fused_add_scale_backward(void) {
    tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT16), b = tv(D3, 1, ACL_FLOAT16),
          s = tv((const int64_t[]){1}, 1, ACL_FLOAT16), gx = tv(D23, 2, ACL_FLOAT16),
          gb = tv(D3, 1, ACL_FLOAT16), gs = tv((const int64_t[]){1}, 1, ACL_FLOAT16),
          gs3 = tv(D3, 1, ACL_FLOAT), gi = tv(D3, 1, ACL_INT32);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(
        aclnnFusedAddScaleBackwardGetWorkspaceSize(NULL, x.t, b.t, s.t, gx.t, gb.t, gs.t, &ws, &e),
        ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("gradOutput is NULL");
    CHECK_EQ(
        aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, gx.t, gb.t, NULL, &ws, &e),
        ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("gradScale is NULL");
    CHECK_EQ(
        aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, gx.t, gi.t, gs.t, &ws, &e),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradBias has dtype int32");
    CHECK_EQ(
        aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, gx.t, gb.t, gs3.t, &ws, &e),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("scale has shape [1] but gradScale has shape [3]");
    CHECK_EQ(
        aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, gb.t, gb.t, gs.t, &ws, &e),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(
        aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, gx.t, gx.t, gs.t, &ws, &e),
        ACLNN_ERR_PARAM_INVALID); // gradBias [2,3]: wrong shape
    // gradBias and gradScale in one buffer: refused
    aclTensor *alias = aclCreateTensor((const int64_t[]){1}, 1, ACL_FLOAT16, NULL, 0, ACL_FORMAT_ND,
                                       (const int64_t[]){1}, 1, gb.buf);
    CHECK_EQ(
        aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, gx.t, gb.t, alias, &ws, &e),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("shares memory with output 1");
    aclDestroyTensor(alias);
    // values: g float32 (mixed precision), the rest float16
    for (int i = 0; i < 6; i++) set(&g, i, i - 2.5), set(&x, i, i);
    for (int j = 0; j < 3; j++) set(&b, j, j);
    set(&s, 0, 3);
    RUN_OK(aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, gx.t, gb.t, gs.t, &ws_,
                                                      &ex_),
           aclnnFusedAddScaleBackward);
    double sgs = 0;
    for (int i = 0; i < 6; i++) {
        CHECK(get(&gx, i) == (i - 2.5) * 3);
        sgs += (i - 2.5) * (i + i % 3);
    }
    for (int j = 0; j < 3; j++) CHECK(get(&gb, j) == ((j - 2.5) + (j + 3 - 2.5)) * 3);
    CHECK(get(&gs, 0) == sgs);
    // empty x: success; gradBias [0]; a [1] gradScale is the sum over nothing, 0
    int64_t e03[2] = {3, 0}, e0[1] = {0};
    tview eg = tv(e03, 2, ACL_FLOAT), exx = tv(e03, 2, ACL_FLOAT), eb = tv(e0, 1, ACL_FLOAT),
          egx = tv(e03, 2, ACL_FLOAT), egb = tv(e0, 1, ACL_FLOAT),
          egs = tv((const int64_t[]){1}, 1, ACL_FLOAT), es = tv((const int64_t[]){1}, 1, ACL_FLOAT);
    set(&egs, 0, 9);
    RUN_OK(aclnnFusedAddScaleBackwardGetWorkspaceSize(eg.t, exx.t, eb.t, es.t, egx.t, egb.t, egs.t,
                                                      &ws_, &ex_),
           aclnnFusedAddScaleBackward);
    CHECK(get(&egs, 0) == 0);
    tv_free(&g), tv_free(&x), tv_free(&b), tv_free(&s), tv_free(&gx), tv_free(&gb), tv_free(&gs),
        tv_free(&gs3), tv_free(&gi), tv_free(&eg), tv_free(&exx), tv_free(&eb), tv_free(&egx),
        tv_free(&egb), tv_free(&egs), tv_free(&es);
}

// alpha = a bool scalar whose byte is 2: true, so 1 + 1 * true = 2 (it gave 3: the byte was read
// through C's _Bool).
static void test_add_bool_alpha_byte(void) {
    tview a = tv(D3, 1, ACL_FLOAT), b = tv(D3, 1, ACL_FLOAT), y = tv(D3, 1, ACL_FLOAT);
    for (int i = 0; i < 3; i++) set(&a, i, 1), set(&b, i, 1);
    unsigned char two = 2;
    aclScalar *alpha = aclCreateScalar(&two, ACL_BOOL);
    RUN_OK(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, y.t, &ws_, &ex_), aclnnAdd);
    for (int i = 0; i < 3; i++) CHECKF(get(&y, i) == 2.0, "y[%d] = %g", i, get(&y, i));
    aclDestroyScalar(alpha);
    tv_free(&a), tv_free(&b), tv_free(&y);
}

int main(void) {
    aclInit(NULL);
    RUN(test_add_nulls);
    RUN(test_add_values_and_broadcast);
    RUN(test_add_shape_errors);
    RUN(test_add_dtypes);
    RUN(test_add_ranks);
    RUN(test_add_bool_alpha_byte);
    RUN(test_adds_and_inplace);
    RUN(test_mul_statuses);
    RUN(test_mul_strided_views);
    RUN(test_mul_ranks);
    RUN(test_reduce_sum_statuses);
    RUN(test_reduce_sum_values);
    RUN(test_reduce_sum_dtype_casts_first);
    RUN(test_reduce_sum_memory_rules);
    RUN(test_reduce_sum_executor);
    RUN(test_fused_add_scale);
    RUN(test_fused_add_scale_backward);
    aclFinalize();
    return test_summary();
}
