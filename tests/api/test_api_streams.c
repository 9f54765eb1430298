/* API-level tests of asynchronous execution and determinism: phase 2 on a stream only queues
 * (results appear at aclrtSynchronizeStream, in order with aclrtMemcpyAsync), a NULL stream is
 * synchronous, stream handles are checked, several host threads may drive their own streams at
 * once, and results are bitwise identical whatever the thread count, the instruction set
 * (scalar / AVX2 / AVX-512) or the store path (plain or non-temporal). */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/reference.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static aclTensor *t1(void *data, int64_t n, aclDataType dt) {
    const int64_t d[1] = {n};
    return aclCreateTensor(d, 1, dt, NULL, 0, ACL_FORMAT_ND, d, 1, data);
}

// Runs a planned executor with a fresh workspace on `stream` (NULL: now); the workspace is
// handed back through *ws_out for the caller to free after synchronizing (NULL when none).
typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);
static aclnnStatus launch(aclnnStatus st, uint64_t ws, aclOpExecutor *e, phase2_fn fn,
                          aclrtStream s, void **ws_out) {
    *ws_out = NULL;
    if (st != ACLNN_SUCCESS) return st;
    void *w = ws ? test_dev_alloc(ws) : NULL;
    st = fn(w, ws, e, s);
    *ws_out = w;
    return st;
}

static aclnnStatus mish_now(aclTensor *x, aclTensor *y) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnMishGetWorkspaceSize(x, y, &ws, &e);
    return test_run(st, ws, e, aclnnMish, NULL);
}

/* ---- asynchrony ------------------------------------------------------------------------------ */

static void test_phase2_on_stream_is_asynchronous(void) {
    const int64_t n = 1 << 22;
    const size_t bytes = (size_t)n * 4;
    void *x = test_dev_alloc(bytes), *g = test_dev_alloc(bytes);
    void *ya = test_dev_alloc(bytes), *gia = test_dev_alloc(bytes), *ys = test_dev_alloc(bytes),
         *gis = test_dev_alloc(bytes);
    void *host = malloc(bytes);
    memset(host, 0, bytes);
    test_rng r;
    test_rng_seed(&r, 1);
    test_fill(x, 0, n, ACL_FLOAT, &r, -6, 6);
    test_fill(g, 0, n, ACL_FLOAT, &r, -2, 2);
    aclTensor *tx = t1(x, n, ACL_FLOAT), *tg = t1(g, n, ACL_FLOAT);
    aclTensor *tya = t1(ya, n, ACL_FLOAT), *tgia = t1(gia, n, ACL_FLOAT);
    aclTensor *tys = t1(ys, n, ACL_FLOAT), *tgis = t1(gis, n, ACL_FLOAT);

    // the chain synchronously: y = mish(x); y = mish(y) in place; gi = g * mish'(y)
    uint64_t ws;
    aclOpExecutor *e;
    double t0 = now();
    CHECK_EQ(mish_now(tx, tys), ACLNN_SUCCESS);
    aclnnStatus st = aclnnInplaceMishGetWorkspaceSize(tys, &ws, &e);
    CHECK_EQ(test_run(st, ws, e, aclnnInplaceMish, NULL), ACLNN_SUCCESS);
    st = aclnnMishBackwardGetWorkspaceSize(tg, tys, tgis, &ws, &e);
    CHECK_EQ(test_run(st, ws, e, aclnnMishBackward, NULL), ACLNN_SUCCESS);
    double t_sync = now() - t0;

    // the same chain queued on a stream, planned first
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    uint64_t ws1, ws2, ws3;
    aclOpExecutor *e1, *e2, *e3;
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, tya, &ws1, &e1), ACLNN_SUCCESS);
    CHECK_EQ(aclnnInplaceMishGetWorkspaceSize(tya, &ws2, &e2), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(tg, tya, tgia, &ws3, &e3), ACLNN_SUCCESS);
    void *w1 = ws1 ? test_dev_alloc(ws1) : NULL, *w2 = ws2 ? test_dev_alloc(ws2) : NULL;
    void *w3 = ws3 ? test_dev_alloc(ws3) : NULL;
    t0 = now();
    CHECK_EQ(aclnnMish(w1, ws1, e1, s), ACLNN_SUCCESS);
    CHECK_EQ(aclnnInplaceMish(w2, ws2, e2, s), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w3, ws3, e3, s), ACLNN_SUCCESS);
    CHECK_EQ(aclrtMemcpyAsync(host, bytes, gia, bytes, ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_SUCCESS);
    double t_enqueue = now() - t0;
    CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    double t_wait = now() - t0 - t_enqueue;
    // Queued work runs while the host waits: most of it happens after phase 2 returned. (A
    // synchronous phase 2 gives t_enqueue ~ t_sync and t_wait ~ 0; either test alone could be
    // fooled by the host thread being descheduled, both together hardly.)
    CHECKF(t_wait > t_enqueue || t_enqueue * 4 < t_sync,
           "queueing took %.3f ms, the wait after it %.3f ms, the synchronous run %.3f ms: phase 2 "
           "did not return before the work was done",
           1e3 * t_enqueue, 1e3 * t_wait, 1e3 * t_sync);
    if (getenv("OPGRAD_TEST_VERBOSE"))
        printf("     queue %.3f ms, wait %.3f ms, synchronous %.3f ms\n", 1e3 * t_enqueue,
               1e3 * t_wait, 1e3 * t_sync);
    CHECK(memcmp(ya, ys, bytes) == 0);
    CHECK(memcmp(gia, gis, bytes) == 0);
    CHECK(memcmp(host, gis, bytes) == 0); // the copy ran after the backward
    // and the synchronous chain is right (spot check against float64)
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i += 4099) {
        double x0 = ((float *)x)[i], y1 = ((float *)ys)[i];
        double ref = ((float *)g)[i] * og_ref_mish_grad(y1);
        double y2ref = og_ref_mish((float)og_ref_mish(x0));
        if (fabs(y1 - y2ref) > 1e-5 * fabs(y2ref) + 1e-30) bad++;
        if (fabs(y1 + 1.19) >= 0.1 && test_ulp_error(ACL_FLOAT, ((float *)gis)[i], ref) > 8) bad++;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    aclTensor *ts[] = {tx, tg, tya, tgia, tys, tgis};
    for (int k = 0; k < 6; k++) aclDestroyTensor(ts[k]);
    void *bs[] = {x, g, ya, gia, ys, gis, w1, w2, w3};
    for (int k = 0; k < 9; k++)
        if (bs[k]) aclrtFree(bs[k]);
    free(host);
}

static void test_null_stream_is_synchronous(void) {
    const int64_t n = 1 << 20;
    void *x = test_dev_alloc((size_t)n * 2), *y = test_dev_alloc((size_t)n * 2);
    test_rng r;
    test_rng_seed(&r, 2);
    test_fill(x, 0, n, ACL_FLOAT16, &r, -9, 9);
    aclTensor *tx = t1(x, n, ACL_FLOAT16), *ty = t1(y, n, ACL_FLOAT16);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(tx, ty, &ws, &e), ACLNN_SUCCESS);
    void *w = ws ? test_dev_alloc(ws) : NULL;
    CHECK_EQ(aclnnMish(w, ws, e, NULL), ACLNN_SUCCESS);
    // no synchronization: every value is there already
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double xv = test_load(x, i, ACL_FLOAT16), got = test_load(y, i, ACL_FLOAT16);
        if (test_ulp_error(ACL_FLOAT16, got, test_round_to(ACL_FLOAT16, og_ref_mish(xv))) > 1)
            bad++;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclrtFree(x);
    aclrtFree(y);
    if (w) aclrtFree(w);
}

static void test_stream_handle_errors(void) {
    CHECK(aclrtCreateStream(NULL) != ACL_SUCCESS);
    CHECK(aclrtDestroyStream(NULL) != ACL_SUCCESS);
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    CHECK(s != NULL);
    CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS); // empty
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    CHECK(aclrtDestroyStream(s) != ACL_SUCCESS);
    CHECK_MSG("stream");
    CHECK(aclrtSynchronizeStream(s) != ACL_SUCCESS);
    CHECK_MSG("stream");
    char a[8] = {0}, b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(aclrtMemcpyAsync(a, 8, b, 8, ACL_MEMCPY_HOST_TO_HOST, s) != ACL_SUCCESS);
    CHECK(a[0] == 0);
    int local = 0; // never a stream
    CHECK(aclrtSynchronizeStream(&local) != ACL_SUCCESS);
    CHECK(aclrtDestroyStream(&local) != ACL_SUCCESS);
}

static void test_memcpy_async_ordered_with_kernels(void) {
    // copy in -> mish in place -> copy out -> mish in place, all queued; must equal doing it
    // step by step
    const int64_t n = 1 << 21;
    const size_t bytes = (size_t)n * 4;
    void *x = test_dev_alloc(bytes), *a = test_dev_alloc(bytes), *b = test_dev_alloc(bytes);
    void *ra = test_dev_alloc(bytes), *rb = test_dev_alloc(bytes);
    test_rng r;
    test_rng_seed(&r, 3);
    test_fill(x, 0, n, ACL_FLOAT, &r, -5, 5);
    aclTensor *tx = t1(x, n, ACL_FLOAT), *ta = t1(a, n, ACL_FLOAT), *tb = t1(b, n, ACL_FLOAT);
    aclTensor *tra = t1(ra, n, ACL_FLOAT), *trb = t1(rb, n, ACL_FLOAT);
    CHECK_EQ(mish_now(tx, tra), ACLNN_SUCCESS);  // ra = mish(x)
    CHECK_EQ(mish_now(tra, trb), ACLNN_SUCCESS); // rb = mish(mish(x))
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    uint64_t ws1, ws2;
    aclOpExecutor *e1, *e2;
    CHECK_EQ(aclnnInplaceMishGetWorkspaceSize(ta, &ws1, &e1), ACLNN_SUCCESS);
    CHECK_EQ(aclnnInplaceMishGetWorkspaceSize(tb, &ws2, &e2), ACLNN_SUCCESS);
    void *w1 = ws1 ? test_dev_alloc(ws1) : NULL, *w2 = ws2 ? test_dev_alloc(ws2) : NULL;
    CHECK_EQ(aclrtMemcpyAsync(a, bytes, x, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_SUCCESS);
    CHECK_EQ(aclnnInplaceMish(w1, ws1, e1, s), ACLNN_SUCCESS);
    CHECK_EQ(aclrtMemcpyAsync(b, bytes, a, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_SUCCESS);
    CHECK_EQ(aclnnInplaceMish(w2, ws2, e2, s), ACLNN_SUCCESS);
    CHECK_EQ(aclrtMemcpyAsync(b, 4, a, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(memcmp(a, ra, bytes) == 0);
    CHECK(memcmp(b, rb, bytes) == 0);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    aclTensor *ts[] = {tx, ta, tb, tra, trb};
    for (int k = 0; k < 5; k++) aclDestroyTensor(ts[k]);
    void *bs[] = {x, a, b, ra, rb, w1, w2};
    for (int k = 0; k < 7; k++)
        if (bs[k]) aclrtFree(bs[k]);
}

/* A repeatable executor launched on a busy stream, then re-pointed and launched again: the
 * first launch must use the addresses it was launched with (on a device, the arguments are
 * captured at launch), so both output buffers end up written. */
static void test_repoint_after_queued_launch(void) {
    const int64_t big = 1 << 23, n = 4096;
    void *bx = test_dev_alloc((size_t)big * 4), *by = test_dev_alloc((size_t)big * 4);
    void *xa = test_dev_alloc(n * 4), *ya = test_dev_alloc(n * 4), *xb = test_dev_alloc(n * 4),
         *yb = test_dev_alloc(n * 4);
    void *ra = test_dev_alloc(n * 4), *rb = test_dev_alloc(n * 4);
    test_rng r;
    test_rng_seed(&r, 4);
    test_fill(bx, 0, big, ACL_FLOAT, &r, -5, 5);
    test_fill(xa, 0, n, ACL_FLOAT, &r, -5, 5);
    test_fill(xb, 0, n, ACL_FLOAT, &r, -5, 5);
    aclTensor *tbx = t1(bx, big, ACL_FLOAT), *tby = t1(by, big, ACL_FLOAT);
    aclTensor *txa = t1(xa, n, ACL_FLOAT), *tya = t1(ya, n, ACL_FLOAT);
    aclTensor *txb = t1(xb, n, ACL_FLOAT), *tyb = t1(yb, n, ACL_FLOAT);
    aclTensor *tra = t1(ra, n, ACL_FLOAT), *trb = t1(rb, n, ACL_FLOAT);
    CHECK_EQ(mish_now(txa, tra), ACLNN_SUCCESS);
    CHECK_EQ(mish_now(txb, trb), ACLNN_SUCCESS);
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    uint64_t wsb, ws;
    aclOpExecutor *eb, *e;
    CHECK_EQ(aclnnMishGetWorkspaceSize(tbx, tby, &wsb, &eb), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishGetWorkspaceSize(txa, tya, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    void *wb = NULL, *w = ws ? test_dev_alloc(ws) : NULL;
    CHECK_EQ(launch(ACLNN_SUCCESS, wsb, eb, aclnnMish, s, &wb), ACLNN_SUCCESS); // keeps s busy
    CHECK_EQ(aclnnMish(w, ws, e, s), ACLNN_SUCCESS);                            // a -> ya
    CHECK_EQ(aclSetInputTensorAddr(e, 0, txb, xb), ACLNN_SUCCESS);
    CHECK_EQ(aclSetOutputTensorAddr(e, 0, tyb, yb), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMish(w, ws, e, s), ACLNN_SUCCESS); // b -> yb
    CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECKF(memcmp(ya, ra, n * 4) == 0,
           "the launch queued before aclSetInput/OutputTensorAddr "
           "did not write its own output (it ran with the later addresses)");
    CHECK(memcmp(yb, rb, n * 4) == 0);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    aclTensor *ts[] = {tbx, tby, txa, tya, txb, tyb, tra, trb};
    for (int k = 0; k < 8; k++) aclDestroyTensor(ts[k]);
    void *bs[] = {bx, by, xa, ya, xb, yb, ra, rb, wb, w};
    for (int k = 0; k < 10; k++)
        if (bs[k]) aclrtFree(bs[k]);
}

/* ---- many host threads, each with its own stream --------------------------------------------- */

enum { MT_THREADS = 4, MT_OPS = 50, MT_TYPES = 4, MT_SIZES = 10, MT_MAXN = 65537 };
static const int64_t mt_sizes[MT_SIZES] = {1, 7, 16, 63, 1000, 4095, 4097, 12345, 40000, 65537};
static float mt_x32[MT_MAXN], mt_g32[MT_MAXN];
static uint16_t mt_x16[MT_MAXN];
static void *mt_expected[MT_TYPES][MT_SIZES];

static size_t mt_out_bytes(int type, int64_t n) { return (size_t)n * (type == 1 ? 2 : 4); }

// Queues op `type` of size n on stream s (NULL: runs now) into `out`; the workspace, tensors
// and executor belong to the caller's lists until it has synchronized.
typedef struct mt_keep {
    aclTensor *t[3];
    void *w;
} mt_keep;

static aclnnStatus mt_queue(int type, int64_t n, void *out, aclrtStream s, mt_keep *k) {
    memset(k, 0, sizeof *k);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st;
    switch (type) {
    case 0: // Mish fp32
        k->t[0] = t1(mt_x32, n, ACL_FLOAT);
        k->t[1] = t1(out, n, ACL_FLOAT);
        st = aclnnMishGetWorkspaceSize(k->t[0], k->t[1], &ws, &e);
        return launch(st, ws, e, aclnnMish, s, &k->w);
    case 1: // Mish fp16
        k->t[0] = t1(mt_x16, n, ACL_FLOAT16);
        k->t[1] = t1(out, n, ACL_FLOAT16);
        st = aclnnMishGetWorkspaceSize(k->t[0], k->t[1], &ws, &e);
        return launch(st, ws, e, aclnnMish, s, &k->w);
    case 2: // MishBackward fp32
        k->t[0] = t1(mt_g32, n, ACL_FLOAT);
        k->t[1] = t1(mt_x32, n, ACL_FLOAT);
        k->t[2] = t1(out, n, ACL_FLOAT);
        st = aclnnMishBackwardGetWorkspaceSize(k->t[0], k->t[1], k->t[2], &ws, &e);
        return launch(st, ws, e, aclnnMishBackward, s, &k->w);
    default: // copy in, then InplaceMish fp32
        st = aclrtMemcpyAsync(out, (size_t)n * 4, mt_x32, (size_t)n * 4, ACL_MEMCPY_HOST_TO_DEVICE,
                              s);
        if (st != ACL_SUCCESS) return st;
        k->t[0] = t1(out, n, ACL_FLOAT);
        st = aclnnInplaceMishGetWorkspaceSize(k->t[0], &ws, &e);
        return launch(st, ws, e, aclnnInplaceMish, s, &k->w);
    }
}

static void mt_release(mt_keep *k) {
    for (int i = 0; i < 3; i++)
        if (k->t[i]) aclDestroyTensor(k->t[i]);
    if (k->w) aclrtFree(k->w);
}

typedef struct mt_result {
    int tid;
    int errors;     // failed calls
    int mismatches; // outputs not bitwise equal to the single-thread run
} mt_result;

static void *mt_worker(void *arg) {
    mt_result *res = arg;
    aclrtStream s = NULL;
    if (aclrtCreateStream(&s) != ACL_SUCCESS) {
        res->errors++;
        return NULL;
    }
    void *outs[MT_OPS];
    mt_keep keep[MT_OPS];
    int types[MT_OPS], sizes[MT_OPS];
    for (int k = 0; k < MT_OPS; k++) {
        types[k] = (k + res->tid) % MT_TYPES;
        sizes[k] = (k * 7 + res->tid * 3) % MT_SIZES;
        outs[k] = test_dev_alloc(mt_out_bytes(types[k], mt_sizes[sizes[k]]));
        if (mt_queue(types[k], mt_sizes[sizes[k]], outs[k], s, &keep[k]) != ACLNN_SUCCESS)
            res->errors++;
        if (k % 10 == 9 && aclrtSynchronizeStream(s) != ACL_SUCCESS) res->errors++;
    }
    if (aclrtSynchronizeStream(s) != ACL_SUCCESS) res->errors++;
    for (int k = 0; k < MT_OPS; k++) {
        if (memcmp(outs[k], mt_expected[types[k]][sizes[k]],
                   mt_out_bytes(types[k], mt_sizes[sizes[k]])) != 0)
            res->mismatches++;
        mt_release(&keep[k]);
        aclrtFree(outs[k]);
    }
    if (aclrtDestroyStream(s) != ACL_SUCCESS) res->errors++;
    return NULL;
}

static void test_streams_from_many_threads(void) {
    // the single-thread, synchronous results
    for (int t = 0; t < MT_TYPES; t++) {
        for (int si = 0; si < MT_SIZES; si++) {
            mt_keep k;
            mt_expected[t][si] = test_dev_alloc(mt_out_bytes(t, mt_sizes[si]));
            CHECK_EQ(mt_queue(t, mt_sizes[si], mt_expected[t][si], NULL, &k), ACLNN_SUCCESS);
            mt_release(&k);
        }
    }
    // spot check of the expected values themselves
    int64_t bad = 0;
    for (int si = 0; si < MT_SIZES; si++) {
        int64_t n = mt_sizes[si];
        for (int64_t i = 0; i < n; i += 97) {
            double x = mt_x32[i];
            if (test_ulp_error(ACL_FLOAT, ((float *)mt_expected[0][si])[i], og_ref_mish(x)) > 8)
                bad++;
            if (((float *)mt_expected[3][si])[i] != ((float *)mt_expected[0][si])[i]) bad++;
        }
    }
    CHECK_EQ(bad, 0);
    pthread_t th[MT_THREADS];
    mt_result res[MT_THREADS];
    for (int t = 0; t < MT_THREADS; t++) {
        res[t] = (mt_result){t, 0, 0};
        CHECK_EQ(pthread_create(&th[t], NULL, mt_worker, &res[t]), 0);
    }
    for (int t = 0; t < MT_THREADS; t++) {
        pthread_join(th[t], NULL);
        CHECKF(res[t].errors == 0, "thread %d: %d calls failed", t, res[t].errors);
        CHECKF(res[t].mismatches == 0,
               "thread %d: %d of %d outputs differ from the single-thread "
               "run",
               t, res[t].mismatches, MT_OPS);
    }
    for (int t = 0; t < MT_TYPES; t++)
        for (int si = 0; si < MT_SIZES; si++) aclrtFree(mt_expected[t][si]);
}

/* ---- determinism: threads, ISAs, store paths ------------------------------------------------- */

enum { SUITE_OUTS = 10 };
typedef struct suite_out {
    void *buf[SUITE_OUTS];
    size_t bytes[SUITE_OUTS];
} suite_out;

static float su_x32[200003], su_g32[200003], su_t32[70001], su_xt[301 * 257];
static uint16_t su_x16all[65536], su_g16[50001], su_x16[50001], su_gbf[40 * 301], su_xbf[17 * 301],
    su_bf30k[30001];
static float su_spec[64], su_spec_g[64];

static void suite_inputs(void) {
    test_rng r;
    test_rng_seed(&r, 5);
    test_fill(mt_x32, 0, MT_MAXN, ACL_FLOAT, &r, -10, 10);
    test_fill(mt_g32, 0, MT_MAXN, ACL_FLOAT, &r, -2, 2);
    test_fill(mt_x16, 0, MT_MAXN, ACL_FLOAT16, &r, -10, 10);
    test_rng_seed(&r, 6);
    test_fill(su_x32, 0, 200003, ACL_FLOAT, &r, -20, 20);
    test_fill(su_g32, 0, 200003, ACL_FLOAT, &r, -3, 3);
    test_fill(su_t32, 0, 70001, ACL_FLOAT, &r, -1, 1);
    test_fill(su_xt, 0, 301 * 257, ACL_FLOAT, &r, -9, 9);
    for (int i = 0; i < 65536; i++) su_x16all[i] = (uint16_t)i;
    test_fill(su_g16, 0, 50001, ACL_FLOAT16, &r, -2, 2);
    test_fill(su_x16, 0, 50001, ACL_FLOAT16, &r, -9, 9);
    test_fill(su_gbf, 0, 40 * 301, ACL_BF16, &r, -2, 2);
    test_fill(su_xbf, 0, 17 * 301, ACL_BF16, &r, -9, 9);
    test_fill(su_bf30k, 0, 30001, ACL_BF16, &r, -9, 9);
    const float sp[] = {0.0f,  -0.0f, 1e-30f, -1e-30f, 1e-45f,   -1e-45f,   0.5f, -1.1924f,
                        20,    -20,   88,     -88,     100,      -100,      160,  -160,
                        1e4f,  -1e4f, 3e38f,  -3e38f,  INFINITY, -INFINITY, NAN,  8.7f,
                        -8.7f, 15,    -15,    0.25f,   1,        -1,        2,    -2};
    for (int i = 0; i < 64; i++) {
        su_spec[i] = sp[i % 32] * (i < 32 ? 1.0f : 0.5f);
        su_spec_g[i] = i % 3 == 0 ? 1.0f : (float)test_rng_uniform(&r, -2, 2);
    }
    su_spec_g[7] = NAN;
    su_spec_g[8] = INFINITY;
}

static void *su_out(suite_out *o, int k, size_t bytes) {
    o->bytes[k] = bytes;
    o->buf[k] = test_dev_alloc(bytes);
    return o->buf[k];
}

// Runs every kind of plan (direct fp32, 16-bit conversion, broadcast gather, strided gather,
// two outputs, three mixed-dtype inputs, rounding through fp16, in place) into fresh outputs.
static int run_suite(suite_out *o) {
    int fails = 0;
    uint64_t ws;
    aclOpExecutor *e;
    aclnnStatus st;
    { // A: Mish fp32, direct
        aclTensor *x = t1(su_x32, 200003, ACL_FLOAT),
                  *y = t1(su_out(o, 0, 200003 * 4), 200003, ACL_FLOAT);
        fails += mish_now(x, y) != ACLNN_SUCCESS;
        aclDestroyTensor(x), aclDestroyTensor(y);
    }
    { // B: Mish fp16, every encoding
        aclTensor *x = t1(su_x16all, 65536, ACL_FLOAT16),
                  *y = t1(su_out(o, 1, 65536 * 2), 65536, ACL_FLOAT16);
        fails += mish_now(x, y) != ACLNN_SUCCESS;
        aclDestroyTensor(x), aclDestroyTensor(y);
    }
    { // C: MishBackward bf16, both inputs broadcast
        const int64_t gd[] = {40, 1, 301}, xd[] = {17, 301}, od[] = {40, 17, 301};
        aclTensor *g = aclCreateTensor(gd, 3, ACL_BF16, NULL, 0, ACL_FORMAT_ND, gd, 3, su_gbf);
        aclTensor *x = aclCreateTensor(xd, 2, ACL_BF16, NULL, 0, ACL_FORMAT_ND, xd, 2, su_xbf);
        aclTensor *gi = aclCreateTensor(od, 3, ACL_BF16, NULL, 0, ACL_FORMAT_ND, od, 3,
                                        su_out(o, 2, 40 * 17 * 301 * 2));
        st = aclnnMishBackwardGetWorkspaceSize(g, x, gi, &ws, &e);
        fails += test_run(st, ws, e, aclnnMishBackward, NULL) != ACLNN_SUCCESS;
        aclDestroyTensor(g), aclDestroyTensor(x), aclDestroyTensor(gi);
    }
    { // D: Mish fp32 from a transposed view
        const int64_t d[] = {301, 257}, stt[] = {1, 301};
        aclTensor *x = aclCreateTensor(d, 2, ACL_FLOAT, stt, 0, ACL_FORMAT_ND, NULL, 0, su_xt);
        aclTensor *y = aclCreateTensor(d, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0,
                                       su_out(o, 3, 301 * 257 * 4));
        fails += mish_now(x, y) != ACLNN_SUCCESS;
        aclDestroyTensor(x), aclDestroyTensor(y);
    }
    { // E: MishWithTanhx fp32
        aclTensor *x = t1(su_x32, 70001, ACL_FLOAT),
                  *y = t1(su_out(o, 4, 70001 * 4), 70001, ACL_FLOAT);
        aclTensor *t = t1(su_out(o, 5, 70001 * 4), 70001, ACL_FLOAT);
        st = aclnnMishWithTanhxGetWorkspaceSize(x, y, t, &ws, &e);
        fails += test_run(st, ws, e, aclnnMishWithTanhx, NULL) != ACLNN_SUCCESS;
        aclDestroyTensor(x), aclDestroyTensor(y), aclDestroyTensor(t);
    }
    { // F: MishBackwardWithTanhx fp16 g, fp32 x and t -> fp32
        aclTensor *g = t1(su_g16, 50001, ACL_FLOAT16), *x = t1(su_x32, 50001, ACL_FLOAT);
        aclTensor *t = t1(su_t32, 50001, ACL_FLOAT),
                  *gi = t1(su_out(o, 6, 50001 * 4), 50001, ACL_FLOAT);
        st = aclnnMishBackwardWithTanhxGetWorkspaceSize(g, x, t, gi, &ws, &e);
        fails += test_run(st, ws, e, aclnnMishBackwardWithTanhx, NULL) != ACLNN_SUCCESS;
        aclDestroyTensor(g), aclDestroyTensor(x), aclDestroyTensor(t), aclDestroyTensor(gi);
    }
    { // G: MishBackward fp16 inputs -> fp32, rounded through fp16
        aclTensor *g = t1(su_g16, 50001, ACL_FLOAT16), *x = t1(su_x16, 50001, ACL_FLOAT16);
        aclTensor *gi = t1(su_out(o, 7, 50001 * 4), 50001, ACL_FLOAT);
        st = aclnnMishBackwardGetWorkspaceSize(g, x, gi, &ws, &e);
        fails += test_run(st, ws, e, aclnnMishBackward, NULL) != ACLNN_SUCCESS;
        aclDestroyTensor(g), aclDestroyTensor(x), aclDestroyTensor(gi);
    }
    { // H: InplaceMish bf16
        void *b = su_out(o, 8, 30001 * 2);
        memcpy(b, su_bf30k, 30001 * 2);
        aclTensor *x = t1(b, 30001, ACL_BF16);
        st = aclnnInplaceMishGetWorkspaceSize(x, &ws, &e);
        fails += test_run(st, ws, e, aclnnInplaceMish, NULL) != ACLNN_SUCCESS;
        aclDestroyTensor(x);
    }
    { // I: MishBackward fp32 on special values
        aclTensor *g = t1(su_spec_g, 64, ACL_FLOAT), *x = t1(su_spec, 64, ACL_FLOAT);
        aclTensor *gi = t1(su_out(o, 9, 64 * 4), 64, ACL_FLOAT);
        st = aclnnMishBackwardGetWorkspaceSize(g, x, gi, &ws, &e);
        fails += test_run(st, ws, e, aclnnMishBackward, NULL) != ACLNN_SUCCESS;
        aclDestroyTensor(g), aclDestroyTensor(x), aclDestroyTensor(gi);
    }
    return fails;
}

static void suite_free(suite_out *o) {
    for (int k = 0; k < SUITE_OUTS; k++)
        if (o->buf[k]) aclrtFree(o->buf[k]);
    memset(o, 0, sizeof *o);
}

// Outputs whose bytes differ; NaNs compare by NaN-ness (fp32 outputs) or bits (16-bit).
static int suite_diff(const suite_out *a, const suite_out *b, const char *what) {
    int diff = 0;
    for (int k = 0; k < SUITE_OUTS; k++) {
        if (memcmp(a->buf[k], b->buf[k], a->bytes[k]) != 0) {
            fprintf(stderr, "    %s: output %c differs\n", what, 'A' + k);
            diff++;
        }
    }
    return diff;
}

static void test_suite_is_right(void) {
    // the reference run of the determinism tests is itself checked against float64
    suite_out o = {0};
    CHECK_EQ(run_suite(&o), 0);
    int64_t bad = 0;
    for (int64_t i = 0; i < 200003; i += 13)
        if (test_ulp_error(ACL_FLOAT, ((float *)o.buf[0])[i], og_ref_mish(su_x32[i])) > 8) bad++;
    for (int64_t i = 0; i < 65536; i++) {
        double x = test_load(su_x16all, i, ACL_FLOAT16);
        if (test_ulp_error(ACL_FLOAT16, test_load(o.buf[1], i, ACL_FLOAT16),
                           test_round_to(ACL_FLOAT16, og_ref_mish(x))) > 1)
            bad++;
    }
    for (int64_t i = 0; i < 64; i++) {
        double g = su_spec_g[i], x = su_spec[i], got = ((float *)o.buf[9])[i];
        double ref = g * og_ref_mish_grad(x);
        if (isnan(ref) ? !isnan(got)
                       : (fabs(x + 1.19) >= 0.1 && test_ulp_error(ACL_FLOAT, got, ref) > 8))
            bad++;
    }
    CHECK_EQ(bad, 0);
    suite_free(&o);
}

static void test_bitwise_identical_across_thread_counts(void) {
    int before = opgrad_get_num_threads();
    const int counts[] = {1, 2, 3, 7};
    suite_out ref = {0};
    CHECK_EQ(opgrad_set_num_threads(1), 0);
    CHECK_EQ(run_suite(&ref), 0);
    for (int c = 1; c < 4; c++) {
        suite_out o = {0};
        CHECK_EQ(opgrad_set_num_threads(counts[c]), 0);
        CHECK_EQ(run_suite(&o), 0);
        char what[64];
        snprintf(what, sizeof what, "%d threads vs 1", counts[c]);
        CHECK_EQ(suite_diff(&ref, &o, what), 0);
        suite_free(&o);
    }
    opgrad_set_num_threads(before);
    suite_free(&ref);
}

static void test_bitwise_identical_across_isas_and_store_paths(void) {
    opgrad_isa cpu = opgrad_cpu_isa();
    printf("     (cpu ISA: %s)\n", opgrad_isa_name(cpu));
    suite_out ref = {0};
    CHECK_EQ(opgrad_set_max_isa(OPGRAD_ISA_SCALAR), OPGRAD_ISA_SCALAR);
    CHECK_EQ(run_suite(&ref), 0);
    for (int nt = 0; nt < 2; nt++) {
        // nt = 1: every contiguous output takes the non-temporal CopyOut path
        if (nt) setenv("OPGRAD_NT_BYTES", "1", 1);
        for (int isa = OPGRAD_ISA_SCALAR; isa <= (int)cpu; isa++) {
            if (!nt && isa == OPGRAD_ISA_SCALAR) continue;
            CHECK_EQ(opgrad_set_max_isa((opgrad_isa)isa), (opgrad_isa)isa);
            CHECK_EQ(opgrad_active_isa(), (opgrad_isa)isa);
            suite_out o = {0};
            CHECK_EQ(run_suite(&o), 0);
            char what[64];
            snprintf(what, sizeof what, "%s%s vs scalar", opgrad_isa_name((opgrad_isa)isa),
                     nt ? " (non-temporal stores)" : "");
            CHECK_EQ(suite_diff(&ref, &o, what), 0);
            suite_free(&o);
        }
        if (nt) unsetenv("OPGRAD_NT_BYTES");
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT);
    suite_free(&ref);
}

// Outputs of >= 16 MiB take the non-temporal path by default, here from a misaligned start;
// they must match the same values computed in small pieces.
static void test_large_misaligned_outputs_match_small_pieces(void) {
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int k = 0; k < 3; k++) {
        aclDataType dt = dts[k];
        size_t es = aclDataTypeSize(dt);
        const int64_t n = ((int64_t)16 << 20) / (int64_t)es + 5, off = 3, piece = 1 << 18;
        void *x = test_dev_alloc((size_t)n * es), *y = test_dev_alloc((size_t)(n + off) * es);
        void *yp = test_dev_alloc((size_t)n * es);
        test_rng r;
        test_rng_seed(&r, 7 + k);
        test_fill(x, 0, n, dt, &r, -9, 9);
        const int64_t d[] = {n}, sd[] = {n + off};
        aclTensor *tx = t1(x, n, dt);
        aclTensor *ty = aclCreateTensor(d, 1, dt, NULL, off, ACL_FORMAT_ND, sd, 1, y);
        CHECK_EQ(mish_now(tx, ty), ACLNN_SUCCESS);
        for (int64_t s = 0; s < n; s += piece) {
            int64_t m = n - s < piece ? n - s : piece;
            aclTensor *px = t1((char *)x + s * (int64_t)es, m, dt);
            aclTensor *py = t1((char *)yp + s * (int64_t)es, m, dt);
            CHECK_EQ(mish_now(px, py), ACLNN_SUCCESS);
            aclDestroyTensor(px);
            aclDestroyTensor(py);
        }
        CHECKF(memcmp((char *)y + off * (int64_t)es, yp, (size_t)n * es) == 0,
               "dtype %d: the large output differs from the pieces", (int)dt);
        const unsigned char *yb = y;
        int untouched = 1;
        for (int64_t i = 0; i < off * (int64_t)es; i++) untouched &= yb[i] == 0;
        CHECK(untouched);
        aclDestroyTensor(tx);
        aclDestroyTensor(ty);
        aclrtFree(x);
        aclrtFree(y);
        aclrtFree(yp);
    }
}

// A deadlock must fail the test, not stall the suite until CTest's timeout.
static void watchdog(int sig) {
    (void)sig;
    static const char msg[] = "FAIL watchdog: no progress for 300 s (deadlock?)\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(2);
}

int main(void) {
    signal(SIGALRM, watchdog);
    alarm(300);
    suite_inputs();
    RUN(test_phase2_on_stream_is_asynchronous);
    RUN(test_null_stream_is_synchronous);
    RUN(test_stream_handle_errors);
    RUN(test_memcpy_async_ordered_with_kernels);
    RUN(test_repoint_after_queued_launch);
    RUN(test_streams_from_many_threads);
    RUN(test_suite_is_right);
    RUN(test_bitwise_identical_across_thread_counts);
    RUN(test_bitwise_identical_across_isas_and_store_paths);
    RUN(test_large_misaligned_outputs_match_small_pieces);
    return test_summary();
}
