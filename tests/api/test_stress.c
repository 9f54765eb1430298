/* Stream and executor lifetimes under concurrency (CI runs this under ThreadSanitizer): threads x
 * streams x executors; a repeatable executor queued many times on several streams; streams
 * destroyed (twice at once, too) while other threads submit to them and synchronize on them;
 * executors destroyed while their runs are queued; a task that waits for its own stream;
 * aclFinalize with work queued. Calls racing a destroy must return success or a clear "not a live
 * stream" error, never hang or crash; every run that was accepted must have run, with the right
 * values. A watchdog turns a hang into a failure. OPGRAD_TEST_QUICK=1 runs fewer rounds. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mish.h"
#include "check/reference.h"
#include "opgrad/opgrad.h"
#include "runtime/error.h"
#include "runtime/stream.h" // og_stream_submit: white-box tasks that call the runtime
#include "test.h"
#include "testutil.h"

enum { N = 256 }; // elements per tensor: small, so that launching and locking dominate

static float x[N], x2[N];             // inputs of every run
static float mish_ref[N], add_ref[N]; // mish(x) and x + 2 * x2, checked once against float64
static aclScalar *two;
static bool quick;

// CHECK is not thread-safe (it counts in a plain int): worker threads count failures here.
static atomic_int worker_failures;
#define WCHECK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            atomic_fetch_add(&worker_failures, 1);                                                 \
            fprintf(stderr, "  %s:%d: %s failed: ", __FILE__, __LINE__, #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

/* ---- helpers ------------------------------------------------------------------------------- */

// Every launch writes memory of its own (no two queued runs write the same bytes), NaN-filled so
// that a run that never happened is seen.
static float *out_new(void) {
    float *p = malloc(N * sizeof(float));
    if (!p) abort();
    memset(p, 0xff, N * sizeof(float));
    return p;
}

static void *ws_new(uint64_t ws) {
    void *p = ws ? malloc(ws) : NULL;
    if (ws && !p) abort();
    return p;
}

static aclTensor *vec(float *data) {
    const int64_t d[1] = {N};
    return test_tensor(d, 1, ACL_FLOAT, data);
}

// Plans out = mish(x) (single-use); NULL on failure (counted).
static aclOpExecutor *plan_mish(float *out, uint64_t *ws) {
    aclTensor *tx = vec(x), *ty = vec(out);
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnMishGetWorkspaceSize(tx, ty, ws, &e);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    WCHECK(st == ACLNN_SUCCESS, "status %d: %s", (int)st, aclGetRecentErrMsg());
    return st == ACLNN_SUCCESS ? e : NULL;
}

// Plans out = x + 2 * x2 (single-use).
static aclOpExecutor *plan_add(float *out, uint64_t *ws) {
    aclTensor *ta = vec(x), *tb = vec(x2), *ty = vec(out);
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnAddGetWorkspaceSize(ta, tb, two, ty, ws, &e);
    aclDestroyTensor(ta);
    aclDestroyTensor(tb);
    aclDestroyTensor(ty);
    WCHECK(st == ACLNN_SUCCESS, "status %d: %s", (int)st, aclGetRecentErrMsg());
    return st == ACLNN_SUCCESS ? e : NULL;
}

// A call refused because its stream is gone (or going): the status the API documents and a
// message that says why.
static bool refused_dead_stream(int st, int expected) {
    return st == expected && strstr(aclGetRecentErrMsg(), "not a live stream") != NULL;
}

// The runs a thread launched and that were accepted: checked (and freed) once they must be done.
typedef struct run {
    float *out;
    void *ws;
    const float *ref;
} run;
typedef struct runs {
    run *v;
    int n, cap;
} runs;

static void runs_add(runs *r, float *out, void *ws, const float *ref) {
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->v = realloc(r->v, (size_t)r->cap * sizeof *r->v);
        if (!r->v) abort();
    }
    r->v[r->n++] = (run){out, ws, ref};
}

// Number of runs whose output is not the expected one (bitwise: a run computes the same bits on
// any stream and thread); frees them all.
static int runs_check_free(runs *r) {
    int bad = 0;
    for (int i = 0; i < r->n; i++) {
        if (memcmp(r->v[i].out, r->v[i].ref, N * sizeof(float)) != 0) bad++;
        free(r->v[i].out);
        free(r->v[i].ws);
    }
    free(r->v);
    *r = (runs){0};
    return bad;
}

// Phase 2 of a single-use executor on `s`. Accepted: the run is recorded. Refused because the
// stream is gone: the executor is released (still live when refused before it was consumed) and
// false is returned; any other status is a failure.
static bool launch_single(aclOpExecutor *e,
                          aclnnStatus (*phase2)(void *, uint64_t, aclOpExecutor *, aclrtStream),
                          uint64_t ws, aclrtStream s, float *out, const float *ref, runs *r) {
    void *w = ws_new(ws);
    aclnnStatus st = phase2(w, ws, e, s);
    if (st == ACLNN_SUCCESS) {
        runs_add(r, out, w, ref);
        return true;
    }
    WCHECK(refused_dead_stream(st, ACLNN_ERR_PARAM_INVALID), "status %d: %s", (int)st,
           aclGetRecentErrMsg());
    aclnnStatus d = aclDestroyAclOpExecutor(e);
    WCHECK(d == ACLNN_SUCCESS || d == ACLNN_ERR_PARAM_INVALID, "destroy: status %d", (int)d);
    free(out);
    free(w);
    return false;
}

static void run_threads(int n, void *(*fn)(void *), void *args, size_t arg_size) {
    pthread_t th[16];
    for (int t = 0; t < n; t++)
        if (pthread_create(&th[t], NULL, fn, (char *)args + (size_t)t * arg_size) != 0) abort();
    for (int t = 0; t < n; t++) pthread_join(th[t], NULL);
}

static void check_workers(void) {
    int failures = atomic_exchange(&worker_failures, 0);
    CHECK_EQ(failures, 0);
}

static void setup(void) {
    test_rng r;
    test_rng_seed(&r, 19);
    test_fill(x, 0, N, ACL_FLOAT, &r, -6, 6);
    test_fill(x2, 0, N, ACL_FLOAT, &r, -4, 4);
    float f2 = 2.0f;
    two = aclCreateScalar(&f2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = plan_mish(mish_ref, &ws);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnMish, NULL), ACLNN_SUCCESS);
    e = plan_add(add_ref, &ws);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnAdd, NULL), ACLNN_SUCCESS);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        if (test_ulp_error(ACL_FLOAT, mish_ref[i], og_ref_mish(x[i])) > 8) bad++;
        // one fused multiply-add, rounded once (the double sum is exact for these ranges)
        if (add_ref[i] != (float)((double)x[i] + 2.0 * (double)x2[i])) bad++;
    }
    CHECK_EQ(bad, 0);
    check_workers();
}

/* ---- a repeatable executor queued many times on several streams --------------------------- */

// Regression (issue 19, item 5): a launch copied the whole executor, its atomic reference count
// included, while dispatchers released earlier launches of it: a TSan data race.
enum { REP_STREAMS = 3, REP_THREADS = 3 };
static struct {
    aclOpExecutor *e;
    uint64_t ws;
    aclrtStream s[REP_STREAMS];
    pthread_mutex_t repoint; // re-pointing one executor from two threads at once is not allowed
    int per_thread;
} rep = {.repoint = PTHREAD_MUTEX_INITIALIZER};

typedef struct rep_arg {
    int id;
    runs r;
} rep_arg;

static void *rep_thread(void *arg) {
    rep_arg *a = arg;
    for (int k = 0; k < rep.per_thread; k++) {
        float *out = out_new();
        void *w = ws_new(rep.ws);
        pthread_mutex_lock(&rep.repoint);
        aclnnStatus st = opgrad_executor_run(rep.e, (void *[]){NULL, out}, 2, w, rep.ws,
                                             rep.s[(a->id + k) % REP_STREAMS]);
        pthread_mutex_unlock(&rep.repoint);
        WCHECK(st == ACLNN_SUCCESS, "status %d: %s", (int)st, aclGetRecentErrMsg());
        runs_add(&a->r, out, w, mish_ref);
    }
    return NULL;
}

static void test_repeatable_executor_queued_on_many_streams(void) {
    rep.per_thread = quick ? 100 : 300;
    float *first = out_new();
    rep.e = plan_mish(first, &rep.ws);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(rep.e), ACLNN_SUCCESS);
    for (int i = 0; i < REP_STREAMS; i++) CHECK_EQ(aclrtCreateStream(&rep.s[i]), ACL_SUCCESS);
    rep_arg args[REP_THREADS] = {{0}};
    for (int t = 0; t < REP_THREADS; t++) args[t].id = t;
    run_threads(REP_THREADS, rep_thread, args, sizeof args[0]);
    // destroyed while runs are queued: they keep it alive and still run
    CHECK_EQ(aclDestroyAclOpExecutor(rep.e), ACLNN_SUCCESS);
    for (int i = 0; i < REP_STREAMS; i++) CHECK_EQ(aclrtSynchronizeStream(rep.s[i]), ACL_SUCCESS);
    int bad = 0, total = 0;
    for (int t = 0; t < REP_THREADS; t++) {
        total += args[t].r.n;
        bad += runs_check_free(&args[t].r);
    }
    CHECK_EQ(total, REP_THREADS * rep.per_thread);
    CHECK_EQ(bad, 0);
    for (int i = 0; i < REP_STREAMS; i++) CHECK_EQ(aclrtDestroyStream(rep.s[i]), ACL_SUCCESS);
    free(first);
    check_workers();
}

/* ---- a stream destroyed while other threads use it ---------------------------------------- */

// Regression (issue 19, item 6): aclrtSynchronizeStream and submits looked the stream up, then
// locked it: a destroy in between freed it under them (TSan race on its condition variable, ASan
// use after free, or a hang re-locking the freed mutex).
enum { USERS = 3, USER_CALLS = 48 };
static int64_t copy_src[USER_CALLS];

typedef struct user {
    aclrtStream s;
    atomic_int *calls;
    int64_t dst[USER_CALLS];
    bool copied[USER_CALLS]; // this copy was accepted
    runs r;
} user;

static void *user_thread(void *arg) {
    user *u = arg;
    for (int i = 0;; i++) {
        int st;
        if (i >= USER_CALLS || i % 3 == 2) {
            st = aclrtSynchronizeStream(u->s);
        } else if (i % 3 == 1) {
            uint64_t ws = 0;
            float *out = out_new();
            aclOpExecutor *e = plan_mish(out, &ws);
            if (!e) break;
            st = launch_single(e, aclnnMish, ws, u->s, out, mish_ref, &u->r) ? 0 : -1;
            if (st) break; // refusal checked by launch_single
        } else {
            st = aclrtMemcpyAsync(&u->dst[i], sizeof u->dst[i], &copy_src[i], sizeof copy_src[i],
                                  ACL_MEMCPY_HOST_TO_HOST, u->s);
            u->copied[i] = st == ACL_SUCCESS;
        }
        atomic_fetch_add(u->calls, 1);
        if (st != ACL_SUCCESS) {
            WCHECK(refused_dead_stream(st, ACL_ERROR_INVALID_PARAM), "call %d: status %d: %s", i,
                   st, aclGetRecentErrMsg());
            break;
        }
        if (i >= USER_CALLS) sched_yield(); // only synchronizing now, until the destroy
    }
    return NULL;
}

typedef struct destroyer {
    aclrtStream s;
    pthread_barrier_t *go;
    aclError st;
    char msg[256];
} destroyer;

static void *destroy_thread(void *arg) {
    destroyer *d = arg;
    pthread_barrier_wait(d->go);
    d->st = aclrtDestroyStream(d->s);
    snprintf(d->msg, sizeof d->msg, "%s", aclGetRecentErrMsg());
    return NULL;
}

static void test_destroy_stream_while_threads_use_it(void) {
    for (int i = 0; i < USER_CALLS; i++) copy_src[i] = i + 1;
    int rounds = quick ? 15 : 50;
    for (int round = 0; round < rounds; round++) {
        aclrtStream s = NULL;
        CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
        atomic_int calls = 0;
        static user users[USERS];
        pthread_t th[USERS];
        for (int t = 0; t < USERS; t++) {
            memset(&users[t], 0, sizeof users[t]);
            users[t].s = s;
            users[t].calls = &calls;
            if (pthread_create(&th[t], NULL, user_thread, &users[t]) != 0) abort();
        }
        // Destroy once the users are busy (after a few calls each; later ones race the destroy),
        // from two threads at once: exactly one destroys it, the other is told it is gone.
        while (atomic_load(&calls) < USERS * (2 + round % 8)) sched_yield();
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        destroyer d[2] = {{s, &go, -1, ""}, {s, &go, -1, ""}};
        pthread_t dt;
        if (pthread_create(&dt, NULL, destroy_thread, &d[1]) != 0) abort();
        destroy_thread(&d[0]);
        pthread_join(dt, NULL);
        pthread_barrier_destroy(&go);
        CHECKF((d[0].st == ACL_SUCCESS) != (d[1].st == ACL_SUCCESS),
               "two concurrent destroys returned %d and %d", d[0].st, d[1].st);
        for (int k = 0; k < 2; k++)
            if (d[k].st != ACL_SUCCESS)
                CHECKF(d[k].st == ACL_ERROR_INVALID_PARAM && strstr(d[k].msg, "not a live stream"),
                       "status %d: %s", d[k].st, d[k].msg);
        for (int t = 0; t < USERS; t++) pthread_join(th[t], NULL);
        // everything accepted ran before the destroy returned
        int bad = 0;
        for (int t = 0; t < USERS; t++) {
            for (int i = 0; i < USER_CALLS; i++)
                if (users[t].copied[i] && users[t].dst[i] != i + 1) bad++;
            bad += runs_check_free(&users[t].r);
        }
        CHECK_EQ(bad, 0);
    }
    check_workers();
}

/* ---- an executor destroyed while other threads launch it ---------------------------------- */

// Phase 2 looked the executor up, then read it: a destroy in between (with the last queued run
// finishing) freed it under the launch. Now the lookup takes a reference.
enum { LAUNCHERS = 3 };
static struct {
    aclOpExecutor *e;
    uint64_t ws;
    void *w; // one workspace: every run is on one stream, so they never overlap
    aclrtStream s;
    float *out; // every run writes the same values here, one after the other
    atomic_int accepted;
} gone;

static void *launcher_thread(void *arg) {
    (void)arg;
    for (;;) {
        aclnnStatus st = aclnnMish(gone.w, gone.ws, gone.e, gone.s);
        if (st != ACLNN_SUCCESS) {
            WCHECK(st == ACLNN_ERR_PARAM_INVALID &&
                       strstr(aclGetRecentErrMsg(), "not a live executor"),
                   "status %d: %s", (int)st, aclGetRecentErrMsg());
            return NULL;
        }
        atomic_fetch_add(&gone.accepted, 1);
    }
}

static void test_destroy_executor_while_threads_launch_it(void) {
    int rounds = quick ? 20 : 60;
    for (int round = 0; round < rounds; round++) {
        gone.out = out_new();
        gone.e = plan_mish(gone.out, &gone.ws);
        CHECK_EQ(aclSetAclOpExecutorRepeatable(gone.e), ACLNN_SUCCESS);
        gone.w = ws_new(gone.ws);
        CHECK_EQ(aclrtCreateStream(&gone.s), ACL_SUCCESS);
        atomic_store(&gone.accepted, 0);
        pthread_t th[LAUNCHERS];
        for (int t = 0; t < LAUNCHERS; t++)
            if (pthread_create(&th[t], NULL, launcher_thread, NULL) != 0) abort();
        while (atomic_load(&gone.accepted) < 1 + round % 16) sched_yield();
        CHECK_EQ(aclDestroyAclOpExecutor(gone.e), ACLNN_SUCCESS);
        for (int t = 0; t < LAUNCHERS; t++) pthread_join(th[t], NULL);
        CHECK_EQ(aclrtSynchronizeStream(gone.s), ACL_SUCCESS);
        CHECK(memcmp(gone.out, mish_ref, sizeof mish_ref) == 0);
        CHECK_EQ(aclrtDestroyStream(gone.s), ACL_SUCCESS);
        free(gone.out);
        free(gone.w);
    }
    check_workers();
}

/* ---- waiting for one's own stream from a task on it --------------------------------------- */

typedef struct own {
    aclrtStream self, other;
    int sync_self, destroy_self, finalize, sync_other;
    char msg[3][256];
} own;

static int waits_for_itself(void *arg) {
    own *o = arg;
    o->sync_self = aclrtSynchronizeStream(o->self); // used to wait for itself forever
    snprintf(o->msg[0], sizeof o->msg[0], "%s", aclGetRecentErrMsg());
    o->destroy_self = aclrtDestroyStream(o->self); // would join its own thread
    snprintf(o->msg[1], sizeof o->msg[1], "%s", aclGetRecentErrMsg());
    o->finalize = aclFinalize(); // would wait for this stream too
    snprintf(o->msg[2], sizeof o->msg[2], "%s", aclGetRecentErrMsg());
    o->sync_other = aclrtSynchronizeStream(o->other); // another stream: fine
    return ACL_SUCCESS;
}

static void test_task_waiting_for_its_own_stream_is_refused(void) {
    aclrtStream a = NULL, b = NULL;
    CHECK_EQ(aclrtCreateStream(&a), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&b), ACL_SUCCESS);
    runs r = {0};
    uint64_t ws = 0;
    float *out = out_new();
    aclOpExecutor *e = plan_mish(out, &ws);
    CHECK(e && launch_single(e, aclnnMish, ws, b, out, mish_ref, &r));
    own o = {a, b, -1, -1, -1, -1, {""}};
    CHECK_EQ(og_stream_submit(a, "test", waits_for_itself, NULL, &o, ACL_ERROR_INVALID_PARAM), 0);
    CHECK_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);
    CHECK_EQ(o.sync_self, ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(o.destroy_self, ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(o.finalize, ACL_ERROR_API_NOT_SUPPORT);
    for (int k = 0; k < 3; k++)
        CHECKF(strstr(o.msg[k], "would wait for itself"), "message %d: \"%s\"", k, o.msg[k]);
    CHECK_EQ(o.sync_other, ACL_SUCCESS);
    int bad = runs_check_free(&r); // b's run was done when the task's synchronize returned
    CHECK_EQ(bad, 0);
    CHECK_EQ(aclrtDestroyStream(a), ACL_SUCCESS); // still live: the task's destroy was refused
    CHECK_EQ(aclrtDestroyStream(b), ACL_SUCCESS);
    check_workers();
}

/* ---- aclFinalize with work queued --------------------------------------------------------- */

static atomic_int slow_done;

static int slow_task(void *arg) {
    (void)arg;
    // still queued when aclFinalize is called (what is checked below does not rely on it)
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    atomic_store(&slow_done, 1);
    return ACL_SUCCESS;
}

static int failing_task(void *arg) {
    (void)arg;
    return og_fail(ACLNN_ERR_PARAM_INVALID, "test_stress: this queued task fails on purpose");
}

static void test_finalize_waits_for_queued_work(void) {
    CHECK_EQ(aclInit(NULL), ACL_SUCCESS);
    aclrtStream a = NULL, b = NULL;
    CHECK_EQ(aclrtCreateStream(&a), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&b), ACL_SUCCESS);
    runs r = {0};
    CHECK_EQ(og_stream_submit(a, "test", slow_task, NULL, NULL, ACL_ERROR_INVALID_PARAM), 0);
    for (int k = 0; k < 4; k++) {
        uint64_t ws = 0;
        float *out = out_new();
        aclOpExecutor *e = k % 2 ? plan_add(out, &ws) : plan_mish(out, &ws);
        CHECK(e && launch_single(e, k % 2 ? aclnnAdd : aclnnMish, ws, k < 2 ? a : b, out,
                                 k % 2 ? add_ref : mish_ref, &r));
    }
    CHECK_EQ(og_stream_submit(b, "test", failing_task, NULL, NULL, ACL_ERROR_INVALID_PARAM), 0);
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    // everything queued has run, without a synchronize
    CHECK(atomic_load(&slow_done));
    int bad = runs_check_free(&r);
    CHECK_EQ(bad, 0);
    // the streams are still there, and b still holds its error for its synchronize
    CHECK_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(b), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("fails on purpose");
    CHECK_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    CHECK_EQ(aclrtDestroyStream(a), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(b), ACL_SUCCESS);
    check_workers();
}

/* ---- threads x streams x executors -------------------------------------------------------- */

enum { WORKERS = 4 };
static _Atomic(aclrtStream) shared_stream; // replaced (destroyed) by the main thread at any time
static atomic_int shared_calls, workers_done;

typedef struct worker {
    int iters;
    runs shared; // accepted runs on shared streams: checked once the last one is destroyed
    int bad;
} worker;

static void *stress_worker(void *arg) {
    worker *w = arg;
    for (int it = 0; it < w->iters; it++) {
        aclrtStream ab[2] = {NULL, NULL};
        WCHECK(aclrtCreateStream(&ab[0]) == ACL_SUCCESS && aclrtCreateStream(&ab[1]) == 0, "%s",
               aclGetRecentErrMsg());
        runs r = {0};
        // a repeatable Mish queued on both streams, destroyed while its runs are queued
        uint64_t ws = 0;
        float *out = out_new();
        aclOpExecutor *rep_e = plan_mish(out, &ws);
        WCHECK(aclSetAclOpExecutorRepeatable(rep_e) == ACLNN_SUCCESS, "%s", aclGetRecentErrMsg());
        for (int k = 0; k < 6; k++) {
            if (k) out = out_new();
            void *wsp = ws_new(ws);
            aclnnStatus st =
                k ? opgrad_executor_run(rep_e, (void *[]){NULL, out}, 2, wsp, ws, ab[k % 2])
                  : aclnnMish(wsp, ws, rep_e, ab[0]);
            WCHECK(st == ACLNN_SUCCESS, "status %d: %s", (int)st, aclGetRecentErrMsg());
            runs_add(&r, out, wsp, mish_ref);
        }
        WCHECK(aclDestroyAclOpExecutor(rep_e) == ACLNN_SUCCESS, "%s", aclGetRecentErrMsg());
        // single-use Adds on both
        for (int k = 0; k < 4; k++) {
            out = out_new();
            aclOpExecutor *e = plan_add(out, &ws);
            WCHECK(e && launch_single(e, aclnnAdd, ws, ab[k % 2], out, add_ref, &r), "add %d", k);
        }
        // single-use runs on the shared stream, which may be destroyed meanwhile
        for (int k = 0; k < 4; k++) {
            aclrtStream sh = atomic_load(&shared_stream);
            out = out_new();
            aclOpExecutor *e = k % 2 ? plan_add(out, &ws) : plan_mish(out, &ws);
            if (e)
                launch_single(e, k % 2 ? aclnnAdd : aclnnMish, ws, sh, out,
                              k % 2 ? add_ref : mish_ref, &w->shared);
            aclError st = aclrtSynchronizeStream(sh);
            WCHECK(st == ACL_SUCCESS || refused_dead_stream(st, ACL_ERROR_INVALID_PARAM),
                   "status %d: %s", st, aclGetRecentErrMsg());
            atomic_fetch_add(&shared_calls, 1);
        }
        // one stream synchronized, both destroyed with b's work possibly still queued
        WCHECK(aclrtSynchronizeStream(ab[0]) == ACL_SUCCESS, "%s", aclGetRecentErrMsg());
        WCHECK(aclrtDestroyStream(ab[1]) == ACL_SUCCESS, "%s", aclGetRecentErrMsg());
        WCHECK(aclrtDestroyStream(ab[0]) == ACL_SUCCESS, "%s", aclGetRecentErrMsg());
        w->bad += runs_check_free(&r);
    }
    atomic_fetch_add(&workers_done, 1);
    return NULL;
}

static void test_threads_streams_executors(void) {
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    atomic_store(&shared_stream, s);
    atomic_store(&shared_calls, 0);
    atomic_store(&workers_done, 0);
    worker w[WORKERS] = {{0}};
    pthread_t th[WORKERS];
    for (int t = 0; t < WORKERS; t++) {
        w[t].iters = quick ? 10 : 30;
        if (pthread_create(&th[t], NULL, stress_worker, &w[t]) != 0) abort();
    }
    // Replace the shared stream whenever the workers have used it a few times: the old one is
    // destroyed while workers may be submitting to it or synchronizing on it.
    int replaced = 0, next = 0;
    do {
        next += WORKERS;
        while (atomic_load(&shared_calls) < next && atomic_load(&workers_done) < WORKERS)
            sched_yield();
        aclrtStream fresh = NULL;
        CHECK_EQ(aclrtCreateStream(&fresh), ACL_SUCCESS);
        aclrtStream old = atomic_exchange(&shared_stream, fresh);
        CHECK_EQ(aclrtDestroyStream(old), ACL_SUCCESS);
        replaced++;
    } while (atomic_load(&workers_done) < WORKERS);
    for (int t = 0; t < WORKERS; t++) pthread_join(th[t], NULL);
    CHECK_EQ(aclrtDestroyStream(atomic_load(&shared_stream)), ACL_SUCCESS);
    int bad = 0, shared_runs = 0;
    for (int t = 0; t < WORKERS; t++) {
        bad += w[t].bad;
        shared_runs += w[t].shared.n;
        bad += runs_check_free(&w[t].shared);
    }
    CHECK_EQ(bad, 0);
    if (getenv("OPGRAD_TEST_VERBOSE"))
        printf("     shared stream replaced %d times, %d of %d shared runs accepted\n", replaced,
               shared_runs, 4 * WORKERS * w[0].iters);
    check_workers();
}

/* ---- main ---------------------------------------------------------------------------------- */

// A hang (deadlock, a wait on freed memory) fails the test instead of blocking CI.
static void watchdog(int sig) {
    (void)sig;
    static const char msg[] = "FAIL (watchdog: hung for 60 s, a deadlock?) ";
    if (write(2, msg, sizeof msg - 1) > 0 && write(2, test_current, strlen(test_current)) > 0)
        (void)!write(2, "\n", 1);
    _exit(3);
}

// `test_stress NAME` runs only the tests whose name contains NAME (after setup).
static const char *only;
#define RUN_WATCHED(fn)                                                                            \
    do {                                                                                           \
        alarm(60);                                                                                 \
        if (!only || strstr(#fn, only)) RUN(fn);                                                   \
    } while (0)

int main(int argc, char **argv) {
    signal(SIGALRM, watchdog);
    quick = test_quick_mode();
    only = argc > 1 ? argv[1] : NULL;
    alarm(60);
    RUN(setup);
    RUN_WATCHED(test_repeatable_executor_queued_on_many_streams);
    RUN_WATCHED(test_destroy_stream_while_threads_use_it);
    RUN_WATCHED(test_destroy_executor_while_threads_launch_it);
    RUN_WATCHED(test_task_waiting_for_its_own_stream_is_refused);
    RUN_WATCHED(test_finalize_waits_for_queued_work);
    RUN_WATCHED(test_threads_streams_executors);
    aclDestroyScalar(two);
    return test_summary();
}
