/* API-level tests of opgrad_executor_run (include/opgrad/opgrad.h): re-pointing a repeatable
 * executor's io slots and running its phase 2 in one call. Results must be bit-identical to the
 * two-step path (aclSetInputTensorAddr / aclSetOutputTensorAddr, then aclnnXxx); a NULL address
 * leaves its slot alone; errors name the argument and leave the executor as it was. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/reference.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------------------- */

// y[0..n) == mish(x[0..n)) within 8 ulp (fp32) / 1 ulp of the rounded reference (16-bit).
static int64_t bad_mish(const void *x, const void *y, int64_t n, aclDataType dt) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double ref = og_ref_mish(test_load(x, i, dt)), got = test_load(y, i, dt);
        double ulp = dt == ACL_FLOAT ? test_ulp_error(dt, got, ref)
                                     : test_ulp_error(dt, got, test_round_to(dt, ref));
        if (ulp > (dt == ACL_FLOAT ? 8 : 1)) bad++;
    }
    return bad;
}

/* ---- results ------------------------------------------------------------------------------ */

// Mish fp16 (contiguous: the fused 16-bit plan): opgrad_executor_run over new buffers gives the
// same bits as aclSetInput/OutputTensorAddr + aclnnMish on a second executor of the same layout.
static void test_run_equals_two_step(void) {
    const int64_t n = 5003, d[] = {5003};
    void *x1 = test_dev_alloc(n * 2), *y1 = test_dev_alloc(n * 2);
    void *x2 = test_dev_alloc(n * 2), *y2 = test_dev_alloc(n * 2), *yref = test_dev_alloc(n * 2);
    test_rng r;
    test_rng_seed(&r, 11);
    test_fill(x1, 0, n, ACL_FLOAT16, &r, -9, 9);
    test_fill(x2, 0, n, ACL_FLOAT16, &r, -9, 9);
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT16, x1), *ty = test_tensor(d, 1, ACL_FLOAT16, y1);
    aclTensor *rx = test_tensor(d, 1, ACL_FLOAT16, x1), *ry = test_tensor(d, 1, ACL_FLOAT16, y1);
    uint64_t ws = 0, wsr = 0;
    aclOpExecutor *e = NULL, *er = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishGetWorkspaceSize(rx, ry, &wsr, &er), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(er), ACLNN_SUCCESS);
    CHECK_EQ(ws, wsr); // (0: contiguous fp16 runs fused, without tile buffers)
    void *w = test_dev_alloc(ws);
    // one call: both slots re-pointed, then phase 2
    void *addrs[] = {x2, y2};
    CHECK_EQ(opgrad_executor_run(e, addrs, 2, w, ws, NULL), ACLNN_SUCCESS);
    // two steps
    CHECK_EQ(aclSetInputTensorAddr(er, 0, rx, x2), ACLNN_SUCCESS);
    CHECK_EQ(aclSetOutputTensorAddr(er, 0, ry, yref), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMish(w, ws, er, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(y2, yref, n * 2) == 0);
    CHECK_EQ(bad_mish(x2, y2, n, ACL_FLOAT16), 0);
    const uint16_t *y1h = y1;
    int64_t written = 0;
    for (int64_t i = 0; i < n; i++) written += y1h[i] != 0;
    CHECK_EQ(written, 0); // the planned output was never written
    // and on a stream, back at the first buffers
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    void *back[] = {x1, y1};
    CHECK_EQ(opgrad_executor_run(e, back, 2, w, ws, s), ACLNN_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK_EQ(bad_mish(x1, y1, n, ACL_FLOAT16), 0);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(er), ACLNN_SUCCESS);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclDestroyTensor(rx);
    aclDestroyTensor(ry);
    void *bufs[] = {x1, y1, x2, y2, yref, w};
    for (int k = 0; k < 6; k++) aclrtFree(bufs[k]);
}

// MishBackward over offset views (slots: 0 gradOutput, 1 self, 2 gradInput): the view offset is
// kept, only the addresses given move, NULL entries and slots past naddrs stay.
static void test_run_repoints_slots(void) {
    const int64_t n = 3000, d[] = {3000}, sd[] = {3010}, off = 7;
    const size_t bytes = 3010 * 4;
    void *g1 = test_dev_alloc(bytes), *x1 = test_dev_alloc(bytes), *gi1 = test_dev_alloc(bytes);
    void *g2 = test_dev_alloc(bytes), *x2 = test_dev_alloc(bytes), *gi2 = test_dev_alloc(bytes);
    void *gi3 = test_dev_alloc(bytes), *ref = test_dev_alloc(bytes);
    aclTensor *tg = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, g1);
    aclTensor *tx = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, x1);
    aclTensor *tgi = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, gi1);
    aclTensor *rg = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, g1);
    aclTensor *rx = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, x1);
    aclTensor *rgi = aclCreateTensor(d, 1, ACL_FLOAT, NULL, off, ACL_FORMAT_ND, sd, 1, ref);
    test_rng r;
    test_rng_seed(&r, 12);
    test_fill(g1, off, n, ACL_FLOAT, &r, -2, 2);
    test_fill(x1, off, n, ACL_FLOAT, &r, -8, 8);
    test_fill(g2, off, n, ACL_FLOAT, &r, -2, 2);
    test_fill(x2, off, n, ACL_FLOAT, &r, -8, 8);
    uint64_t ws = 0, wsr = 0;
    aclOpExecutor *e = NULL, *er = NULL;
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(tg, tx, tgi, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(rg, rx, rgi, &wsr, &er), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(er), ACLNN_SUCCESS);
    void *w = test_dev_alloc(ws > wsr ? ws : wsr);

    // all three slots
    void *all[] = {g2, x2, gi2};
    CHECK_EQ(opgrad_executor_run(e, all, 3, w, ws, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclSetInputTensorAddr(er, 0, rg, g2), ACLNN_SUCCESS);
    CHECK_EQ(aclSetInputTensorAddr(er, 1, rx, x2), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w, wsr, er, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(gi2, ref, bytes) == 0);
    const float *gi2f = gi2, *gi1f = gi1;
    CHECK(gi2f[off - 1] == 0.0f && gi2f[off + n] == 0.0f); // nothing outside the view
    int64_t touched = 0;
    for (size_t i = 0; i < bytes / 4; i++) touched += gi1f[i] != 0.0f;
    CHECK_EQ(touched, 0);

    // NULL = unchanged: only self moves back to x1 (gradOutput g2, output gi2 stay)
    memset(gi2, 0, bytes);
    void *only_self[] = {NULL, x1, NULL};
    CHECK_EQ(opgrad_executor_run(e, only_self, 3, w, ws, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclSetInputTensorAddr(er, 1, rx, x1), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w, wsr, er, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(gi2, ref, bytes) == 0);

    // naddrs 2: the output slot is not part of the call and stays at gi2
    memset(gi2, 0, bytes);
    void *two[] = {g1, x1};
    CHECK_EQ(opgrad_executor_run(e, two, 2, w, ws, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclSetInputTensorAddr(er, 0, rg, g1), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w, wsr, er, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(gi2, ref, bytes) == 0);

    // naddrs 0 with NULL addrs: just runs (into gi2 again)
    memset(gi2, 0, bytes);
    CHECK_EQ(opgrad_executor_run(e, NULL, 0, w, ws, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(gi2, ref, bytes) == 0);

    // only the output moves
    void *out_only[] = {NULL, NULL, gi3};
    CHECK_EQ(opgrad_executor_run(e, out_only, 3, w, ws, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(gi3, ref, bytes) == 0);

    // the two-step API still works on an executor re-pointed by opgrad_executor_run
    memset(gi1, 0, bytes);
    CHECK_EQ(aclSetOutputTensorAddr(e, 0, tgi, gi1), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w, ws, e, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(gi1, ref, bytes) == 0);

    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(er), ACLNN_SUCCESS);
    aclTensor *ts[] = {tg, tx, tgi, rg, rx, rgi};
    for (int k = 0; k < 6; k++) aclDestroyTensor(ts[k]);
    void *bufs[] = {g1, x1, gi1, g2, x2, gi2, gi3, ref, w};
    for (int k = 0; k < 9; k++) aclrtFree(bufs[k]);
}

// Add with broadcasting and alpha (slots: 0 self [4,5], 1 other [5], 2 out [4,5]).
static void test_run_binary_broadcast(void) {
    const int64_t da[] = {4, 5}, db[] = {5};
    float a1[20], b1[5], a2[20], b2[5], o1[20] = {0}, o2[20] = {0};
    for (int i = 0; i < 20; i++) a1[i] = (float)i, a2[i] = (float)(100 + i);
    for (int i = 0; i < 5; i++) b1[i] = 0.5f * (float)i, b2[i] = -(float)i;
    aclTensor *ta = test_tensor(da, 2, ACL_FLOAT, a1), *tb = test_tensor(db, 1, ACL_FLOAT, b1);
    aclTensor *to = test_tensor(da, 2, ACL_FLOAT, o1);
    float alpha = 2.0f;
    aclScalar *sa = aclCreateScalar(&alpha, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnAddGetWorkspaceSize(ta, tb, sa, to, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    void *w = ws ? test_dev_alloc(ws) : NULL;
    CHECK_EQ(opgrad_executor_run(e, NULL, 0, w, ws, NULL), ACLNN_SUCCESS);
    void *addrs[] = {a2, b2, o2};
    CHECK_EQ(opgrad_executor_run(e, addrs, 3, w, ws, NULL), ACLNN_SUCCESS);
    int bad = 0;
    for (int i = 0; i < 20; i++) {
        bad += o1[i] != a1[i] + 2.0f * b1[i % 5];
        bad += o2[i] != a2[i] + 2.0f * b2[i % 5];
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    aclDestroyScalar(sa);
    aclDestroyTensor(ta);
    aclDestroyTensor(tb);
    aclDestroyTensor(to);
    if (w) aclrtFree(w);
}

// Runs queued on a stream keep the addresses of their own call.
static void test_run_queued_keep_their_addresses(void) {
    const int64_t n = 1 << 18, d[] = {1 << 18};
    enum { K = 4 };
    void *x[K], *y[K];
    test_rng r;
    test_rng_seed(&r, 13);
    for (int k = 0; k < K; k++) {
        x[k] = test_dev_alloc((size_t)n * 4);
        y[k] = test_dev_alloc((size_t)n * 4);
        test_fill(x[k], 0, n, ACL_FLOAT, &r, -6 + k, 6 - k);
    }
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT, x[0]), *ty = test_tensor(d, 1, ACL_FLOAT, y[0]);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    void *w = ws ? test_dev_alloc(ws) : NULL;
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    for (int k = 0; k < K; k++) {
        void *addrs[] = {x[k], y[k]};
        CHECK_EQ(opgrad_executor_run(e, addrs, 2, w, ws, s), ACLNN_SUCCESS);
    }
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS); // queued runs keep it alive
    CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    for (int k = 0; k < K; k++) CHECKF(bad_mish(x[k], y[k], n, ACL_FLOAT) == 0, "run %d", k);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    for (int k = 0; k < K; k++) {
        aclrtFree(x[k]);
        aclrtFree(y[k]);
    }
    if (w) aclrtFree(w);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_run_errors(void) {
    setenv("OPGRAD_FUSED16", "0", 1); // the buffered path, which needs a workspace
    const int64_t n = 5003, d[] = {5003};
    void *x = test_dev_alloc(n * 2), *y = test_dev_alloc(n * 2), *y2 = test_dev_alloc(n * 2);
    test_rng r;
    test_rng_seed(&r, 14);
    test_fill(x, 0, n, ACL_FLOAT16, &r, -5, 5);
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT16, x), *ty = test_tensor(d, 1, ACL_FLOAT16, y);
    void *addrs[] = {x, y2};

    CHECK_EQ(opgrad_executor_run(NULL, addrs, 2, NULL, 0, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_executor_run: executor is NULL");
    int not_an_executor = 0;
    CHECK_EQ(opgrad_executor_run((aclOpExecutor *)&not_an_executor, addrs, 2, NULL, 0, NULL),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("not a live executor");

    // single-use: refused, untouched, and still runnable (once) by aclnnMish
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    void *w = test_dev_alloc(ws);
    CHECK_EQ(opgrad_executor_run(e, addrs, 2, w, ws, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("single-use");
    CHECK_MSG("aclSetAclOpExecutorRepeatable");
    CHECK_EQ(aclnnMish(w, ws, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(bad_mish(x, y, n, ACL_FLOAT16), 0); // into y: the refused call re-pointed nothing
    // consumed now
    CHECK_EQ(opgrad_executor_run(e, addrs, 2, w, ws, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("consumed by an earlier aclnnMish");

    // repeatable: argument errors
    memset(y, 0, n * 2);
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    void *three[] = {x, y2, y2};
    CHECK_EQ(opgrad_executor_run(e, three, 3, w, ws, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("naddrs 3 is larger than the 2 io slots");
    CHECK_EQ(opgrad_executor_run(e, NULL, 2, w, ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("addrs is NULL");
    // phase-2 errors, as aclnnMish reports them; the slots are left as they were
    CHECK_EQ(opgrad_executor_run(e, addrs, 2, w, ws - 1, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("aclnnMish: workspaceSize");
    CHECK_EQ(opgrad_executor_run(e, addrs, 2, NULL, ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspace is NULL");
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    CHECK_EQ(opgrad_executor_run(e, addrs, 2, w, ws, s), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("stream");
    CHECK_EQ(opgrad_executor_run(e, NULL, 0, w, ws, NULL), ACLNN_SUCCESS);
    CHECK_EQ(bad_mish(x, y, n, ACL_FLOAT16), 0); // still the planned output
    const uint16_t *y2h = y2;
    int64_t touched = 0;
    for (int64_t i = 0; i < n; i++) touched += y2h[i] != 0;
    CHECK_EQ(touched, 0);

    // destroyed
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(opgrad_executor_run(e, addrs, 2, w, ws, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_executor_run: executor");
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclrtFree(x);
    aclrtFree(y);
    aclrtFree(y2);
    aclrtFree(w);
    unsetenv("OPGRAD_FUSED16");
}

int main(void) {
    RUN(test_run_equals_two_step);
    RUN(test_run_repoints_slots);
    RUN(test_run_binary_broadcast);
    RUN(test_run_queued_keep_their_addresses);
    RUN(test_run_errors);
    return test_summary();
}
