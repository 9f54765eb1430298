/* API-level tests of aclOpExecutor lifetimes: single use by default, repeatable after
 * aclSetAclOpExecutorRepeatable, re-pointed with aclSetInputTensorAddr / aclSetOutputTensorAddr,
 * released with aclDestroyAclOpExecutor (then refused), and kept alive by queued runs.
 * Results are judged against the float64 references. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/reference.h"
#include "test.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static int close16(aclDataType dt, double got, double ref) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got);
    if (dt == ACL_FLOAT) return test_ulp_error(ACL_FLOAT, got, ref) <= 8;
    return test_ulp_error(dt, got, test_round_to(dt, ref)) <= 1;
}

// Elements of y[off..off+n) that are not mish(x[xoff..]) within tolerance.
static int64_t bad_mish(const void *x, int64_t xoff, const void *y, int64_t off, int64_t n,
                        aclDataType dt) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double xv = test_load(x, xoff + i, dt);
        if (!close16(dt, test_load(y, off + i, dt), og_ref_mish(xv))) bad++;
    }
    return bad;
}

static int64_t bad_bwd(const void *g, const void *x, const void *gi, int64_t off, int64_t n,
                       aclDataType dt) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double gv = test_load(g, off + i, dt), xv = test_load(x, off + i, dt);
        double ref = gv * og_ref_mish_grad(xv), got = test_load(gi, off + i, dt);
        if (fabs(xv + 1.19) < 0.1) {
            if (fabs(got - ref) > 0x1p-23 * fabs(gv) + 0x1p-10 * fabs(ref)) bad++;
        } else if (!close16(dt, got, ref)) {
            bad++;
        }
    }
    return bad;
}

/* ---- repeatable executors ---------------------------------------------------------------- */

static void test_repeatable_runs_three_times(void) {
    const int64_t n = 5003, d[] = {5003};
    void *x = test_dev_alloc(n * 2), *y = test_dev_alloc(n * 2);
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT16, x), *ty = test_tensor(d, 1, ACL_FLOAT16, y);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    void *w = test_dev_alloc(ws); // (ws is 0: contiguous fp16 runs fused)
    test_rng r;
    test_rng_seed(&r, 1);
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    for (int run = 0; run < 3; run++) {
        test_fill(x, 0, n, ACL_FLOAT16, &r, -10 + run, 10 - run); // new data in the same buffer
        memset(y, 0, n * 2);
        CHECK_EQ(aclnnMish(w, ws, e, NULL), ACLNN_SUCCESS);
        CHECKF(bad_mish(x, 0, y, 0, n, ACL_FLOAT16) == 0, "run %d (NULL stream)", run);
        memset(y, 0, n * 2);
        CHECK_EQ(aclnnMish(w, ws, e, s), ACLNN_SUCCESS); // and on a stream
        CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
        CHECKF(bad_mish(x, 0, y, 0, n, ACL_FLOAT16) == 0, "run %d (stream)", run);
    }
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    // destroyed: refused everywhere, without touching freed memory (ASan)
    CHECK_EQ(aclnnMish(w, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("executor");
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("executor");
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclrtFree(x);
    aclrtFree(y);
    aclrtFree(w);
}

static void test_repeatable_set_tensor_addr(void) {
    // MishBackward over offset views: inputs 0 = gradOutput, 1 = self; output 0 = gradInput.
    const int64_t n = 3000, d[] = {3000}, sd[] = {3010}, off = 7;
    void *g1 = test_dev_alloc(3010 * 4), *x1 = test_dev_alloc(3010 * 4),
         *gi1 = test_dev_alloc(3010 * 4);
    void *g2 = test_dev_alloc(3010 * 4), *x2 = test_dev_alloc(3010 * 4),
         *gi2 = test_dev_alloc(3010 * 4);
    aclTensor *tg = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, g1);
    aclTensor *tx = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, x1);
    aclTensor *tgi = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, gi1);
    test_rng r;
    test_rng_seed(&r, 2);
    test_fill(g1, off, n, ACL_FLOAT, &r, -2, 2);
    test_fill(x1, off, n, ACL_FLOAT, &r, -8, 8);
    test_fill(g2, off, n, ACL_FLOAT, &r, -2, 2);
    test_fill(x2, off, n, ACL_FLOAT, &r, -8, 8);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(tg, tx, tgi, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    void *w = ws ? test_dev_alloc(ws) : NULL;
    CHECK_EQ(aclnnMishBackward(w, ws, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(bad_bwd(g1, x1, gi1, off, n, ACL_FLOAT), 0);
    void *first = malloc(3010 * 4);
    memcpy(first, gi1, 3010 * 4);
    // re-point all three at the second set of buffers; the view offset 7 is kept
    CHECK_EQ(aclSetInputTensorAddr(e, 0, tg, g2), ACLNN_SUCCESS);
    CHECK_EQ(aclSetInputTensorAddr(e, 1, tx, x2), ACLNN_SUCCESS);
    CHECK_EQ(aclSetOutputTensorAddr(e, 0, tgi, gi2), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w, ws, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(bad_bwd(g2, x2, gi2, off, n, ACL_FLOAT), 0);
    CHECK(memcmp(first, gi1, 3010 * 4) == 0); // the first output was not written again
    const float *gi2f = gi2;
    CHECK(gi2f[off - 1] == 0.0f && gi2f[off + n] == 0.0f); // nothing outside the view
    // only the self input moves back: gradOutput 2, self 1 -> into gi2
    CHECK_EQ(aclSetInputTensorAddr(e, 1, tx, x1), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w, ws, e, NULL), ACLNN_SUCCESS);
    int64_t bad = 0;
    for (int64_t i = off; i < off + n; i++) {
        double gv = ((float *)g2)[i], xv = ((float *)x1)[i], got = ((float *)gi2)[i];
        double ref = gv * og_ref_mish_grad(xv);
        if (fabs(xv + 1.19) >= 0.1 && test_ulp_error(ACL_FLOAT, got, ref) > 8) bad++;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    free(first);
    aclDestroyTensor(tg);
    aclDestroyTensor(tx);
    aclDestroyTensor(tgi);
    void *bufs[] = {g1, x1, gi1, g2, x2, gi2, w};
    for (int k = 0; k < 7; k++)
        if (bufs[k]) aclrtFree(bufs[k]);
}

static void test_set_tensor_addr_second_output(void) {
    // MishWithTanhx: outputs 0 = out, 1 = tanhxOut
    const int64_t n = 777, d[] = {777};
    void *x = test_dev_alloc(n * 4), *y = test_dev_alloc(n * 4), *t = test_dev_alloc(n * 4),
         *t2 = test_dev_alloc(n * 4);
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT, x), *ty = test_tensor(d, 1, ACL_FLOAT, y);
    aclTensor *tt = test_tensor(d, 1, ACL_FLOAT, t);
    test_rng r;
    test_rng_seed(&r, 3);
    test_fill(x, 0, n, ACL_FLOAT, &r, -9, 9);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishWithTanhxGetWorkspaceSize(tx, ty, tt, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetOutputTensorAddr(e, 1, tt, t2), ACLNN_SUCCESS);
    CHECK_EQ(aclSetOutputTensorAddr(e, 2, tt, t2), ACLNN_ERR_PARAM_INVALID); // only 2 outputs
    CHECK_MSG("index");
    CHECK_EQ(aclSetInputTensorAddr(e, 1, tx, x), ACLNN_ERR_PARAM_INVALID); // only 1 input
    CHECK_MSG("index");
    void *w = ws ? test_dev_alloc(ws) : NULL;
    CHECK_EQ(aclnnMishWithTanhx(w, ws, e, NULL), ACLNN_SUCCESS);
    int64_t bad = 0, untouched = 0;
    for (int64_t i = 0; i < n; i++) {
        double xv = ((float *)x)[i];
        if (test_ulp_error(ACL_FLOAT, ((float *)t2)[i], og_ref_mish_tanhx(xv)) > 8) bad++;
        if (test_ulp_error(ACL_FLOAT, ((float *)y)[i], og_ref_mish(xv)) > 8) bad++;
        if (((float *)t)[i] == 0.0f) untouched++;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(untouched, n);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclDestroyTensor(tt);
    aclrtFree(x);
    aclrtFree(y);
    aclrtFree(t);
    aclrtFree(t2);
    if (w) aclrtFree(w);
}

static void test_set_tensor_addr_errors(void) {
    float buf[4] = {0};
    CHECK_EQ(aclSetInputTensorAddr(NULL, 0, NULL, buf), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    CHECK_EQ(aclSetOutputTensorAddr(NULL, 0, NULL, buf), ACLNN_ERR_PARAM_NULLPTR);
    // a consumed single-use executor can no longer be re-pointed
    const int64_t d[] = {4};
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT, buf), *ty = test_tensor(d, 1, ACL_FLOAT, buf);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS); // in place, same layout
    CHECK_EQ(aclnnMish(NULL, ws, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclSetInputTensorAddr(e, 0, tx, buf), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclSetOutputTensorAddr(e, 0, ty, buf), ACLNN_ERR_PARAM_INVALID);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
}

/* ---- destroying ----------------------------------------------------------------------------- */

static void test_destroy_executor(void) {
    const int64_t d[] = {64};
    float x[64] = {0}, y[64] = {0};
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT, x), *ty = test_tensor(d, 1, ACL_FLOAT, y);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    // a planned but never run single-use executor is released (ASan sees no leak)
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID); // twice
    CHECK_MSG("executor");
    CHECK_EQ(aclDestroyAclOpExecutor(NULL), ACLNN_ERR_PARAM_NULLPTR);
    // a consumed one is gone already
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMish(NULL, ws, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
    // and cannot become repeatable afterwards
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("consumed");
    // a NULL executor is the caller's null argument (161001, not an internal 561103)
    CHECK_EQ(aclSetAclOpExecutorRepeatable(NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("aclSetAclOpExecutorRepeatable: executor is NULL");
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
}

static void test_repeatable_queued_runs_outlive_destroy(void) {
    // three runs queued on a stream, the executor destroyed before they ran: they still run,
    // on a live plan (ASan: no use after free), and the executor is refused afterwards
    const int64_t n = 1 << 20, d[] = {1 << 20};
    void *x = test_dev_alloc((size_t)n * 2), *y = test_dev_alloc((size_t)n * 4);
    aclTensor *tx = test_tensor(d, 1, ACL_BF16, x), *ty = test_tensor(d, 1, ACL_FLOAT, y);
    aclTensor *tg = test_tensor(d, 1, ACL_BF16, x);
    test_rng r;
    test_rng_seed(&r, 4);
    test_fill(x, 0, n, ACL_BF16, &r, -5, 5);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    // gradInput fp32 from bf16 inputs: x * mish'(x), rounded through bf16
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(tg, tx, ty, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    void *w = test_dev_alloc(ws);
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    for (int k = 0; k < 3; k++) CHECK_EQ(aclnnMishBackward(w, ws, e, s), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w, ws, e, s), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i += 7) {
        double xv = test_load(x, i, ACL_BF16), got = ((float *)y)[i];
        double ref = xv * og_ref_mish_grad(xv);
        if (fabs(xv + 1.19) >= 0.1 &&
            test_ulp_error(ACL_BF16, got, test_round_to(ACL_BF16, ref)) > 1)
            bad++;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclDestroyTensor(tg);
    aclrtFree(x);
    aclrtFree(y);
    aclrtFree(w);
}

static void test_single_use_queued_then_consumed(void) {
    // phase 2 on a stream consumes at once: a second call is refused before the first has run
    const int64_t n = 1 << 20, d[] = {1 << 20};
    void *x = test_dev_alloc((size_t)n * 4), *y = test_dev_alloc((size_t)n * 4);
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT, x), *ty = test_tensor(d, 1, ACL_FLOAT, y);
    test_rng r;
    test_rng_seed(&r, 5);
    test_fill(x, 0, n, ACL_FLOAT, &r, -5, 5);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    void *w = ws ? test_dev_alloc(ws) : NULL;
    CHECK_EQ(aclnnMish(w, ws, e, s), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMish(w, ws, e, s), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("consumed");
    CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK_EQ(bad_mish(x, 0, y, 0, n, ACL_FLOAT), 0);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclrtFree(x);
    aclrtFree(y);
    if (w) aclrtFree(w);
}

int main(void) {
    RUN(test_repeatable_runs_three_times);
    RUN(test_repeatable_set_tensor_addr);
    RUN(test_set_tensor_addr_second_output);
    RUN(test_set_tensor_addr_errors);
    RUN(test_destroy_executor);
    RUN(test_repeatable_queued_runs_outlive_destroy);
    RUN(test_single_use_queued_then_consumed);
    return test_summary();
}
