/* The gradient compressors (include/aclnnop/aclnn_grad_compress.h, an opgrad extension) through
 * the public API:
 *  - the residual identities: cast and top-k send + keep exactly y = fl32(x + residual)
 *    (asserted bit for bit), sign to one fp32 rounding of the residual;
 *  - values against float64 loops: round to nearest even, stochastic rounding's two candidates,
 *    its mean and its (seed, offset + i) keying, top-k's selection (ties: lower index first),
 *    sign's mean |y| scale and packed bits, the decompressors' sums over several workers;
 *  - statuses with the argument named; empty tensors; sizes past one chunk and odd sizes;
 *    strided views; 1 vs 2 threads bitwise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_grad_compress.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static aclTensor *t1(int64_t n, aclDataType dt, void *data) { return test_tensor(&n, 1, dt, data); }

static float *fbuf(int64_t n, test_rng *r, double lo, double hi) {
    float *p = test_dev_alloc((size_t)(n ? n : 1) * sizeof(float));
    if (r) test_fill(p, 0, n, ACL_FLOAT, r, lo, hi);
    return p;
}

static float h2f(uint16_t h, aclDataType dt) {
    return dt == ACL_BF16 ? og_bf16_to_f32(h) : og_f16_to_f32(h);
}

// ---- cast ------------------------------------------------------------------------------------
static aclnnStatus run_cast(aclTensor *x, aclTensor *r, bool sr, int64_t seed, int64_t off,
                            aclTensor *out) {
    aclnnStatus st;
    OP_RUN(st, aclnnGradCompressCastGetWorkspaceSize(x, r, sr, seed, off, out, &ws_, &ex_),
           aclnnGradCompressCast);
    return st;
}

// Round to nearest even: out = rne(fl32(x + r)); the residual identity out + r' = fl32(x + r)
// holds exactly in fp32 (and so in float64).
static void test_cast_nearest(void) {
    const aclDataType dts[] = {ACL_FLOAT16, ACL_BF16};
    for (int d = 0; d < 2; d++) {
        int64_t n = 40003; // past two chunks, odd
        test_rng rng;
        test_rng_seed(&rng, 7 + (uint64_t)d);
        float *x = fbuf(n, &rng, -3, 3), *r = fbuf(n, &rng, -0.01, 0.01);
        float *r0 = malloc((size_t)n * 4);
        memcpy(r0, r, (size_t)n * 4);
        uint16_t *o = test_dev_alloc((size_t)n * 2);
        aclTensor *tx = t1(n, ACL_FLOAT, x), *tr = t1(n, ACL_FLOAT, r), *to = t1(n, dts[d], o);
        CHECK_EQ(run_cast(tx, tr, false, 0, 0, to), ACLNN_SUCCESS);
        int64_t bad = 0, badid = 0;
        for (int64_t i = 0; i < n; i++) {
            float y = x[i] + r0[i];
            double want = test_round_to(dts[d], (double)y);
            bad += (double)h2f(o[i], dts[d]) != want;
            badid += (double)h2f(o[i], dts[d]) + (double)r[i] != (double)y;
        }
        CHECK_EQ(bad, 0);
        CHECK_EQ(badid, 0);
        // no residual: out = rne(x), x untouched
        CHECK_EQ(run_cast(tx, NULL, false, 0, 0, to), ACLNN_SUCCESS);
        bad = 0;
        for (int64_t i = 0; i < n; i++)
            bad += (double)h2f(o[i], dts[d]) != test_round_to(dts[d], (double)x[i]);
        CHECK_EQ(bad, 0);
        aclDestroyTensor(tx), aclDestroyTensor(tr), aclDestroyTensor(to);
        free(r0);
    }
}

// Stochastic rounding: every result is one of y's two neighbours (y itself when representable),
// the residual identity is exact, the mean over many draws approaches y, the draw of element i
// depends on (seed, offset + i) only, and the thread count changes nothing.
static void test_cast_stochastic(void) {
    const aclDataType dts[] = {ACL_FLOAT16, ACL_BF16};
    for (int d = 0; d < 2; d++) {
        aclDataType dt = dts[d];
        int64_t n = 50001;
        test_rng rng;
        test_rng_seed(&rng, 11 + (uint64_t)d);
        float *x = fbuf(n, &rng, -2, 2), *r = fbuf(n, NULL, 0, 0);
        uint16_t *o = test_dev_alloc((size_t)n * 2), *o2 = test_dev_alloc((size_t)n * 2);
        aclTensor *tx = t1(n, ACL_FLOAT, x), *tr = t1(n, ACL_FLOAT, r), *to = t1(n, dt, o),
                  *to2 = t1(n, dt, o2);
        CHECK_EQ(run_cast(tx, tr, true, 1234, 99, to), ACLNN_SUCCESS);
        int64_t bad = 0, badid = 0, up = 0;
        for (int64_t i = 0; i < n; i++) {
            double y = x[i], got = h2f(o[i], dt), rn = test_round_to(dt, y);
            // the neighbours: rn and the next one on y's other side
            bool ok = got == rn || (rn != y && fabs(got - y) < fabs(got - rn) + fabs(rn - y) &&
                                    (got - y) * (rn - y) < 0);
            bad += !ok;
            badid += got + (double)r[i] != y;
            up += fabs(got) > fabs(y);
        }
        CHECK_EQ(bad, 0);
        CHECK_EQ(badid, 0);
        CHECKF(up > n / 10 && up < n * 9 / 10, "rounded up %lld of %lld", (long long)up,
               (long long)n);
        // determinism, threads, seed and offset
        opgrad_set_num_threads(1);
        CHECK_EQ(run_cast(tx, NULL, true, 1234, 99, to2), ACLNN_SUCCESS);
        opgrad_set_num_threads(2);
        CHECK(memcmp(o, o2, (size_t)n * 2) == 0);
        CHECK_EQ(run_cast(tx, NULL, true, 1235, 99, to2), ACLNN_SUCCESS);
        CHECK(memcmp(o, o2, (size_t)n * 2) != 0);
        CHECK_EQ(run_cast(tx, NULL, true, 1234, 100, to2), ACLNN_SUCCESS);
        CHECK(memcmp(o, o2, (size_t)n * 2) != 0);
        // element i of a tensor starting at element 7 with offset 99 + 7 draws as before
        int64_t m = n - 7;
        aclTensor *tx7 = t1(m, ACL_FLOAT, x + 7), *to7 = t1(m, dt, o2);
        CHECK_EQ(run_cast(tx7, NULL, true, 1234, 106, to7), ACLNN_SUCCESS);
        CHECK(memcmp(o + 7, o2, (size_t)m * 2) == 0);
        aclDestroyTensor(tx7), aclDestroyTensor(to7);
        // unbiased: one value repeated; the mean of its roundings approaches it
        int64_t k = 1 << 16;
        float *c = fbuf(k, NULL, 0, 0);
        uint16_t *oc = test_dev_alloc((size_t)k * 2);
        float v = dt == ACL_BF16 ? 1.0f + 0x1p-9f : 1.0f + 0x1p-12f; // 1/4 and 1/2 of a gap
        for (int64_t i = 0; i < k; i++) c[i] = v;
        aclTensor *tc = t1(k, ACL_FLOAT, c), *toc = t1(k, dt, oc);
        CHECK_EQ(run_cast(tc, NULL, true, 5, 0, toc), ACLNN_SUCCESS);
        double mean = 0;
        for (int64_t i = 0; i < k; i++) mean += h2f(oc[i], dt);
        mean /= (double)k;
        double gap = dt == ACL_BF16 ? 0x1p-7 : 0x1p-10, p = (v - 1.0) / gap;
        // the count of round-ups is binomial(k, p): 6 standard deviations
        CHECKF(fabs(mean - v) < 6 * gap * sqrt(p * (1 - p) / (double)k), "mean %.9g vs %.9g", mean,
               (double)v);
        aclDestroyTensor(tc), aclDestroyTensor(toc);
        aclDestroyTensor(tx), aclDestroyTensor(tr), aclDestroyTensor(to), aclDestroyTensor(to2);
    }
}

// A transposed (strided) fp16 x and residual, fp16 input widened exactly.
static void test_cast_strided(void) {
    int64_t R = 37, C = 53, n = R * C;
    test_rng rng;
    test_rng_seed(&rng, 3);
    uint16_t *x = test_dev_alloc((size_t)n * 2), *o = test_dev_alloc((size_t)n * 2);
    test_fill(x, 0, n, ACL_FLOAT16, &rng, -100, 100);
    float *r = fbuf(n, &rng, -0.5, 0.5), *r0 = malloc((size_t)n * 4);
    memcpy(r0, r, (size_t)n * 4);
    int64_t dims[] = {C, R}, strides[] = {1, C}, cdims[] = {C, R};
    aclTensor *tx = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 0, ACL_FORMAT_ND, dims, 2, x);
    aclTensor *tr = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, r);
    aclTensor *to = test_tensor(cdims, 2, ACL_BF16, o);
    CHECK_EQ(run_cast(tx, tr, false, 0, 0, to), ACLNN_SUCCESS);
    int64_t bad = 0;
    for (int64_t i = 0; i < C; i++)
        for (int64_t j = 0; j < R; j++) {
            int64_t src = j * C + i; // element (i, j) of the view
            float y = og_f16_to_f32(x[src]) + r0[src];
            double got = og_bf16_to_f32(o[i * R + j]);
            bad += got != test_round_to(ACL_BF16, y) || got + (double)r[src] != (double)y;
        }
    CHECK_EQ(bad, 0);
    aclDestroyTensor(tx), aclDestroyTensor(tr), aclDestroyTensor(to);
    free(r0);
}

// ---- top-k -----------------------------------------------------------------------------------
static aclnnStatus run_topk(aclTensor *x, aclTensor *r, aclTensor *v, aclTensor *ix) {
    aclnnStatus st;
    OP_RUN(st, aclnnGradCompressTopKGetWorkspaceSize(x, r, v, ix, &ws_, &ex_),
           aclnnGradCompressTopK);
    return st;
}

static const float *cmp_y;
static int by_mag(const void *a, const void *b) { // |y| descending, then index ascending
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    float u = fabsf(cmp_y[i]), v = fabsf(cmp_y[j]);
    if (u != v) return u > v ? -1 : 1;
    return i < j ? -1 : 1;
}
static int by_index(const void *a, const void *b) {
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    return i < j ? -1 : i > j;
}

// The k largest |y| against a full sort, with values quantized so that ties are many.
static void topk_case(int64_t n, int64_t k, double quantum, uint64_t seed) {
    test_rng rng;
    test_rng_seed(&rng, seed);
    float *x = fbuf(n, &rng, -1, 1), *r = fbuf(n, &rng, -0.25, 0.25);
    for (int64_t i = 0; i < n; i++)
        if (quantum > 0) x[i] = (float)(quantum * floor(x[i] / quantum)), r[i] = 0;
    float *y = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; i < n; i++) y[i] = x[i] + r[i];
    float *v = fbuf(k, NULL, 0, 0);
    int64_t *ix = test_dev_alloc((size_t)(k ? k : 1) * 8);
    aclTensor *tx = t1(n, ACL_FLOAT, x), *tr = t1(n, ACL_FLOAT, r), *tv = t1(k, ACL_FLOAT, v),
              *ti = t1(k, ACL_INT64, ix);
    CHECK_EQ(run_topk(tx, tr, tv, ti), ACLNN_SUCCESS);
    int64_t *ord = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t i = 0; i < n; i++) ord[i] = i;
    cmp_y = y;
    qsort(ord, (size_t)n, 8, by_mag);
    qsort(ord, (size_t)k, 8, by_index);
    int64_t bad = 0, badr = 0;
    for (int64_t j = 0; j < k; j++) bad += ix[j] != ord[j] || v[j] != y[ord[j]];
    // residual: y with the sent entries zeroed, so sent + residual = y exactly
    char *sent = calloc((size_t)(n ? n : 1), 1);
    for (int64_t j = 0; j < k; j++) sent[ord[j]] = 1;
    for (int64_t i = 0; i < n; i++) badr += sent[i] ? r[i] != 0 : r[i] != y[i];
    CHECKF(bad == 0 && badr == 0, "n %lld k %lld: %lld wrong entries, %lld wrong residuals",
           (long long)n, (long long)k, (long long)bad, (long long)badr);
    aclDestroyTensor(tx), aclDestroyTensor(tr), aclDestroyTensor(tv), aclDestroyTensor(ti);
    free(y), free(ord), free(sent);
}

static void test_topk_values(void) {
    topk_case(1, 1, 0, 1);
    topk_case(10, 3, 0, 2);
    topk_case(1000, 10, 0, 3);
    topk_case(1000, 0, 0, 4);
    topk_case(1000, 1000, 0, 5);
    topk_case(100003, 1000, 0, 6);       // 1 %, several chunks
    topk_case(100003, 5000, 1.0 / 8, 7); // 17 distinct magnitudes: ties span chunks
    topk_case(70001, 33, 1.0 / 1024, 8);
}

// fp16 x, bf16 values, no residual, 1 vs 2 threads bitwise; a sign change keeps the order.
static void test_topk_dtypes_threads(void) {
    int64_t n = 60001, k = 601;
    test_rng rng;
    test_rng_seed(&rng, 21);
    uint16_t *x = test_dev_alloc((size_t)n * 2), *v = test_dev_alloc((size_t)k * 2),
             *v2 = test_dev_alloc((size_t)k * 2);
    test_fill(x, 0, n, ACL_FLOAT16, &rng, -10, 10);
    int64_t *ix = test_dev_alloc((size_t)k * 8), *ix2 = test_dev_alloc((size_t)k * 8);
    aclTensor *tx = t1(n, ACL_FLOAT16, x), *tv = t1(k, ACL_BF16, v), *ti = t1(k, ACL_INT64, ix),
              *tv2 = t1(k, ACL_BF16, v2), *ti2 = t1(k, ACL_INT64, ix2);
    CHECK_EQ(run_topk(tx, NULL, tv, ti), ACLNN_SUCCESS);
    opgrad_set_num_threads(1);
    CHECK_EQ(run_topk(tx, NULL, tv2, ti2), ACLNN_SUCCESS);
    opgrad_set_num_threads(2);
    CHECK(memcmp(v, v2, (size_t)k * 2) == 0 && memcmp(ix, ix2, (size_t)k * 8) == 0);
    float thr = INFINITY;
    for (int64_t j = 0; j < k; j++) {
        CHECK(j == 0 || ix[j] > ix[j - 1]);
        float xv = og_f16_to_f32(x[ix[j]]);
        CHECK(og_bf16_to_f32(v[j]) == test_round_to(ACL_BF16, xv));
        if (fabsf(xv) < thr) thr = fabsf(xv);
    }
    int64_t above = 0; // nothing unsent is larger than the smallest sent
    for (int64_t i = 0; i < n; i++) above += fabsf(og_f16_to_f32(x[i])) > thr;
    CHECK(above < k);
    aclDestroyTensor(tx), aclDestroyTensor(tv), aclDestroyTensor(ti), aclDestroyTensor(tv2),
        aclDestroyTensor(ti2);
}

// Two workers' (values, indices) concatenated: a shared index sums, in order.
static void test_decompress_topk(void) {
    float v[] = {1.5f, -2, 4, 0.25f, 3, 100};
    int64_t ix[] = {3, 0, 6, 3, 9, 10}; // 10 is outside [0, 10): skipped
    float *dv = test_dev_alloc(sizeof v), *o = test_dev_alloc(10 * 4);
    int64_t *di = test_dev_alloc(sizeof ix);
    memcpy(dv, v, sizeof v), memcpy(di, ix, sizeof ix);
    for (int i = 0; i < 10; i++) o[i] = 7; // overwritten, not accumulated into
    aclTensor *tv = t1(6, ACL_FLOAT, dv), *ti = t1(6, ACL_INT64, di), *to = t1(10, ACL_FLOAT, o);
    aclnnStatus st;
    OP_RUN(st, aclnnGradDecompressTopKGetWorkspaceSize(tv, ti, to, &ws_, &ex_),
           aclnnGradDecompressTopK);
    CHECK_EQ(st, ACLNN_SUCCESS);
    float want[10] = {-2, 0, 0, 1.75f, 0, 0, 4, 0, 0, 3};
    for (int i = 0; i < 10; i++) CHECKF(o[i] == want[i], "out[%d] = %g", i, o[i]);
    aclDestroyTensor(tv), aclDestroyTensor(ti), aclDestroyTensor(to);
}

// ---- sign ------------------------------------------------------------------------------------
static aclnnStatus run_sign(aclTensor *x, aclTensor *r, aclTensor *b, aclTensor *s) {
    aclnnStatus st;
    OP_RUN(st, aclnnGradCompressSignGetWorkspaceSize(x, r, b, s, &ws_, &ex_),
           aclnnGradCompressSign);
    return st;
}

static void sign_case(int64_t n, uint64_t seed) {
    test_rng rng;
    test_rng_seed(&rng, seed);
    float *x = fbuf(n, &rng, -1, 1), *r = fbuf(n, &rng, -0.3, 0.3);
    if (n > 2) x[1] = 0, r[1] = 0, x[2] = -0.0f, r[2] = -0.0f; // +0 and -0 send +scale
    float *y = malloc((size_t)(n ? n : 1) * 4);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) y[i] = x[i] + r[i], sum += fabs((double)y[i]);
    int64_t nb = (n + 7) / 8;
    uint8_t *b = test_dev_alloc((size_t)(nb ? nb : 1));
    memset(b, 0xFF, (size_t)(nb ? nb : 1)); // the padding bits must come back 0
    float *s = fbuf(1, NULL, 0, 0);
    aclTensor *tx = t1(n, ACL_FLOAT, x), *tr = t1(n, ACL_FLOAT, r), *tb = t1(nb, ACL_UINT8, b),
              *ts = t1(1, ACL_FLOAT, s);
    CHECK_EQ(run_sign(tx, tr, tb, ts), ACLNN_SUCCESS);
    double scale = n ? sum / (double)n : 0;
    CHECKF(fabs(s[0] - scale) <= 0.5 * test_ulp32(scale) + 1e-12 * scale, "scale %.9g vs %.9g",
           (double)s[0], scale);
    int64_t bad = 0, badr = 0;
    for (int64_t i = 0; i < n; i++) {
        bool bit = (b[i / 8] >> (i % 8)) & 1;
        bad += bit != (y[i] >= 0);
        double sent = bit ? s[0] : -s[0], want = (double)y[i] - sent;
        // the residual is y - sent rounded once to fp32
        badr += fabs(r[i] - want) > 0.5 * test_ulp32(want);
    }
    for (int64_t i = n; i < nb * 8; i++) bad += (b[i / 8] >> (i % 8)) & 1;
    CHECKF(bad == 0 && badr == 0, "n %lld: %lld bad bits, %lld bad residuals", (long long)n,
           (long long)bad, (long long)badr);
    aclDestroyTensor(tx), aclDestroyTensor(tr), aclDestroyTensor(tb), aclDestroyTensor(ts);
    free(y);
}

static void test_sign_values(void) {
    sign_case(1, 1);
    sign_case(13, 2);
    sign_case(16384 * 3 + 5, 3);
    sign_case(0, 4);
}

// Two workers: out = (bit ? s0 : -s0) + (bit ? s1 : -s1); 1 vs 2 threads of the compressor.
static void test_decompress_sign(void) {
    int64_t n = 20001, nb = (n + 7) / 8;
    test_rng rng;
    test_rng_seed(&rng, 9);
    float *x = fbuf(2 * n, &rng, -1, 1), *s = fbuf(2, NULL, 0, 0), *o = fbuf(n, NULL, 0, 0);
    uint8_t *b = test_dev_alloc((size_t)(2 * nb)), *b1 = test_dev_alloc((size_t)nb);
    float *s1 = fbuf(1, NULL, 0, 0);
    for (int w = 0; w < 2; w++) {
        aclTensor *tx = t1(n, ACL_FLOAT, x + w * n), *tb = t1(nb, ACL_UINT8, b + w * nb),
                  *ts = t1(1, ACL_FLOAT, s + w);
        CHECK_EQ(run_sign(tx, NULL, tb, ts), ACLNN_SUCCESS);
        opgrad_set_num_threads(1);
        aclTensor *tb1 = t1(nb, ACL_UINT8, b1), *ts1 = t1(1, ACL_FLOAT, s1);
        CHECK_EQ(run_sign(tx, NULL, tb1, ts1), ACLNN_SUCCESS);
        opgrad_set_num_threads(2);
        CHECK(memcmp(b1, b + w * nb, (size_t)nb) == 0 && s1[0] == s[w]);
        aclDestroyTensor(tx), aclDestroyTensor(tb), aclDestroyTensor(ts), aclDestroyTensor(tb1),
            aclDestroyTensor(ts1);
    }
    aclTensor *tb = t1(2 * nb, ACL_UINT8, b), *ts = t1(2, ACL_FLOAT, s), *to = t1(n, ACL_FLOAT, o);
    aclnnStatus st;
    OP_RUN(st, aclnnGradDecompressSignGetWorkspaceSize(tb, ts, to, &ws_, &ex_),
           aclnnGradDecompressSign);
    CHECK_EQ(st, ACLNN_SUCCESS);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float a = x[i] >= 0 ? s[0] : -s[0], c = x[n + i] >= 0 ? s[1] : -s[1];
        bad += o[i] != a + c;
    }
    CHECK_EQ(bad, 0);
    aclDestroyTensor(tb), aclDestroyTensor(ts), aclDestroyTensor(to);
}

// ---- statuses --------------------------------------------------------------------------------
static void test_status(void) {
    float *x = fbuf(16, NULL, 0, 0), *r = fbuf(16, NULL, 0, 0);
    uint16_t *h = test_dev_alloc(64);
    int64_t *ix = test_dev_alloc(64);
    uint8_t *b = test_dev_alloc(8);
    aclTensor *tx = t1(16, ACL_FLOAT, x), *tr = t1(16, ACL_FLOAT, r), *tr8 = t1(8, ACL_FLOAT, r),
              *th = t1(16, ACL_FLOAT16, h), *tf = t1(16, ACL_FLOAT, r),
              *tr16 = t1(16, ACL_FLOAT16, h);
    uint64_t ws;
    aclOpExecutor *ex;
    // cast
    CHECK_EQ(aclnnGradCompressCastGetWorkspaceSize(NULL, tr, false, 0, 0, th, &ws, &ex), 161001);
    CHECK_MSG("x");
    CHECK_EQ(aclnnGradCompressCastGetWorkspaceSize(tx, tr, false, 0, 0, tf, &ws, &ex), 161002);
    CHECK_MSG("float16 or bfloat16");
    CHECK_EQ(aclnnGradCompressCastGetWorkspaceSize(tx, tr16, false, 0, 0, th, &ws, &ex), 161002);
    CHECK_MSG("residualRef");
    CHECK_EQ(aclnnGradCompressCastGetWorkspaceSize(tx, tr8, false, 0, 0, th, &ws, &ex), 161002);
    CHECK_MSG("residualRef");
    // top-k
    aclTensor *v4 = t1(4, ACL_FLOAT, r + 8), *i4 = t1(4, ACL_INT64, ix), *i3 = t1(3, ACL_INT64, ix),
              *i4f = t1(4, ACL_FLOAT, r), *v17 = NULL;
    int64_t d17 = 17;
    v17 = test_tensor(&d17, 1, ACL_FLOAT, test_dev_alloc(17 * 4));
    CHECK_EQ(aclnnGradCompressTopKGetWorkspaceSize(tx, tr, v4, NULL, &ws, &ex), 161001);
    CHECK_MSG("indicesOut");
    CHECK_EQ(aclnnGradCompressTopKGetWorkspaceSize(tx, tr, v4, i3, &ws, &ex), 161002);
    CHECK_MSG("indicesOut");
    CHECK_EQ(aclnnGradCompressTopKGetWorkspaceSize(tx, tr, v4, i4f, &ws, &ex), 161002);
    CHECK_MSG("int64");
    aclTensor *i17 = t1(17, ACL_INT64, test_dev_alloc(17 * 8));
    CHECK_EQ(aclnnGradCompressTopKGetWorkspaceSize(tx, tr, v17, i17, &ws, &ex), 161002);
    CHECK_MSG("k = 17");
    CHECK_EQ(aclnnGradDecompressTopKGetWorkspaceSize(v4, i3, tx, &ws, &ex), 161002);
    CHECK_MSG("indices");
    // sign
    aclTensor *b2 = t1(2, ACL_UINT8, b), *b3 = t1(3, ACL_UINT8, b), *s1 = t1(1, ACL_FLOAT, r),
              *s2 = t1(2, ACL_FLOAT, r), *b4 = t1(4, ACL_UINT8, b), *s1h = t1(1, ACL_FLOAT16, h);
    CHECK_EQ(aclnnGradCompressSignGetWorkspaceSize(tx, tr, b3, s1, &ws, &ex), 161002);
    CHECK_MSG("bitsOut");
    CHECK_EQ(aclnnGradCompressSignGetWorkspaceSize(tx, tr, b2, s2, &ws, &ex), 161002);
    CHECK_MSG("scaleOut");
    CHECK_EQ(aclnnGradCompressSignGetWorkspaceSize(tx, tr, b2, s1h, &ws, &ex), 161002);
    CHECK_MSG("scaleOut");
    CHECK_EQ(aclnnGradDecompressSignGetWorkspaceSize(b2, s2, tx, &ws, &ex), 161002);
    CHECK_MSG("bits");
    CHECK_EQ(aclnnGradDecompressSignGetWorkspaceSize(b4, s2, tx, &ws, &ex), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(ex);
    // a stride-0 view of 2^46 elements: more chunks than one call counts
    int64_t huge = (int64_t)1 << 46, zero = 0;
    aclTensor *tbig = aclCreateTensor(&huge, 1, ACL_FLOAT, &zero, 0, ACL_FORMAT_ND, &huge, 1, x);
    CHECK_EQ(aclnnGradCompressCastGetWorkspaceSize(tbig, NULL, false, 0, 0, tbig, &ws, &ex),
             161002);
    CHECK_MSG("too many elements");
    aclDestroyTensor(tbig);
    // two outputs over one buffer
    CHECK_EQ(aclnnGradCompressSignGetWorkspaceSize(tx, tr, b2, tr, &ws, &ex), 161002);
    aclTensor *all[] = {tx,  tr,  tr8, th, tf, tr16, v4, i4, i3,
                        i4f, v17, i17, b2, b3, s1,   s2, b4, s1h};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
}

static void test_empty(void) {
    float *p = fbuf(1, NULL, 0, 0);
    p[0] = 5;
    int64_t z = 0;
    aclTensor *e = test_tensor(&z, 1, ACL_FLOAT, p), *eh = test_tensor(&z, 1, ACL_FLOAT16, p),
              *ei = test_tensor(&z, 1, ACL_INT64, p), *eb = test_tensor(&z, 1, ACL_UINT8, p);
    float *s = fbuf(1, NULL, 0, 0);
    s[0] = 3;
    aclTensor *ts = t1(1, ACL_FLOAT, s);
    CHECK_EQ(run_cast(e, e, true, 1, 2, eh), ACLNN_SUCCESS);
    CHECK_EQ(run_topk(e, NULL, e, ei), ACLNN_SUCCESS);
    CHECK_EQ(run_sign(e, NULL, eb, ts), ACLNN_SUCCESS);
    CHECK(s[0] == 0);
    aclDestroyTensor(e), aclDestroyTensor(eh), aclDestroyTensor(ei), aclDestroyTensor(eb),
        aclDestroyTensor(ts);
}

// ---- orthonormalize --------------------------------------------------------------------------
static aclnnStatus run_orth(aclTensor *t, double eps) {
    aclnnStatus st;
    OP_RUN(st, aclnnGradOrthonormalizeGetWorkspaceSize(t, eps, &ws_, &ex_),
           aclnnGradOrthonormalize);
    return st;
}

// Columns of a random [n, 4] (transposed view) come out orthonormal and spanning the same space
// as before; a column repeating an earlier one becomes 0; statuses.
static void test_orthonormalize(void) {
    int64_t n = 1000, r = 4;
    test_rng rng;
    test_rng_seed(&rng, 31);
    float *p = fbuf(n * r, &rng, -1, 1), *p0 = malloc((size_t)(n * r) * 4);
    for (int64_t k = 0; k < n; k++)
        p[3 * n + k] = 2 * p[1 * n + k]; // [r, n] memory: col 3 = 2 col 1
    memcpy(p0, p, (size_t)(n * r) * 4);
    int64_t dims[] = {n, r}, strides[] = {1, n};
    aclTensor *t = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, p);
    CHECK_EQ(run_orth(t, 1e-4), ACLNN_SUCCESS);
    double worst = 0, zero = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = 0;
            for (int64_t k = 0; k < n; k++) d += (double)p[i * n + k] * p[j * n + k];
            worst = fmax(worst, fabs(d - (i == j)));
        }
    for (int64_t k = 0; k < n; k++) zero = fmax(zero, fabs(p[3 * n + k]));
    CHECKF(worst < 1e-6, "|Q^T Q - I| = %g", worst);
    CHECKF(zero == 0, "the dependent column is %g, not 0", zero);
    // column 0 is column 0 normalised
    double s = 0, e = 0;
    for (int64_t k = 0; k < n; k++) s += (double)p0[k] * p0[k];
    for (int64_t k = 0; k < n; k++) e = fmax(e, fabs(p[k] - p0[k] / sqrt(s)));
    CHECKF(e < 1e-7, "first column off by %g", e);
    aclDestroyTensor(t);
    free(p0);
    uint64_t ws;
    aclOpExecutor *ex;
    aclTensor *t1d = t1(4, ACL_FLOAT, p), *th = test_tensor(dims, 2, ACL_FLOAT16, p),
              *tc = test_tensor(dims, 2, ACL_FLOAT, p);
    CHECK_EQ(aclnnGradOrthonormalizeGetWorkspaceSize(NULL, 0, &ws, &ex), 161001);
    CHECK_MSG("pRef");
    CHECK_EQ(aclnnGradOrthonormalizeGetWorkspaceSize(t1d, 0, &ws, &ex), 161002);
    CHECK_EQ(aclnnGradOrthonormalizeGetWorkspaceSize(th, 0, &ws, &ex), 161002);
    CHECK_MSG("float32 and 2-D");
    CHECK_EQ(aclnnGradOrthonormalizeGetWorkspaceSize(tc, -1, &ws, &ex), 161002);
    CHECK_MSG("eps");
    int64_t wide_dims[] = {3, 4}; // more columns than rows: they cannot be orthonormal
    aclTensor *wide = test_tensor(wide_dims, 2, ACL_FLOAT, p);
    CHECK_EQ(aclnnGradOrthonormalizeGetWorkspaceSize(wide, 0, &ws, &ex), 161002);
    CHECK_MSG("[3, 4]; its columns r must be at most its rows n");
    aclDestroyTensor(wide);
    aclDestroyTensor(t1d), aclDestroyTensor(th), aclDestroyTensor(tc);
}

int main(void) {
    opgrad_set_num_threads(2);
    RUN(test_cast_nearest);
    RUN(test_cast_stochastic);
    RUN(test_cast_strided);
    RUN(test_topk_values);
    RUN(test_topk_dtypes_threads);
    RUN(test_decompress_topk);
    RUN(test_sign_values);
    RUN(test_decompress_sign);
    RUN(test_status);
    RUN(test_empty);
    RUN(test_orthonormalize);
    return test_summary();
}
