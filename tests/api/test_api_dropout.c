/* aclnnDropout and aclnnDropoutBackward through the public API:
 *  - the reference Philox4x32-10 (src/check/ref_dropout.c) against Random123's known answers;
 *  - the mask against the reference bit for bit (2^20 + 77 elements, several seeds and offsets,
 *    an offset whose blocks cross 2^32) on every ISA level the CPU has and on 1, 2 and 3 threads;
 *    the padding bits past numel are 0;
 *  - the keep rate over 2^20 elements within 6 binomial standard deviations for p = 0.1, 0.5,
 *    0.9; other seeds and other offsets give other masks;
 *  - out = input * bit / (1 - p) exactly (fp32), fp16 / bf16 rounded once; strided input;
 *    aclnn's special cases: p = 0 and train = false copy input, p = 1 writes zeros, neither
 *    touches maskOut; the backward with scale 0 / 1 / 1 / (1 - p), exact given the mask;
 *  - status paths: NULLs, dtypes, p outside [0, 1] or NaN, a mask of the wrong size, scale in
 *    (0, 1), shapes; empty tensors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_dropout.h"
#include "aclnnop/aclnn_dropout_backward.h"
#include "check/ref_dropout.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static int64_t mask_bytes(int64_t n) { return (n + 127) / 128 * 16; }

// Runs aclnnDropout on fp32 x[n] (contiguous); out and mask are caller buffers.
static aclnnStatus run_dropout(const float *x, int64_t n, double p, bool train, int64_t seed,
                               int64_t offset, float *out, uint8_t *mask) {
    int64_t mb = mask_bytes(n);
    aclTensor *tx = test_tensor(&n, 1, ACL_FLOAT, (void *)x),
              *ty = test_tensor(&n, 1, ACL_FLOAT, out);
    aclTensor *tm = test_tensor(&mb, 1, ACL_UINT8, mask);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnDropoutGetWorkspaceSize(tx, p, train, seed, offset, ty, tm, &ws, &ex);
    st = test_run(st, ws, ex, aclnnDropout, NULL);
    aclDestroyTensor(tx), aclDestroyTensor(ty), aclDestroyTensor(tm);
    return st;
}

static void test_philox_known_answers(void) {
    static const uint32_t ctr[3][4] = {{0, 0, 0, 0},
                                       {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                       {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    static const uint32_t key[3][2] = {
        {0, 0}, {0xffffffffu, 0xffffffffu}, {0xa4093822u, 0x299f31d0u}};
    static const uint32_t want[3][4] = {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
                                        {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
                                        {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
    for (int t = 0; t < 3; t++) {
        uint32_t out[4];
        og_ref_philox4x32_10(ctr[t], key[t], out);
        for (int k = 0; k < 4; k++)
            CHECKF(out[k] == want[t][k], "vector %d word %d: %08x", t, k, out[k]);
    }
    // through the operator: seed 0, offset 0, p = 0.5 keeps element i iff word i's top bit is 0
    float x[4] = {1, 1, 1, 1}, y[4];
    uint8_t m[16];
    CHECK_EQ(run_dropout(x, 4, 0.5, true, 0, 0, y, m), ACLNN_SUCCESS);
    CHECK_EQ(m[0], 0x1); // 6627e8d5 kept; e169c58d, bc57ac4c, 9b00dbd8 dropped
    CHECK(y[0] == 2.0f && y[1] == 0 && y[2] == 0 && y[3] == 0);
}

// The mask of (seed, offset, p) over n elements matches the reference on every ISA level and
// thread count; padding bits are 0.
static void check_mask_everywhere(int64_t n, double p, int64_t seed, int64_t offset) {
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
    int64_t mb = mask_bytes(n);
    uint8_t *want = calloc((size_t)mb, 1), *m = malloc((size_t)mb);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(i % 97) - 48.0f;
        if (og_ref_dropout_keep(seed, offset, p, (uint64_t)i))
            want[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    float scale = (float)(1.0 / (1.0 - p));
    int threads = opgrad_get_num_threads();
    opgrad_isa top = opgrad_set_max_isa(OPGRAD_ISA_AMX);
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        for (int t = 1; t <= 3; t++) {
            opgrad_set_num_threads(t);
            memset(m, 0xff, (size_t)mb);
            CHECK_EQ(run_dropout(x, n, p, true, seed, offset, y, m), ACLNN_SUCCESS);
            int64_t bad = -1;
            for (int64_t k = 0; k < mb && bad < 0; k++)
                if (m[k] != want[k]) bad = k;
            CHECKF(
                bad < 0,
                "%s, %d threads, n %lld seed %lld offset %lld: mask byte %lld is %02x, want %02x",
                opgrad_isa_name((opgrad_isa)isa), t, (long long)n, (long long)seed,
                (long long)offset, (long long)bad, bad < 0 ? 0 : m[bad], bad < 0 ? 0 : want[bad]);
            int64_t badv = -1;
            for (int64_t i = 0; i < n && badv < 0; i++) {
                float w = (want[i / 8] >> (i % 8)) & 1 ? x[i] * scale : 0.0f;
                if (memcmp(&w, &y[i], 4)) badv = i;
            }
            CHECKF(badv < 0, "%s, %d threads: out[%lld] wrong", opgrad_isa_name((opgrad_isa)isa), t,
                   (long long)badv);
        }
    }
    opgrad_set_max_isa(top);
    opgrad_set_num_threads(threads);
    free(x), free(y), free(want), free(m);
}

static void test_mask_matches_reference(void) {
    check_mask_everywhere((1 << 20) + 77, 0.3, 123456789, 0);
    check_mask_everywhere(1000, 0.5, -1, 4294967296LL - 100); // blocks cross 2^32: carry to c1
    check_mask_everywhere(3, 0.7, 0x7fffffffffffffffLL, -2);  // offset wraps past 2^64
    check_mask_everywhere(129, 0.01, 5, 17);
}

static void test_keep_rate(void) {
    const int64_t n = 1 << 20;
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
    uint8_t *m = malloc((size_t)mask_bytes(n));
    for (int64_t i = 0; i < n; i++) x[i] = 1;
    const double ps[] = {0.1, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(run_dropout(x, n, ps[k], true, 2026 + k, 0, y, m), ACLNN_SUCCESS);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++) kept += (m[i / 8] >> (i % 8)) & 1;
        double mean = (double)n * (1 - ps[k]), sd = sqrt((double)n * ps[k] * (1 - ps[k]));
        CHECKF(fabs((double)kept - mean) <= 6 * sd,
               "p %g: kept %lld of %lld, expected %.0f +- %.0f", ps[k], (long long)kept,
               (long long)n, mean, 6 * sd);
    }
    free(x), free(y), free(m);
}

static void test_seeds_and_offsets_differ(void) {
    const int64_t n = 4096;
    float x[4096], y[4096];
    uint8_t a[512], b[512], c[512];
    for (int i = 0; i < n; i++) x[i] = 1;
    CHECK_EQ(run_dropout(x, n, 0.5, true, 1, 0, y, a), ACLNN_SUCCESS);
    CHECK_EQ(run_dropout(x, n, 0.5, true, 2, 0, y, b), ACLNN_SUCCESS);
    CHECK_EQ(run_dropout(x, n, 0.5, true, 1, 32, y, c), ACLNN_SUCCESS);
    int diff_seed = 0, diff_off = 0;
    for (int k = 0; k < 512; k++) {
        for (int bit = 0; bit < 8; bit++) {
            diff_seed += ((a[k] ^ b[k]) >> bit) & 1;
            diff_off += ((a[k] ^ c[k]) >> bit) & 1;
        }
    }
    // independent masks differ in about half their bits
    CHECKF(diff_seed > 1800 && diff_seed < 2300, "seeds 1 / 2: %d of 4096 bits differ", diff_seed);
    CHECKF(diff_off > 1800 && diff_off < 2300, "offsets 0 / 32: %d of 4096 bits differ", diff_off);
    // offset counts blocks of 4 elements: offset 32 is the stream 128 elements (16 bytes) on
    CHECK(memcmp(a + 16, c, 496) == 0);
    // the same arguments: the same mask
    CHECK_EQ(run_dropout(x, n, 0.5, true, 1, 0, y, b), ACLNN_SUCCESS);
    CHECK(memcmp(a, b, 512) == 0);
}

static void test_special_cases(void) {
    const int64_t n = 300;
    float x[300], y[300];
    uint8_t m[48];
    for (int i = 0; i < n; i++) x[i] = (float)i - 150.5f;
    x[7] = INFINITY;
    memset(m, 0x5a, sizeof m);
    CHECK_EQ(run_dropout(x, n, 0.0, true, 1, 0, y, m), ACLNN_SUCCESS);
    CHECK(memcmp(x, y, sizeof x) == 0);
    for (int k = 0; k < 48; k++) CHECK_EQ(m[k], 0x5a);
    CHECK_EQ(run_dropout(x, n, 0.5, false, 1, 0, y, m), ACLNN_SUCCESS);
    CHECK(memcmp(x, y, sizeof x) == 0);
    for (int k = 0; k < 48; k++) CHECK_EQ(m[k], 0x5a);
    CHECK_EQ(run_dropout(x, n, 1.0, true, 1, 0, y, m), ACLNN_SUCCESS);
    for (int i = 0; i < n; i++) CHECK(y[i] == 0 && !signbit(y[i]));
    for (int k = 0; k < 48; k++) CHECK_EQ(m[k], 0x5a);
    // dropped inf is 0, kept inf is inf
    CHECK_EQ(run_dropout(x, n, 0.5, true, 9, 0, y, m), ACLNN_SUCCESS);
    CHECK(((m[0] >> 7) & 1) ? isinf(y[7]) : y[7] == 0);
    // in place (out over input, element for element): the same as out of place
    float z[300];
    memcpy(z, x, sizeof z);
    CHECK_EQ(run_dropout(z, n, 0.5, true, 9, 0, z, m), ACLNN_SUCCESS);
    CHECK(memcmp(z, y, sizeof z) == 0);
    // padding bits 0: 300 elements -> 384 bits, bits 300..383 clear
    for (int k = 300; k < 384; k++) CHECK(((m[k / 8] >> (k % 8)) & 1) == 0);
}

static void test_half_and_strided(void) {
    // input [8, 40] transposed view of a [40, 8] buffer, bf16 in, fp16 out: computed in fp32,
    // rounded to bf16 (input's dtype), then cast to fp16
    int64_t dims[2] = {8, 40}, strides[2] = {1, 8}, n = 320, mb = mask_bytes(320);
    uint16_t xb[320], yb[320];
    uint8_t m[48];
    test_rng r;
    test_rng_seed(&r, 5);
    for (int i = 0; i < 320; i++) xb[i] = og_f32_to_bf16((float)test_rng_uniform(&r, -3, 3));
    aclTensor *tx =
        aclCreateTensor(dims, 2, ACL_BF16, strides, 0, ACL_FORMAT_ND, (int64_t[]){40, 8}, 2, xb);
    aclTensor *ty = test_tensor(dims, 2, ACL_FLOAT16, yb), *tm = test_tensor(&mb, 1, ACL_UINT8, m);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    double p = 0.25;
    aclnnStatus st = aclnnDropoutGetWorkspaceSize(tx, p, true, 77, 5, ty, tm, &ws, &ex);
    CHECK_EQ(test_run(st, ws, ex, aclnnDropout, NULL), ACLNN_SUCCESS);
    for (int64_t i = 0; i < n; i++) {
        int64_t row = i / 40, col = i % 40; // element i of the view is xb[col * 8 + row]
        float v = og_bf16_to_f32(xb[col * 8 + row]);
        bool keep = og_ref_dropout_keep(77, 5, p, (uint64_t)i);
        CHECK(((m[i / 8] >> (i % 8)) & 1) == keep);
        float want = keep ? og_bf16_to_f32(og_f32_to_bf16(v * (float)(1 / (1 - p)))) : 0.0f;
        CHECKF(og_f16_to_f32(yb[i]) == og_f16_to_f32(og_f32_to_f16(want)), "element %lld",
               (long long)i);
    }
    aclDestroyTensor(tx), aclDestroyTensor(ty), aclDestroyTensor(tm);
}

static aclnnStatus run_backward(const float *g, int64_t n, const uint8_t *mask, double scale,
                                float *out) {
    int64_t mb = mask_bytes(n);
    aclTensor *tg = test_tensor(&n, 1, ACL_FLOAT, (void *)g),
              *to = test_tensor(&n, 1, ACL_FLOAT, out);
    aclTensor *tm = test_tensor(&mb, 1, ACL_UINT8, (void *)mask);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnDropoutBackwardGetWorkspaceSize(tg, tm, scale, to, &ws, &ex);
    st = test_run(st, ws, ex, aclnnDropoutBackward, NULL);
    aclDestroyTensor(tg), aclDestroyTensor(to), aclDestroyTensor(tm);
    return st;
}

static void test_backward_values(void) {
    const int64_t n = 1000;
    float g[1000], y[1000], o[1000], x[1000];
    uint8_t m[128];
    for (int i = 0; i < n; i++) g[i] = (float)(i % 13) * 0.37f - 2.0f, x[i] = 1;
    // the forward's mask, then the backward with 1 / (1 - p): the same elements, scaled once
    double p = 0.4;
    CHECK_EQ(run_dropout(x, n, p, true, 11, 3, y, m), ACLNN_SUCCESS);
    CHECK_EQ(run_backward(g, n, m, 1 / (1 - p), o), ACLNN_SUCCESS);
    float s = (float)(1 / (1 - p));
    for (int i = 0; i < n; i++) {
        float want = (m[i / 8] >> (i % 8)) & 1 ? g[i] * s : 0.0f;
        CHECKF(o[i] == want, "element %d: %g, want %g", i, o[i], want);
    }
    CHECK_EQ(run_backward(g, n, m, 0, o), ACLNN_SUCCESS);
    for (int i = 0; i < n; i++) CHECK(o[i] == 0);
    CHECK_EQ(run_backward(g, n, m, 1, o), ACLNN_SUCCESS); // aclnn: scale 1 leaves gradOutput as is
    CHECK(memcmp(o, g, sizeof g) == 0);
}

// An executor planned on 1 thread and run after the count went to 3 runs as planned (its
// scratch was sized for 1): the same bits, no write past the workspace.
static void test_threads_changed_after_planning(void) {
    int64_t n = 100000, mb = mask_bytes(n);
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *y1 = malloc((size_t)n * 4);
    uint8_t *m = malloc((size_t)mb), *m1 = malloc((size_t)mb);
    for (int64_t i = 0; i < n; i++) x[i] = (float)i;
    int threads = opgrad_get_num_threads();
    opgrad_set_num_threads(1);
    CHECK_EQ(run_dropout(x, n, 0.5, true, 8, 0, y1, m1), ACLNN_SUCCESS);
    aclTensor *tx = test_tensor(&n, 1, ACL_FLOAT, x), *ty = test_tensor(&n, 1, ACL_FLOAT, y);
    aclTensor *tm = test_tensor(&mb, 1, ACL_UINT8, m);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnDropoutGetWorkspaceSize(tx, 0.5, true, 8, 0, ty, tm, &ws, &ex);
    opgrad_set_num_threads(3);
    CHECK_EQ(test_run(st, ws, ex, aclnnDropout, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(m, m1, (size_t)mb) == 0 && memcmp(y, y1, (size_t)n * 4) == 0);
    opgrad_set_num_threads(threads);
    aclDestroyTensor(tx), aclDestroyTensor(ty), aclDestroyTensor(tm);
    free(x), free(y), free(y1), free(m), free(m1);
}

static void test_status_paths(void) {
    int64_t n = 10, mb = 16, bad = 8, d2[2] = {2, 5};
    float *x = test_dev_alloc(40), *y = test_dev_alloc(40);
    uint8_t *m = test_dev_alloc(16);
    aclTensor *tx = test_tensor(&n, 1, ACL_FLOAT, x), *ty = test_tensor(&n, 1, ACL_FLOAT, y);
    aclTensor *tm = test_tensor(&mb, 1, ACL_UINT8, m), *tmbad = test_tensor(&bad, 1, ACL_UINT8, m);
    aclTensor *tmf = test_tensor(&mb, 1, ACL_FLOAT, y), *ty2 = test_tensor(d2, 2, ACL_FLOAT, y);
    aclTensor *ti = test_tensor(&n, 1, ACL_INT32, x);
    uint64_t ws;
    aclOpExecutor *ex;
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(NULL, 0.5, true, 0, 0, ty, tm, &ws, &ex),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("input");
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(tx, 0.5, true, 0, 0, ty, NULL, &ws, &ex),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("maskOut");
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(tx, 1.5, true, 0, 0, ty, tm, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("p is 1.5");
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(tx, -0.1, true, 0, 0, ty, tm, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(tx, NAN, true, 0, 0, ty, tm, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(tx, 0.5, true, 0, 0, ty, tmbad, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("align(10, 128) / 8 = 16");
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(tx, 0.5, true, 0, 0, ty, tmf, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("uint8");
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(tx, 0.5, true, 0, 0, ty2, tm, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(ti, 0.5, true, 0, 0, ty, tm, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("int32");
    CHECK_EQ(aclnnDropoutBackwardGetWorkspaceSize(tx, tm, 0.5, ty, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("scale is 0.5");
    CHECK_EQ(aclnnDropoutBackwardGetWorkspaceSize(tx, tm, INFINITY, ty, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnDropoutBackwardGetWorkspaceSize(tx, NULL, 2, ty, &ws, &ex),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("mask");
    CHECK_EQ(aclnnDropoutBackwardGetWorkspaceSize(tx, tmbad, 2, ty, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnDropoutBackwardGetWorkspaceSize(tx, tm, 2, ty2, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    // out and maskOut in one place
    aclTensor *tyb = test_tensor(&mb, 1, ACL_UINT8, y);
    CHECK_EQ(aclnnDropoutGetWorkspaceSize(tx, 0.5, true, 0, 0, ty, tyb, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    // empty: a 0-byte mask, nothing to do
    int64_t zero = 0;
    aclTensor *te = test_tensor(&zero, 1, ACL_FLOAT, x), *tme = test_tensor(&zero, 1, ACL_UINT8, m);
    aclnnStatus st = aclnnDropoutGetWorkspaceSize(te, 0.5, true, 0, 0, te, tme, &ws, &ex);
    CHECK_EQ(test_run(st, ws, ex, aclnnDropout, NULL), ACLNN_SUCCESS);
    st = aclnnDropoutBackwardGetWorkspaceSize(te, tme, 2, te, &ws, &ex);
    CHECK_EQ(test_run(st, ws, ex, aclnnDropoutBackward, NULL), ACLNN_SUCCESS);
    aclTensor *all[] = {tx, ty, tm, tmbad, tmf, ty2, ti, tyb, te, tme};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
    aclrtFree(x), aclrtFree(y), aclrtFree(m);
}

int main(void) {
    RUN(test_philox_known_answers);
    RUN(test_mask_matches_reference);
    RUN(test_keep_rate);
    RUN(test_seeds_and_offsets_differ);
    RUN(test_special_cases);
    RUN(test_half_and_strided);
    RUN(test_backward_values);
    RUN(test_threads_changed_after_planning);
    RUN(test_status_paths);
    return test_summary();
}
