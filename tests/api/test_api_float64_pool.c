/* float64 pooling through the aclnn API (aclnnMaxPool2dWithIndices, aclnnAvgPool2d,
 * aclnnAdaptiveAvgPool2d and their backwards take DOUBLE: an opgrad extension). What is tested
 * here is what the checker's float64 rows (`opgrad check --op max_pool2d --dtype float64`, ...) do
 * not see:
 *  - the arithmetic is double end to end: values 2^-40 apart that fp32 would merge, sums in
 *    window order compared bit for bit;
 *  - an adaptive window's sum is compensated (1e16 + 1 - 1e16 + 1 = 2, not 1);
 *  - max pooling compares doubles: NaN propagates (the last NaN in window order, as fp32), ties
 *    take the first maximum, int64 indices;
 *  - strided float64 input and output planes give the bits of contiguous ones;
 *  - every ISA level and thread count gives the same bits (forwards and backwards);
 *  - a DOUBLE operand with a FLOAT one is refused (the family takes one dtype), naming the
 *    argument. */
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
#include "test.h"
#include "testutil.h"

static aclIntArray *arr(int64_t a, int64_t b) { return aclCreateIntArray((int64_t[]){a, b}, 2); }

// A tensor over data with the given strides (NULL: contiguous) in a storage of `storage` elements.
static aclTensor *view(const int64_t *dims, int nd, aclDataType dt, const int64_t *strides,
                       int64_t storage, void *data) {
    int64_t st[4], s = 1;
    for (int d = nd - 1; d >= 0; d--) st[d] = strides ? strides[d] : s, s *= dims[d];
    return aclCreateTensor(dims, (uint64_t)nd, dt, st, 0, ACL_FORMAT_ND, &storage, 1, data);
}

static aclnnStatus maxpool(const aclTensor *x, int64_t k, int64_t s, int64_t p,
                           const aclTensor *out, const aclTensor *idx) {
    aclIntArray *ka = arr(k, k), *sa = arr(s, s), *pa = arr(p, p), *da = arr(1, 1);
    aclnnStatus st;
    OP_RUN(st,
           aclnnMaxPool2dWithIndicesGetWorkspaceSize(x, ka, sa, pa, da, false, (aclTensor *)out,
                                                     (aclTensor *)idx, &ws_, &ex_),
           aclnnMaxPool2dWithIndices);
    aclDestroyIntArray(ka), aclDestroyIntArray(sa), aclDestroyIntArray(pa), aclDestroyIntArray(da);
    return st;
}

static aclnnStatus maxpool_bwd(const aclTensor *g, const aclTensor *x, const aclTensor *idx,
                               int64_t k, int64_t s, int64_t p, const aclTensor *gi) {
    aclIntArray *ka = arr(k, k), *sa = arr(s, s), *pa = arr(p, p), *da = arr(1, 1);
    aclnnStatus st;
    OP_RUN(st,
           aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(g, x, idx, ka, sa, pa, da, false,
                                                             (aclTensor *)gi, &ws_, &ex_),
           aclnnMaxPool2dWithIndicesBackward);
    aclDestroyIntArray(ka), aclDestroyIntArray(sa), aclDestroyIntArray(pa), aclDestroyIntArray(da);
    return st;
}

// Avg pool with square attributes and ceil mode off.
static aclnnStatus avgpool(const aclTensor *x, int64_t k, int64_t s, int64_t p, bool cpad,
                           int64_t div, const aclTensor *out) {
    aclIntArray *ka = arr(k, k), *sa = arr(s, s), *pa = arr(p, p);
    aclnnStatus st;
    OP_RUN(st,
           aclnnAvgPool2dGetWorkspaceSize(x, ka, sa, pa, false, cpad, div, 0, (aclTensor *)out,
                                          &ws_, &ex_),
           aclnnAvgPool2d);
    aclDestroyIntArray(ka), aclDestroyIntArray(sa), aclDestroyIntArray(pa);
    return st;
}

static aclnnStatus avgpool_bwd(const aclTensor *g, const aclTensor *x, int64_t k, int64_t s,
                               int64_t p, bool cpad, int64_t div, const aclTensor *gi) {
    aclIntArray *ka = arr(k, k), *sa = arr(s, s), *pa = arr(p, p);
    aclnnStatus st;
    OP_RUN(st,
           aclnnAvgPool2dBackwardGetWorkspaceSize(g, x, ka, sa, pa, false, cpad, div, 0,
                                                  (aclTensor *)gi, &ws_, &ex_),
           aclnnAvgPool2dBackward);
    aclDestroyIntArray(ka), aclDestroyIntArray(sa), aclDestroyIntArray(pa);
    return st;
}

static aclnnStatus adaptive(const aclTensor *x, int64_t ho, int64_t wo, const aclTensor *out) {
    aclIntArray *size = arr(ho, wo);
    aclnnStatus st;
    OP_RUN(st, aclnnAdaptiveAvgPool2dGetWorkspaceSize(x, size, (aclTensor *)out, &ws_, &ex_),
           aclnnAdaptiveAvgPool2d);
    aclDestroyIntArray(size);
    return st;
}

static aclnnStatus adaptive_bwd(const aclTensor *g, const aclTensor *x, const aclTensor *gi) {
    aclnnStatus st;
    OP_RUN(st, aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(g, x, (aclTensor *)gi, &ws_, &ex_),
           aclnnAdaptiveAvgPool2dBackward);
    return st;
}

// 1 + k 2^-40 (k = 0..15, distinct in double, all 1.0f in fp32) in a 4 x 4 plane: the 2 x 2 avg
// pool is the window-order double sum / 4, the max the largest; the gradients land unrounded.
static void test_double_end_to_end(void) {
    double x[16], out[4], gout[4] = {0.1, 0.2, 0.3, 0.7}, gi[16];
    int64_t idx[4];
    for (int k = 0; k < 16; k++) x[k] = 1 + k * 0x1p-40;
    int64_t xd[4] = {1, 1, 4, 4}, od[4] = {1, 1, 2, 2};
    aclTensor *tx = test_tensor(xd, 4, ACL_DOUBLE, x), *to = test_tensor(od, 4, ACL_DOUBLE, out);
    aclTensor *tg = test_tensor(od, 4, ACL_DOUBLE, gout), *tgi = test_tensor(xd, 4, ACL_DOUBLE, gi);
    aclTensor *ti = test_tensor(od, 4, ACL_INT64, idx);
    CHECK_EQ(avgpool(tx, 2, 2, 0, true, 0, to), ACLNN_SUCCESS);
    for (int oh = 0; oh < 2; oh++)
        for (int ow = 0; ow < 2; ow++) {
            const double *w = x + 8 * oh + 2 * ow; // the window's top-left element
            double want = (((w[0] + w[1]) + w[4]) + w[5]) / 4;
            CHECKF(out[2 * oh + ow] == want, "avg (%d, %d): %.17g, want %.17g", oh, ow,
                   out[2 * oh + ow], want);
        }
    CHECK_EQ(maxpool(tx, 2, 2, 0, to, ti), ACLNN_SUCCESS);
    for (int o = 0; o < 4; o++) {
        int64_t k = 8 * (o / 2) + 2 * (o % 2) + 5; // the window's bottom-right element
        CHECKF(out[o] == x[k] && idx[o] == k, "max %d: %.17g at %lld", o, out[o],
               (long long)idx[o]);
    }
    CHECK_EQ(maxpool_bwd(tg, tx, ti, 2, 2, 0, tgi), ACLNN_SUCCESS);
    for (int k = 0; k < 16; k++) {
        double want = k % 8 == 5 || k % 8 == 7 ? gout[(k / 8) * 2 + (k % 8 == 7)] : 0.0;
        CHECKF(gi[k] == want, "max gradInput[%d] = %.17g, want %.17g", k, gi[k], want);
    }
    CHECK_EQ(avgpool_bwd(tg, tx, 2, 2, 0, true, 0, tgi), ACLNN_SUCCESS);
    for (int k = 0; k < 16; k++) {
        double want = gout[(k / 8) * 2 + (k % 4) / 2] / 4;
        CHECKF(gi[k] == want, "avg gradInput[%d] = %.17g, want %.17g", k, gi[k], want);
    }
    aclTensor *all[] = {tx, to, tg, tgi, ti};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

// An adaptive window's sum is compensated: rows {1e16, 1} and {-1e16, 1} sum to 2 (a plain double
// sum in the same order gives 1), through a contiguous and a transposed (converted) plane.
static void test_adaptive_compensated(void) {
    double x[4] = {1e16, 1, -1e16, 1}, xt[4] = {1e16, -1e16, 1, 1}, out[1];
    int64_t xd[4] = {1, 1, 2, 2}, od[4] = {1, 1, 1, 1}, tst[4] = {4, 4, 1, 2};
    aclTensor *tx = test_tensor(xd, 4, ACL_DOUBLE, x), *to = test_tensor(od, 4, ACL_DOUBLE, out);
    aclTensor *txt = view(xd, 4, ACL_DOUBLE, tst, 4, xt);
    CHECK_EQ(adaptive(tx, 1, 1, to), ACLNN_SUCCESS);
    CHECKF(out[0] == 0.5, "global mean %.17g, want 0.5", out[0]);
    out[0] = 0;
    CHECK_EQ(adaptive(txt, 1, 1, to), ACLNN_SUCCESS);
    CHECKF(out[0] == 0.5, "global mean of the transposed plane %.17g, want 0.5", out[0]);
    aclDestroyTensor(tx), aclDestroyTensor(to), aclDestroyTensor(txt);
}

// NaN propagates through the double comparisons (the last NaN in window order wins the index, as
// in fp32); a tie keeps the first maximum; -inf is a value like any other.
static void test_max_nan_and_ties(void) {
    double x[16], out[4], gout[4] = {1, 2, 3, 4}, gi[16];
    int32_t idx[4];
    for (int k = 0; k < 16; k++) x[k] = -INFINITY;
    x[0] = NAN, x[5] = NAN;               // window (0, 0): NaN at 0 and 5, the last one wins
    x[2] = 7.5, x[3] = 7.5, x[7] = -1;    // window (0, 1): a tie at 2 and 3: the first
    x[9] = 0x1p-1074, x[13] = -0x1p-1074; // window (1, 0): the smallest subnormal
    int64_t xd[4] = {1, 1, 4, 4}, od[4] = {1, 1, 2, 2};
    aclTensor *tx = test_tensor(xd, 4, ACL_DOUBLE, x), *to = test_tensor(od, 4, ACL_DOUBLE, out);
    aclTensor *tg = test_tensor(od, 4, ACL_DOUBLE, gout), *tgi = test_tensor(xd, 4, ACL_DOUBLE, gi);
    aclTensor *ti = test_tensor(od, 4, ACL_INT32, idx);
    CHECK_EQ(maxpool(tx, 2, 2, 0, to, ti), ACLNN_SUCCESS);
    CHECKF(isnan(out[0]) && idx[0] == 5, "NaN window: %g at %d", out[0], idx[0]);
    CHECKF(out[1] == 7.5 && idx[1] == 2, "tie: %g at %d", out[1], idx[1]);
    CHECKF(out[2] == 0x1p-1074 && idx[2] == 9, "subnormal: %g at %d", out[2], idx[2]);
    CHECKF(out[3] == -INFINITY && idx[3] == 10, "all -inf: %g at %d", out[3], idx[3]);
    CHECK_EQ(maxpool_bwd(tg, tx, ti, 2, 2, 0, tgi), ACLNN_SUCCESS);
    CHECK(gi[5] == 1 && gi[2] == 2 && gi[9] == 3 && gi[10] == 4 && gi[0] == 0 && gi[3] == 0);
    aclTensor *all[] = {tx, to, tg, tgi, ti};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

enum { N = 2, C = 3, H = 21, W = 37, NX = N * C * H * W };

// The six float64 results of x and g (each NX doubles in res): avg out (3x3, stride 2, padding 1,
// padding not counted), avg gradInput, max out (3x3, stride 1, padding 1), max gradInput
// (indices from the max forward), adaptive out (5 x 7), adaptive gradInput. xs / rs: the
// strides of x and of the results (NULL: contiguous), in storages of NX elements.
static void run_all(const double *x, const double *g, double *res, const int64_t *xs,
                    const int64_t *rs) {
    int64_t xd[4] = {N, C, H, W}, ad[4] = {N, C, 11, 19}, md[4] = {N, C, H, W},
            dd[4] = {N, C, 5, 7};
    int64_t *idx = calloc(NX, sizeof *idx);
    aclTensor *tx = view(xd, 4, ACL_DOUBLE, xs, NX, (void *)x);
    aclTensor *ga = test_tensor(ad, 4, ACL_DOUBLE, (void *)g),
              *gm = test_tensor(md, 4, ACL_DOUBLE, (void *)g);
    aclTensor *gd = test_tensor(dd, 4, ACL_DOUBLE, (void *)g),
              *ti = test_tensor(md, 4, ACL_INT64, idx);
    const int64_t *shapes[6] = {ad, xd, md, xd, dd, xd};
    aclTensor *r[6];
    for (int k = 0; k < 6; k++)
        r[k] = view(shapes[k], 4, ACL_DOUBLE, shapes[k] == xd ? rs : NULL, NX, res + k * NX);
    CHECK_EQ(avgpool(tx, 3, 2, 1, false, 0, r[0]), ACLNN_SUCCESS);
    CHECK_EQ(avgpool_bwd(ga, tx, 3, 2, 1, false, 0, r[1]), ACLNN_SUCCESS);
    CHECK_EQ(maxpool(tx, 3, 1, 1, r[2], ti), ACLNN_SUCCESS);
    CHECK_EQ(maxpool_bwd(gm, tx, ti, 3, 1, 1, r[3]), ACLNN_SUCCESS);
    CHECK_EQ(adaptive(tx, 5, 7, r[4]), ACLNN_SUCCESS);
    CHECK_EQ(adaptive_bwd(gd, tx, r[5]), ACLNN_SUCCESS);
    for (int k = 0; k < 6; k++) aclDestroyTensor(r[k]);
    aclDestroyTensor(tx), aclDestroyTensor(ga), aclDestroyTensor(gm), aclDestroyTensor(gd);
    aclDestroyTensor(ti);
    free(idx);
}

// Every ISA level and thread count computes the same bits; a transposed input (rows and columns
// swapped in memory) and transposed gradInputs give the contiguous bits too.
static void test_bitwise_isa_threads_strides(void) {
    test_rng r;
    test_rng_seed(&r, 0xf64);
    double *x = malloc(NX * sizeof *x), *xt = malloc(NX * sizeof *xt), *g = malloc(NX * sizeof *g);
    test_fill(x, 0, NX, ACL_DOUBLE, &r, -3, 3);
    test_fill(g, 0, NX, ACL_DOUBLE, &r, -3, 3);
    for (int64_t p = 0; p < N * C; p++) // xt holds plane p transposed: (h, w) at w H + h
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++) xt[p * H * W + w * H + h] = x[p * H * W + h * W + w];
    double *ref = calloc(6 * NX, sizeof *ref), *got = calloc(6 * NX, sizeof *got);
    opgrad_isa top = opgrad_set_max_isa(OPGRAD_ISA_AMX);
    opgrad_set_max_isa(OPGRAD_ISA_SCALAR);
    run_all(x, g, ref, NULL, NULL);
    for (int isa = 1; isa <= test_best_isa(); isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        memset(got, 0, 6 * NX * sizeof *got);
        run_all(x, g, got, NULL, NULL);
        for (int k = 0; k < 6; k++)
            CHECKF(!memcmp(ref + k * NX, got + k * NX, NX * sizeof *got),
                   "result %d: ISA level %d differs from scalar", k, isa);
    }
    opgrad_set_max_isa(top);
    int threads = opgrad_get_num_threads();
    opgrad_set_num_threads(1);
    memset(got, 0, 6 * NX * sizeof *got);
    run_all(x, g, got, NULL, NULL);
    CHECKF(!memcmp(ref, got, 6 * NX * sizeof *got), "1 thread differs from %d", threads);
    opgrad_set_num_threads(threads);
    // transposed x and gradInputs: strides (C H W, H W, 1, H) over the transposed planes
    int64_t ts[4] = {C * H * W, H * W, 1, H};
    memset(got, 0, 6 * NX * sizeof *got);
    run_all(xt, g, got, ts, ts);
    for (int k = 0; k < 6; k += 2) // the forwards' outputs are contiguous
        CHECKF(!memcmp(ref + k * NX, got + k * NX, NX * sizeof *got), "strided: result %d", k);
    for (int k = 1; k < 6; k += 2) { // the gradInputs are transposed like x
        bool same = true;
        for (int64_t p = 0; p < N * C && same; p++)
            for (int64_t h = 0; h < H && same; h++)
                for (int64_t w = 0; w < W && same; w++)
                    same = !memcmp(&ref[k * NX + p * H * W + h * W + w],
                                   &got[k * NX + p * H * W + w * H + h], sizeof *got);
        CHECKF(same, "strided: gradInput %d", k);
    }
    free(x), free(xt), free(g), free(ref), free(got);
}

// The family takes one floating dtype per call: DOUBLE with FLOAT is refused, naming the argument.
static void test_mixed_refused(void) {
    double x[16], gd[4];
    float of[4], gf[4], gif[16];
    int32_t idx[4];
    int64_t xd[4] = {1, 1, 4, 4}, od[4] = {1, 1, 2, 2};
    memset(x, 0, sizeof x);
    aclTensor *tx = test_tensor(xd, 4, ACL_DOUBLE, x), *tof = test_tensor(od, 4, ACL_FLOAT, of);
    aclTensor *tgf = test_tensor(od, 4, ACL_FLOAT, gf), *tgd = test_tensor(od, 4, ACL_DOUBLE, gd);
    aclTensor *tgif = test_tensor(xd, 4, ACL_FLOAT, gif), *ti = test_tensor(od, 4, ACL_INT32, idx);
    aclIntArray *k2 = arr(2, 2), *s2 = arr(2, 2), *p0 = arr(0, 0), *d1 = arr(1, 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, k2, s2, p0, d1, false, tof, ti, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has dtype");
    CHECK_EQ(aclnnAvgPool2dBackwardGetWorkspaceSize(tgf, tx, k2, s2, p0, false, true, 0, 0, tgif,
                                                    &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput has dtype");
    CHECK_EQ(aclnnAvgPool2dBackwardGetWorkspaceSize(tgd, tx, k2, s2, p0, false, true, 0, 0, tgif,
                                                    &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradInput has dtype");
    CHECK_EQ(aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(tgd, tx, tgif, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has dtype");
    // float64 indices are not indices
    aclTensor *tid = test_tensor(od, 4, ACL_DOUBLE, gd);
    CHECK_EQ(
        aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx, k2, s2, p0, d1, false, tgd, tid, &ws, &ex),
        ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("supported: int32, int64");
    aclIntArray *arrs[] = {k2, s2, p0, d1};
    for (size_t k = 0; k < sizeof arrs / sizeof *arrs; k++) aclDestroyIntArray(arrs[k]);
    aclTensor *all[] = {tx, tof, tgf, tgd, tgif, ti, tid};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
}

int main(void) {
    RUN(test_double_end_to_end);
    RUN(test_adaptive_compensated);
    RUN(test_max_nan_and_ties);
    RUN(test_bitwise_isa_threads_strides);
    RUN(test_mixed_refused);
    return test_summary();
}
