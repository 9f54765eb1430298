#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "check/compare.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"

void test_rng_seed(test_rng *r, uint64_t seed) { og_rng_seed(r, seed); }
uint64_t test_rng_next(test_rng *r) { return og_rng_next(r); }
double test_rng_uniform(test_rng *r, double lo, double hi) { return og_rng_uniform(r, lo, hi); }

bool test_quick_mode(void) {
    const char *q = getenv("OPGRAD_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

uint32_t test_f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float test_u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

bool test_isa_available(int isa) { return isa <= (int)opgrad_cpu_isa(); }

void *test_dev_alloc(size_t bytes) {
    void *p = NULL;
    if (aclrtMalloc(&p, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) abort();
    memset(p, 0, bytes);
    return p;
}

void test_fill(void *buf, int64_t off, int64_t n, aclDataType dt, test_rng *r, double lo,
               double hi) {
    for (int64_t i = 0; i < n; i++) test_store(buf, off + i, dt, test_rng_uniform(r, lo, hi));
}

int test_best_isa(void) { return (int)opgrad_cpu_isa(); }

double test_ulp32(double v) {
    int e;
    frexp(v, &e);
    return ldexp(1.0, (v == 0 || e - 1 < -126 ? -126 : e - 1) - 23);
}

// The checker's typed access (check/compare.c), under the names the tests use.
void test_store(void *base, int64_t index, aclDataType dt, double v) {
    ogc_store(base, index, dt, v);
}

double test_load(const void *base, int64_t index, aclDataType dt) {
    return ogc_load(base, index, dt);
}

// Rounding a double straight to fp16/bf16 (not via float) avoids double rounding.
double test_round_to(aclDataType dt, double v) {
    if (isnan(v) || isinf(v) || v == 0) return dt == ACL_DOUBLE ? v : (double)(float)v;
    int mant_bits, min_exp, max_exp;
    switch (dt) {
    case ACL_FLOAT16:
        mant_bits = 10, min_exp = -14, max_exp = 15;
        break;
    case ACL_BF16:
        mant_bits = 7, min_exp = -126, max_exp = 127;
        break;
    case ACL_DOUBLE:
        return v;
    default:
        mant_bits = 23, min_exp = -126, max_exp = 127;
        break;
    }
    int e;
    frexp(v, &e); // v = m 2^e, 0.5 <= |m| < 1
    int exp = e - 1;
    if (exp < min_exp) exp = min_exp;
    double quantum = ldexp(1.0, exp - mant_bits);
    double r = nearbyint(v / quantum) * quantum; // default rounding mode: nearest even
    double max = ldexp(2.0 - ldexp(1.0, -mant_bits), max_exp);
    if (fabs(r) > max) {
        // overflow: rounds to inf if |v| >= max + half a quantum of the top binade
        double half = ldexp(1.0, max_exp - mant_bits - 1);
        return fabs(v) >= max + half ? copysign(INFINITY, v) : copysign(max, v);
    }
    return r;
}

double test_ulp_error(aclDataType dt, double got, double ref) {
    if (isnan(got) || isnan(ref)) return isnan(got) && isnan(ref) ? 0.0 : INFINITY;
    if (isinf(got) || isinf(ref)) return got == ref ? 0.0 : INFINITY;
    int mant_bits, min_exp;
    switch (dt) {
    case ACL_FLOAT16:
        mant_bits = 10, min_exp = -14;
        break;
    case ACL_BF16:
        mant_bits = 7, min_exp = -126;
        break;
    default:
        mant_bits = 23, min_exp = -126;
        break;
    }
    int e;
    frexp(ref, &e);
    int exp = ref == 0 ? min_exp : e - 1;
    if (exp < min_exp) exp = min_exp;
    return fabs(got - ref) / ldexp(1.0, exp - mant_bits);
}

test_buf test_buf_new(const int64_t *dims, int nd, aclDataType dt, const int64_t *strides,
                      int64_t storage) {
    test_buf b = {0};
    int64_t st[8], s = 1;
    for (int d = nd - 1; d >= 0; d--) st[d] = strides ? strides[d] : s, s *= dims[d];
    if (storage < 0) storage = s;
    b.data = test_dev_alloc((size_t)storage * aclDataTypeSize(dt));
    b.t = aclCreateTensor(dims, (uint64_t)nd, dt, st, 0, ACL_FORMAT_ND, &storage, 1, b.data);
    return b;
}

void test_buf_free(test_buf *b) {
    aclDestroyTensor(b->t);
    aclrtFree(b->data);
}

void test_bufs_free(test_buf *const *bufs, size_t n) {
    for (size_t k = 0; k < n; k++) test_buf_free(bufs[k]);
}

aclTensor *test_tensor(const int64_t *dims, int ndim, aclDataType dt, void *data) {
    return aclCreateTensor(dims, (uint64_t)ndim, dt, NULL, 0, ACL_FORMAT_ND, dims, (uint64_t)ndim,
                           data);
}

aclnnStatus test_run(aclnnStatus phase1_status, uint64_t ws, aclOpExecutor *exec,
                     test_phase2_fn phase2, aclrtStream stream) {
    if (phase1_status != ACLNN_SUCCESS) return phase1_status;
    void *workspace = NULL;
    if (ws > 0 && aclrtMalloc(&workspace, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return ACLNN_ERR_INNER;
    aclnnStatus st = phase2(workspace, ws, exec, stream);
    if (st == ACLNN_SUCCESS && stream) st = aclrtSynchronizeStream(stream);
    if (workspace) aclrtFree(workspace);
    return st;
}

enum { GUARD = 64 };
static const uint32_t SENTINEL = 0x7fa5c3e1u;

gbuf gbuf_new(size_t n, size_t elem) {
    gbuf b = {0};
    size_t bytes = ((n + 2 * GUARD) * elem + 63) / 64 * 64;
    b.raw = aligned_alloc(64, bytes);
    if (!b.raw) abort();
    for (size_t i = 0; i < bytes / 4; i++) memcpy(b.raw + 4 * i, &SENTINEL, 4);
    b.elem = elem;
    b.n = n;
    b.data = b.raw + GUARD * elem;
    b.f = b.data;
    return b;
}

bool gbuf_guards_ok(const gbuf *b) {
    const unsigned char *s = (const unsigned char *)&SENTINEL;
    size_t gbytes = GUARD * b->elem, after = GUARD * b->elem + b->n * b->elem;
    for (size_t i = 0; i < gbytes; i++)
        if (b->raw[i] != s[i % 4] || b->raw[after + i] != s[(after + i) % 4]) return false;
    return true;
}

void gbuf_free(gbuf *b) { free(b->raw); }
