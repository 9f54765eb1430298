/* The pooling operators through the public API (aclnnMaxPool2dWithIndices, aclnnAvgPool2d,
 * aclnnAdaptiveAvgPool2d and their backwards):
 *  - hand-checkable values: max-pool ties (the first maximum in window order, as PyTorch) and the
 *    indices' values (flat h W + w in the plane), overlapping windows whose gradients add up at
 *    one argmax, -inf padding, NaN propagation; avg-pool divisors with and without
 *    countIncludePad, divisorOverride, ceil-mode windows clipped to in + pad; adaptive windows
 *    that overlap (7 -> 3); ceil mode's dropped last window (5 -> 3, not 4);
 *  - int64 indices, a 3-d input, a transposed (strided) input, an empty batch;
 *  - bitwise the same backward on 1 and 3 threads (overlapping windows, bfloat16);
 *  - status paths: NULLs, dtypes, ranks, attribute lengths and ranges, shapes, a workspace too
 *    small. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_adaptive_avg_pool2d.h"
#include "aclnnop/aclnn_adaptive_avg_pool2d_backward.h"
#include "aclnnop/aclnn_avgpool2d.h"
#include "aclnnop/aclnn_avgpool2d_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static aclIntArray *arr(int n, int64_t a, int64_t b) {
    int64_t v[2] = {a, b};
    return aclCreateIntArray(v, (uint64_t)n);
}

// Max pool with square attributes (stride 0 entries = kernel).
static aclnnStatus maxpool(const aclTensor *x, int64_t k, int64_t s, int64_t p, int64_t d,
                           bool ceil_mode, const aclTensor *out, const aclTensor *idx) {
    aclIntArray *ka = arr(1, k, k), *sa = arr(s ? 1 : 0, s, s), *pa = arr(1, p, p),
                *da = arr(1, d, d);
    aclnnStatus st;
    OP_RUN(st,
           aclnnMaxPool2dWithIndicesGetWorkspaceSize(x, ka, sa, pa, da, ceil_mode, (aclTensor *)out,
                                                     (aclTensor *)idx, &ws_, &ex_),
           aclnnMaxPool2dWithIndices);
    aclDestroyIntArray(ka), aclDestroyIntArray(sa), aclDestroyIntArray(pa), aclDestroyIntArray(da);
    return st;
}

static aclnnStatus maxpool_bwd(const aclTensor *g, const aclTensor *x, const aclTensor *idx,
                               int64_t k, int64_t s, int64_t p, const aclTensor *gi) {
    aclIntArray *ka = arr(1, k, k), *sa = arr(1, s, s), *pa = arr(1, p, p), *da = arr(1, 1, 1);
    aclnnStatus st;
    OP_RUN(st,
           aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(g, x, idx, ka, sa, pa, da, false,
                                                             (aclTensor *)gi, &ws_, &ex_),
           aclnnMaxPool2dWithIndicesBackward);
    aclDestroyIntArray(ka), aclDestroyIntArray(sa), aclDestroyIntArray(pa), aclDestroyIntArray(da);
    return st;
}

static aclnnStatus avgpool(const aclTensor *x, int64_t k, int64_t s, int64_t p, bool ceil_mode,
                           bool cpad, int64_t div, const aclTensor *out) {
    aclIntArray *ka = arr(1, k, k), *sa = arr(1, s, s), *pa = arr(1, p, p);
    aclnnStatus st;
    OP_RUN(st,
           aclnnAvgPool2dGetWorkspaceSize(x, ka, sa, pa, ceil_mode, cpad, div, 0, (aclTensor *)out,
                                          &ws_, &ex_),
           aclnnAvgPool2d);
    aclDestroyIntArray(ka), aclDestroyIntArray(sa), aclDestroyIntArray(pa);
    return st;
}

static aclnnStatus avgpool_bwd(const aclTensor *g, const aclTensor *x, int64_t k, int64_t s,
                               int64_t p, bool ceil_mode, bool cpad, int64_t div,
                               const aclTensor *gi) {
    aclIntArray *ka = arr(1, k, k), *sa = arr(1, s, s), *pa = arr(1, p, p);
    aclnnStatus st;
    OP_RUN(st,
           aclnnAvgPool2dBackwardGetWorkspaceSize(g, x, ka, sa, pa, ceil_mode, cpad, div, 0,
                                                  (aclTensor *)gi, &ws_, &ex_),
           aclnnAvgPool2dBackward);
    aclDestroyIntArray(ka), aclDestroyIntArray(sa), aclDestroyIntArray(pa);
    return st;
}

static bool near(float a, double b) { return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b)); }

static void test_max_ties_and_indices(void) {
    // k2 s2 on 4x4 with ties: the first maximum in window order wins
    float x[16] = {1, 3, 3, 0, 2, 3, 1, 1, 0, 0, 5, 5, 0, 0, 5, 4}, out[4], gi[16];
    int32_t idx[4];
    int64_t xd[4] = {1, 1, 4, 4}, od[4] = {1, 1, 2, 2};
    aclTensor *tx = test_tensor(xd, 4, ACL_FLOAT, x), *to = test_tensor(od, 4, ACL_FLOAT, out);
    aclTensor *ti = test_tensor(od, 4, ACL_INT32, idx);
    CHECK_EQ(maxpool(tx, 2, 0, 0, 1, false, to, ti), ACLNN_SUCCESS);
    const float want[4] = {3, 3, 0, 5};
    const int32_t want_i[4] = {1, 2, 8, 10};
    for (int i = 0; i < 4; i++) {
        CHECKF(out[i] == want[i], "out[%d] = %g, want %g", i, out[i], want[i]);
        CHECKF(idx[i] == want_i[i], "indices[%d] = %d, want %d", i, idx[i], want_i[i]);
    }
    // the backward sends each gradient to its index
    float g[4] = {1, 2, 3, 4};
    aclTensor *tg = test_tensor(od, 4, ACL_FLOAT, g), *tgi = test_tensor(xd, 4, ACL_FLOAT, gi);
    CHECK_EQ(maxpool_bwd(tg, tx, ti, 2, 2, 0, tgi), ACLNN_SUCCESS);
    for (int i = 0; i < 16; i++) {
        float w = i == 1 ? 1 : i == 2 ? 2 : i == 8 ? 3 : i == 10 ? 4 : 0;
        CHECKF(gi[i] == w, "gradInput[%d] = %g, want %g", i, gi[i], w);
    }
    aclTensor *all[] = {tx, to, ti, tg, tgi};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

static void test_max_overlap_padding_nan(void) {
    // k3 s1 p1 on 3x3 of 0..8 (a 3-d input, int64 indices): each window's maximum is its
    // bottom-right element; the gradients of windows that share an argmax add up
    float x[9], out[9], gi[9], g[9];
    int64_t idx[9];
    for (int i = 0; i < 9; i++) x[i] = (float)i, g[i] = 1;
    int64_t d3[3] = {1, 3, 3};
    aclTensor *tx = test_tensor(d3, 3, ACL_FLOAT, x), *to = test_tensor(d3, 3, ACL_FLOAT, out);
    aclTensor *ti = test_tensor(d3, 3, ACL_INT64, idx);
    CHECK_EQ(maxpool(tx, 3, 1, 1, 1, false, to, ti), ACLNN_SUCCESS);
    for (int oh = 0; oh < 3; oh++)
        for (int ow = 0; ow < 3; ow++) {
            int64_t k = (oh < 2 ? oh + 1 : 2) * 3 + (ow < 2 ? ow + 1 : 2);
            CHECKF(idx[oh * 3 + ow] == k && out[oh * 3 + ow] == (float)k,
                   "(%d,%d): %g at %lld, want %lld", oh, ow, out[oh * 3 + ow],
                   (long long)idx[oh * 3 + ow], (long long)k);
        }
    aclTensor *tg = test_tensor(d3, 3, ACL_FLOAT, g), *tgi = test_tensor(d3, 3, ACL_FLOAT, gi);
    CHECK_EQ(maxpool_bwd(tg, tx, ti, 3, 1, 1, tgi), ACLNN_SUCCESS);
    const float want[9] = {0, 0, 0, 0, 1, 2, 0, 2, 4};
    for (int i = 0; i < 9; i++) CHECKF(gi[i] == want[i], "gradInput[%d] = %g", i, gi[i]);
    // padding is -inf, not 0: an all-negative input keeps its maximum
    float neg[4] = {-5, -7, -6, -8}, o1;
    int32_t i1;
    int64_t d2[4] = {1, 1, 2, 2}, d1[4] = {1, 1, 1, 1};
    aclTensor *tn = test_tensor(d2, 4, ACL_FLOAT, neg), *to1 = test_tensor(d1, 4, ACL_FLOAT, &o1);
    aclTensor *ti1 = test_tensor(d1, 4, ACL_INT32, &i1);
    CHECK_EQ(maxpool(tn, 3, 2, 1, 1, false, to1, ti1), ACLNN_SUCCESS);
    CHECK(o1 == -5 && i1 == 0);
    // NaN is the maximum (PyTorch's rule)
    neg[2] = NAN;
    CHECK_EQ(maxpool(tn, 3, 2, 1, 1, false, to1, ti1), ACLNN_SUCCESS);
    CHECK(isnan(o1) && i1 == 2);
    aclTensor *all[] = {tx, to, ti, tg, tgi, tn, to1, ti1};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

static void test_ceil_mode_shapes(void) {
    // k2 s2 p1 ceil on 5x5: ceil((5 + 2 - 2) / 2) + 1 = 4, but the 4th window would start at
    // 6 >= 5 + 1, in the padding alone: 3 (PyTorch gives 3 x 3)
    float x[25], o16[16], o9[9];
    int32_t i16[16], i9[9];
    for (int i = 0; i < 25; i++) x[i] = (float)i;
    int64_t xd[4] = {1, 1, 5, 5}, d4[4] = {1, 1, 4, 4}, d3[4] = {1, 1, 3, 3};
    aclTensor *tx = test_tensor(xd, 4, ACL_FLOAT, x);
    aclTensor *t16 = test_tensor(d4, 4, ACL_FLOAT, o16), *ti16 = test_tensor(d4, 4, ACL_INT32, i16);
    aclTensor *t9 = test_tensor(d3, 4, ACL_FLOAT, o9), *ti9 = test_tensor(d3, 4, ACL_INT32, i9);
    CHECK_EQ(maxpool(tx, 2, 2, 1, 1, true, t16, ti16), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has shape [1,1,4,4]; it must be [1,1,3,3]");
    CHECK_EQ(maxpool(tx, 2, 2, 1, 1, true, t9, ti9), ACLNN_SUCCESS);
    // windows start at -1, 1, 3: rows {0}, {1,2}, {3,4}
    const float want[9] = {0, 2, 4, 10, 12, 14, 20, 22, 24};
    for (int i = 0; i < 9; i++) CHECKF(o9[i] == want[i] && i9[i] == (int32_t)want[i], "out[%d]", i);
    aclTensor *all[] = {tx, t16, ti16, t9, ti9};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

static void test_avg_values(void) {
    // ones [1,1,3,3], k3 s2 p1 -> 2x2; window (0,0) covers 4 real elements of 9
    float one[9], out[4], gi[9], g[4] = {1, 1, 1, 1};
    for (int i = 0; i < 9; i++) one[i] = 1;
    int64_t xd[4] = {1, 1, 3, 3}, od[4] = {1, 1, 2, 2};
    aclTensor *tx = test_tensor(xd, 4, ACL_FLOAT, one), *to = test_tensor(od, 4, ACL_FLOAT, out);
    CHECK_EQ(avgpool(tx, 3, 2, 1, false, true, 0, to), ACLNN_SUCCESS);
    for (int i = 0; i < 4; i++)
        CHECKF(near(out[i], 4.0 / 9), "countIncludePad: out[%d] = %g", i, out[i]);
    CHECK_EQ(avgpool(tx, 3, 2, 1, false, false, 0, to), ACLNN_SUCCESS);
    for (int i = 0; i < 4; i++) CHECKF(out[i] == 1, "exclude: out[%d] = %g", i, out[i]);
    CHECK_EQ(avgpool(tx, 3, 2, 1, false, true, 2, to), ACLNN_SUCCESS);
    for (int i = 0; i < 4; i++) CHECKF(out[i] == 2, "divisorOverride: out[%d] = %g", i, out[i]);
    // the backward: each element gathers 1/9 from every window that holds it
    aclTensor *tg = test_tensor(od, 4, ACL_FLOAT, g), *tgi = test_tensor(xd, 4, ACL_FLOAT, gi);
    CHECK_EQ(avgpool_bwd(tg, tx, 3, 2, 1, false, true, 0, tgi), ACLNN_SUCCESS);
    const int windows[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    for (int i = 0; i < 9; i++)
        CHECKF(near(gi[i], windows[i] / 9.0), "gradInput[%d] = %g", i, gi[i]);
    // ceil mode, k2 s2 on 3x3 of 0..8: the last row/column windows hang off the edge and divide
    // by what lies inside in + pad (countIncludePad or not): [[2, 3.5], [6.5, 8]] (PyTorch's)
    float x[9];
    for (int i = 0; i < 9; i++) x[i] = (float)i;
    aclTensor *tx2 = test_tensor(xd, 4, ACL_FLOAT, x);
    const float want[4] = {2, 3.5f, 6.5f, 8};
    for (int cp = 0; cp < 2; cp++) {
        CHECK_EQ(avgpool(tx2, 2, 2, 0, true, cp, 0, to), ACLNN_SUCCESS);
        for (int i = 0; i < 4; i++) CHECKF(out[i] == want[i], "ceil: out[%d] = %g", i, out[i]);
    }
    aclTensor *all[] = {tx, to, tg, tgi, tx2};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

static void test_adaptive_values(void) {
    // 7 -> 3 rows: windows [0,3), [2,5), [4,7) (floor start, ceil end) overlap at rows 2 and 4
    float x[7], out[3], g[3] = {3, 3, 3}, gi[7];
    for (int i = 0; i < 7; i++) x[i] = (float)i;
    int64_t xd[4] = {1, 1, 7, 1}, od[4] = {1, 1, 3, 1};
    aclTensor *tx = test_tensor(xd, 4, ACL_FLOAT, x), *to = test_tensor(od, 4, ACL_FLOAT, out);
    aclIntArray *size = arr(2, 3, 1);
    aclnnStatus st;
    OP_RUN(st, aclnnAdaptiveAvgPool2dGetWorkspaceSize(tx, size, to, &ws_, &ex_),
           aclnnAdaptiveAvgPool2d);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(out[0] == 1 && out[1] == 3 && out[2] == 5);
    aclTensor *tg = test_tensor(od, 4, ACL_FLOAT, g), *tgi = test_tensor(xd, 4, ACL_FLOAT, gi);
    OP_RUN(st, aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(tg, tx, tgi, &ws_, &ex_),
           aclnnAdaptiveAvgPool2dBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    const float want[7] = {1, 1, 2, 1, 2, 1, 1};
    for (int i = 0; i < 7; i++) CHECKF(gi[i] == want[i], "gradInput[%d] = %g", i, gi[i]);
    aclDestroyIntArray(size);
    aclTensor *all[] = {tx, to, tg, tgi};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

static void test_strided_and_empty(void) {
    // a transposed view of x (x[h][w] at m[w * 5 + h]) pools like its contiguous copy, bf16
    enum { H = 5, W = 6 };
    uint16_t m[H * W], c[H * W];
    for (int h = 0; h < H; h++)
        for (int w = 0; w < W; w++) {
            uint16_t v = og_f32_to_bf16((float)((h * 7 + w * 3) % 11) - 5.0f);
            m[w * H + h] = v, c[h * W + w] = v;
        }
    int64_t xd[4] = {1, 1, H, W}, xs[4] = {H * W, H * W, 1, H}, od[4] = {1, 1, 3, 3};
    aclTensor *tv =
        aclCreateTensor(xd, 4, ACL_BF16, xs, 0, ACL_FORMAT_ND, (int64_t[]){1, 1, W, H}, 4, m);
    aclTensor *tc = test_tensor(xd, 4, ACL_BF16, c);
    uint16_t o1[9], o2[9];
    aclTensor *t1 = test_tensor(od, 4, ACL_BF16, o1), *t2 = test_tensor(od, 4, ACL_BF16, o2);
    CHECK_EQ(avgpool(tv, 3, 2, 1, false, false, 0, t1), ACLNN_SUCCESS);
    CHECK_EQ(avgpool(tc, 3, 2, 1, false, false, 0, t2), ACLNN_SUCCESS);
    CHECK(!memcmp(o1, o2, sizeof o1));
    // an empty batch is no work
    int64_t ed[4] = {0, 2, 4, 4}, eo[4] = {0, 2, 2, 2};
    float e1[1], e2[1];
    aclTensor *te = test_tensor(ed, 4, ACL_FLOAT, e1), *teo = test_tensor(eo, 4, ACL_FLOAT, e2);
    CHECK_EQ(avgpool(te, 2, 2, 0, false, true, 0, teo), ACLNN_SUCCESS);
    aclTensor *all[] = {tv, tc, t1, t2, te, teo};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

static void test_backward_deterministic(void) {
    // overlapping windows (k3 s1 p1 avg, k3 s2 p1 max) on bf16 [2, 5, 33, 31]: 1 vs 3 threads
    enum { N = 2, C = 5, H = 33, W = 31, HO = 17, WO = 16 };
    test_rng r;
    test_rng_seed(&r, 0x5eed);
    int64_t xd[4] = {N, C, H, W}, od[4] = {N, C, HO, WO};
    uint16_t *x = malloc(N * C * H * W * 2), *g = malloc(N * C * H * W * 2);
    uint16_t *a = malloc(N * C * H * W * 2), *b = malloc(N * C * H * W * 2);
    int32_t *idx = malloc(N * C * HO * WO * 4);
    uint16_t *o = malloc(N * C * HO * WO * 2);
    test_fill(x, 0, N * C * H * W, ACL_BF16, &r, -3, 3);
    test_fill(g, 0, N * C * H * W, ACL_BF16, &r, -3, 3);
    aclTensor *tx = test_tensor(xd, 4, ACL_BF16, x), *tg = test_tensor(xd, 4, ACL_BF16, g);
    aclTensor *ta = test_tensor(xd, 4, ACL_BF16, a), *tb = test_tensor(xd, 4, ACL_BF16, b);
    aclTensor *to = test_tensor(od, 4, ACL_BF16, o), *ti = test_tensor(od, 4, ACL_INT32, idx);
    aclTensor *tgo = test_tensor(od, 4, ACL_BF16, g);
    int threads = opgrad_get_num_threads();
    opgrad_set_num_threads(1);
    CHECK_EQ(avgpool_bwd(tg, tx, 3, 1, 1, false, false, 0, ta), ACLNN_SUCCESS);
    opgrad_set_num_threads(3);
    CHECK_EQ(avgpool_bwd(tg, tx, 3, 1, 1, false, false, 0, tb), ACLNN_SUCCESS);
    CHECK(!memcmp(a, b, N * C * H * W * 2));
    CHECK_EQ(maxpool(tx, 3, 2, 1, 1, false, to, ti), ACLNN_SUCCESS);
    opgrad_set_num_threads(1);
    CHECK_EQ(maxpool_bwd(tgo, tx, ti, 3, 2, 1, ta), ACLNN_SUCCESS);
    opgrad_set_num_threads(3);
    CHECK_EQ(maxpool_bwd(tgo, tx, ti, 3, 2, 1, tb), ACLNN_SUCCESS);
    CHECK(!memcmp(a, b, N * C * H * W * 2));
    opgrad_set_num_threads(threads);
    aclTensor *all[] = {tx, tg, ta, tb, to, ti, tgo};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
    free(x), free(g), free(a), free(b), free(idx), free(o);
}

// Every ISA level computes the same bits (the per-ISA inner loops touch each output once per tap;
// the 8-lane window sum's lanes are explicit): fp32 and bf16, forwards and backwards.
static void test_isa_levels_bitwise(void) {
    enum { N = 2, C = 3, H = 21, W = 37, N_X = N * C * H * W };
    test_rng r;
    test_rng_seed(&r, 0x15a);
    int64_t xd[4] = {N, C, H, W}, od[4] = {N, C, 11, 19}, ad[4] = {N, C, 1, 1};
    aclIntArray *one = arr(2, 1, 1);
    opgrad_isa top = opgrad_set_max_isa(OPGRAD_ISA_AMX);
    for (int dt = 0; dt < 2; dt++) {
        aclDataType t = dt ? ACL_BF16 : ACL_FLOAT;
        size_t es = dt ? 2 : 4;
        // results: avg out, avg gradInput, adaptive gradInput, adaptive out (scalar, then others)
        char *x = malloc(N_X * es), *g = malloc(N_X * es), *res[2];
        test_fill(x, 0, N_X, t, &r, -3, 3);
        test_fill(g, 0, N_X, t, &r, -3, 3);
        for (int k = 0; k < 2; k++) res[k] = calloc(4 * N_X, es);
        aclTensor *tx = test_tensor(xd, 4, t, x), *tg = test_tensor(od, 4, t, g);
        aclTensor *tga = test_tensor(ad, 4, t, g);
        for (int isa = 0; isa <= test_best_isa(); isa++) {
            if (!test_isa_available(isa)) continue;
            opgrad_set_max_isa((opgrad_isa)isa);
            char *o = res[isa == 0 ? 0 : 1];
            aclTensor *to = test_tensor(od, 4, t, o), *tgi = test_tensor(xd, 4, t, o + N_X * es);
            aclTensor *tagi = test_tensor(xd, 4, t, o + 2 * N_X * es);
            aclTensor *tao = test_tensor(ad, 4, t, o + 3 * N_X * es);
            CHECK_EQ(avgpool(tx, 3, 2, 1, false, false, 0, to), ACLNN_SUCCESS);
            CHECK_EQ(avgpool_bwd(tg, tx, 3, 2, 1, false, false, 0, tgi), ACLNN_SUCCESS);
            aclnnStatus st;
            OP_RUN(st, aclnnAdaptiveAvgPool2dGetWorkspaceSize(tx, one, tao, &ws_, &ex_),
                   aclnnAdaptiveAvgPool2d);
            CHECK_EQ(st, ACLNN_SUCCESS);
            OP_RUN(st, aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(tga, tx, tagi, &ws_, &ex_),
                   aclnnAdaptiveAvgPool2dBackward);
            CHECK_EQ(st, ACLNN_SUCCESS);
            if (isa > 0)
                CHECKF(!memcmp(res[0], res[1], 4 * N_X * es),
                       "dtype %d: ISA level %d differs from scalar", dt, isa);
            aclDestroyTensor(to), aclDestroyTensor(tgi), aclDestroyTensor(tao);
            aclDestroyTensor(tagi);
        }
        aclDestroyTensor(tx), aclDestroyTensor(tg), aclDestroyTensor(tga);
        free(x), free(g), free(res[0]), free(res[1]);
    }
    opgrad_set_max_isa(top);
    aclDestroyIntArray(one);
}

static void test_status_paths(void) {
    float x[32], out[8], gi[32];
    int32_t idx[8];
    int64_t xd[4] = {1, 2, 4, 4}, od[4] = {1, 2, 2, 2}, d2[2] = {4, 4};
    aclTensor *tx = test_tensor(xd, 4, ACL_FLOAT, x), *to = test_tensor(od, 4, ACL_FLOAT, out);
    aclTensor *ti = test_tensor(od, 4, ACL_INT32, idx), *tgi = test_tensor(xd, 4, ACL_FLOAT, gi);
    aclTensor *tf = test_tensor(od, 4, ACL_FLOAT, idx), *t2 = test_tensor(d2, 2, ACL_FLOAT, x);
    aclTensor *tint = test_tensor(xd, 4, ACL_INT32, x);
    memset(x, 0, sizeof x);
    aclIntArray *k2 = arr(1, 2, 2), *k3 = arr(2, 3, 3), *none = arr(0, 0, 0), *p0 = arr(1, 0, 0);
    aclIntArray *d1 = arr(1, 1, 1), *bad3 = aclCreateIntArray((int64_t[]){2, 2, 2}, 3);
    aclIntArray *zero = arr(1, 0, 0), *p2 = arr(1, 2, 2), *neg = arr(1, -1, -1);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    // NULLs
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(NULL, k2, none, p0, d1, false, to, ti, &ws, &ex),
        ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self");
    CHECK_EQ(aclnnAvgPool2dGetWorkspaceSize(tx, NULL, none, p0, false, true, 0, 0, to, &ws, &ex),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("kernelSize");
    // dtype, rank
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tint, k2, none, p0, d1, false, to, ti, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnAvgPool2dGetWorkspaceSize(t2, k2, none, p0, false, true, 0, 0, to, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank 2");
    // attributes: lengths and ranges
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, bad3, none, p0, d1, false, to, ti, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("kernelSize has 3 entries");
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, zero, none, p0, d1, false, to, ti, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("kernelSize[0] is 0");
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, k2, neg, p0, d1, false, to, ti, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("stride[0] is -1");
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, k2, none, p2, d1, false, to, ti, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("at most half the kernel size");
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, k2, none, p0, zero, false, to, ti, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dilation[0] is 0");
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, k2, none, none, d1, false, to, ti, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("padding has 0 entries");
    CHECK_EQ(aclnnAvgPool2dGetWorkspaceSize(tx, k2, none, p0, false, true, 0, 9, to, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("cubeMathType");
    // a kernel larger than the input: no window fits
    aclIntArray *k9 = arr(1, 9, 9);
    CHECK_EQ(aclnnAvgPool2dGetWorkspaceSize(tx, k9, none, p0, false, true, 0, 0, to, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("would be empty");
    // shapes and dtypes of the outputs
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, k2, none, p0, d1, false, to, tf, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("supported: int32, int64");
    CHECK_EQ(aclnnAvgPool2dGetWorkspaceSize(tx, k3, none, p0, false, true, 0, 0, to, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has shape");
    CHECK_EQ(aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(to, tx, ti, k2, none, p0, d1, false,
                                                               to, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradInput has shape");
    CHECK_EQ(aclnnAvgPool2dBackwardGetWorkspaceSize(tx, tx, k2, none, p0, false, true, 0, 0, tgi,
                                                    &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput has shape");
    // pooling in place is refused
    CHECK_EQ(aclnnAvgPool2dGetWorkspaceSize(tx, d1, none, p0, false, true, 0, 0, tx, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("cannot run in place");
    // adaptive: outputSize must have 2 positive entries
    CHECK_EQ(aclnnAdaptiveAvgPool2dGetWorkspaceSize(tx, k2, to, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("outputSize has 1 entries");
    aclIntArray *z2 = arr(2, 0, 2);
    CHECK_EQ(aclnnAdaptiveAvgPool2dGetWorkspaceSize(tx, z2, to, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("outputSize[0] is 0");
    CHECK_EQ(aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(to, tx, to, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has shape");
    // a workspace smaller than asked for is refused in phase 2 (bf16 needs a conversion buffer)
    uint16_t xb[32] = {0}, ob[8];
    aclTensor *txb = test_tensor(xd, 4, ACL_BF16, xb), *tob = test_tensor(od, 4, ACL_BF16, ob);
    CHECK_EQ(aclnnAvgPool2dGetWorkspaceSize(txb, k2, none, p0, false, true, 0, 0, tob, &ws, &ex),
             ACLNN_SUCCESS);
    CHECK(ws > 0);
    void *w = NULL;
    aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_EQ(aclnnAvgPool2d(w, ws - 1, ex, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("smaller than");
    CHECK_EQ(aclnnAvgPool2d(w, ws, ex, NULL), ACLNN_SUCCESS);
    aclrtFree(w);
    aclIntArray *arrs[] = {k2, k3, none, p0, d1, bad3, zero, p2, neg, k9, z2};
    for (size_t k = 0; k < sizeof arrs / sizeof *arrs; k++) aclDestroyIntArray(arrs[k]);
    aclTensor *all[] = {tx, to, ti, tgi, tf, t2, tint, txb, tob};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

int main(void) {
    RUN(test_max_ties_and_indices);
    RUN(test_max_overlap_padding_nan);
    RUN(test_ceil_mode_shapes);
    RUN(test_avg_values);
    RUN(test_adaptive_values);
    RUN(test_strided_and_empty);
    RUN(test_backward_deterministic);
    RUN(test_isa_levels_bitwise);
    RUN(test_status_paths);
    return test_summary();
}
