/* API-level stress of the worker pool behind every operator: many short multi-core operators,
 * back to back, from two host threads at once, with more pool threads than CPUs and a thread
 * count that changes between operators (so consecutive plans have different core counts; the
 * largest size is cut into several ranges per thread, which the threads claim dynamically).
 * Each result must be bitwise the one of a quiet single run, and the run must neither hang nor
 * crash. A watchdog turns a deadlock into a failure; a crash ends the binary (a failure).
 * A plan also has to run right when the thread count changes between its two phases (its
 * workspace holds tile buffers for the threads it was planned for). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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

enum { OPS = 1000, HOSTS = 2, SIZES = 3, MAXN = 200000 };
static const int64_t sizes[SIZES] = {40000, 9000, 200000};
static float x[MAXN], g[MAXN];
static float *expected_fwd[SIZES], *expected_bwd[SIZES];
static atomic_int finished;

static aclTensor *t1(void *data, int64_t n) {
    const int64_t d[1] = {n};
    return aclCreateTensor(d, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, d, 1, data);
}

static aclnnStatus mish(float *in, float *out, int64_t n) {
    aclTensor *a = t1(in, n), *b = t1(out, n);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnMishGetWorkspaceSize(a, b, &ws, &e);
    st = test_run(st, ws, e, aclnnMish, NULL);
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    return st;
}

static aclnnStatus backward(float *gr, float *in, float *out, int64_t n) {
    aclTensor *a = t1(gr, n), *b = t1(in, n), *c = t1(out, n);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnMishBackwardGetWorkspaceSize(a, b, c, &ws, &e);
    st = test_run(st, ws, e, aclnnMishBackward, NULL);
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    aclDestroyTensor(c);
    return st;
}

typedef struct host {
    int id;
    int wrong;
    char first[160];
} host;

static void *host_thread(void *arg) {
    host *h = arg;
    float *out = malloc(MAXN * sizeof *out);
    for (int k = 0; k < OPS; k++) {
        int which = (k + h->id) % SIZES, bwd = (k / 2 + h->id) & 1;
        int64_t n = sizes[which];
        // 16 pool threads, then 2..6: consecutive plans use different numbers of cores
        opgrad_set_num_threads(k % 3 == 0 ? 16 : 2 + k % 5);
        memset(out, 0, (size_t)n * sizeof *out);
        aclnnStatus st = bwd ? backward(g, x, out, n) : mish(x, out, n);
        const float *want = bwd ? expected_bwd[which] : expected_fwd[which];
        if (st != ACLNN_SUCCESS || memcmp(out, want, (size_t)n * sizeof *out) != 0) {
            if (!h->wrong) {
                int64_t first = -1, count = 0, zeros = 0;
                for (int64_t i = 0; i < n; i++)
                    if (out[i] != want[i]) {
                        if (first < 0) first = i;
                        count++;
                        zeros += out[i] == 0.0f;
                    }
                snprintf(h->first, sizeof h->first,
                         "op %d (%s, n = %lld, status %d): %lld elements wrong from %lld, %lld "
                         "never written",
                         k, bwd ? "backward" : "mish", (long long)n, (int)st, (long long)count,
                         (long long)first, (long long)zeros);
            }
            h->wrong++;
        }
    }
    free(out);
    atomic_fetch_add(&finished, 1);
    return NULL;
}

static void on_crash(int sig) {
    static const char msg[] = "FAIL test_pool_stress: crashed (signal) while operators ran on "
                              "the worker pool\n";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(2);
}

static void test_pool_stress(void) {
    int before = opgrad_get_num_threads();
    test_rng r;
    test_rng_seed(&r, 1);
    for (int i = 0; i < MAXN; i++) {
        x[i] = (float)test_rng_uniform(&r, -8, 8);
        g[i] = (float)test_rng_uniform(&r, -2, 2);
    }
    for (int w = 0; w < SIZES; w++) {
        expected_fwd[w] = malloc(MAXN * sizeof(float));
        expected_bwd[w] = malloc(MAXN * sizeof(float));
        CHECK_EQ(mish(x, expected_fwd[w], sizes[w]), ACLNN_SUCCESS);
        CHECK_EQ(backward(g, x, expected_bwd[w], sizes[w]), ACLNN_SUCCESS);
    }
    // the quiet results are right
    int64_t bad = 0;
    for (int64_t i = 0; i < sizes[0]; i++) {
        if (test_ulp_error(ACL_FLOAT, expected_fwd[0][i], og_ref_mish(x[i])) > 8) bad++;
        double ref = g[i] * og_ref_mish_grad(x[i]);
        if (fabs(x[i] + 1.19) >= 0.1 && test_ulp_error(ACL_FLOAT, expected_bwd[0][i], ref) > 8)
            bad++;
    }
    CHECK_EQ(bad, 0);

    pthread_t th[HOSTS];
    host hs[HOSTS];
    for (int t = 0; t < HOSTS; t++) {
        memset(&hs[t], 0, sizeof hs[t]);
        hs[t].id = t;
        CHECK_EQ(pthread_create(&th[t], NULL, host_thread, &hs[t]), 0);
    }
    // a deadlocked pool never finishes: give it 15 s (a healthy run takes well under 1 s, a few
    // under ASan)
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (atomic_load(&finished) == HOSTS) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 15) {
            printf("FAIL test_pool_stress: deadlock: %d of %d host threads still waiting for "
                   "the pool after 15 s\n",
                   HOSTS - atomic_load(&finished), HOSTS);
            fflush(stdout);
            _exit(1); // the stuck threads cannot be joined
        }
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
    }
    for (int t = 0; t < HOSTS; t++) {
        pthread_join(th[t], NULL);
        CHECKF(hs[t].wrong == 0, "host thread %d: %d of %d results wrong; first: %s", t,
               hs[t].wrong, OPS, hs[t].first);
    }
    opgrad_set_num_threads(before);
    for (int w = 0; w < SIZES; w++) {
        free(expected_fwd[w]);
        free(expected_bwd[w]);
    }
}

// Planned with one thread count, run with another: the same bits as one thread gives. bf16 data,
// so every operand goes through the per-thread tile buffers of the workspace.
static void test_threads_change_between_phases(void) {
    int before = opgrad_get_num_threads();
    enum { N = 300000 };
    uint16_t *in = malloc(N * sizeof *in), *want = malloc(N * sizeof *want),
             *out = malloc(N * sizeof *out);
    test_rng r;
    test_rng_seed(&r, 7);
    for (int i = 0; i < N; i++) {
        float v = (float)test_rng_uniform(&r, -8, 8);
        uint32_t bits;
        memcpy(&bits, &v, 4);
        in[i] = (uint16_t)(bits >> 16);
    }
    const int64_t d[1] = {N};
    static const int pairs[][2] = {{1, 1}, {2, 16}, {16, 2}, {7, 1}, {1, 7}, {3, 3}};
    for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
        uint16_t *dst = k == 0 ? want : out;
        aclTensor *a = aclCreateTensor(d, 1, ACL_BF16, NULL, 0, ACL_FORMAT_ND, d, 1, in);
        aclTensor *c = aclCreateTensor(d, 1, ACL_BF16, NULL, 0, ACL_FORMAT_ND, d, 1, dst);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        memset(dst, 0, N * sizeof *dst);
        opgrad_set_num_threads(pairs[k][0]);
        aclnnStatus st = aclnnMishBackwardGetWorkspaceSize(a, a, c, &ws, &e);
        opgrad_set_num_threads(pairs[k][1]);
        CHECK_EQ(test_run(st, ws, e, aclnnMishBackward, NULL), ACLNN_SUCCESS);
        if (k > 0)
            CHECKF(memcmp(out, want, N * sizeof *out) == 0,
                   "planned with %d threads, run with "
                   "%d: results differ from one thread's",
                   pairs[k][0], pairs[k][1]);
        aclDestroyTensor(a);
        aclDestroyTensor(c);
    }
    opgrad_set_num_threads(before);
    free(in), free(want), free(out);
}

int main(void) {
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    RUN(test_pool_stress);
    RUN(test_threads_change_between_phases);
    return test_summary();
}
