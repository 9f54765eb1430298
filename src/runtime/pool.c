#undef _POSIX_C_SOURCE
#define _GNU_SOURCE
#include "runtime/pool.h"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "opgrad/opgrad.h"

enum {
    MAX_THREADS = 256,
    // Polls (each a `pause`, ~10-40 ns) a thread spins before sleeping. Back-to-back operators
    // then start without a futex wake-up, which costs tens of microseconds on a VM.
    SPIN_POLLS = 2000,
};

// One launch at a time. A core is claimed by a compare-and-swap on `claim`, which holds the
// launch's generation (high 32 bits) and the next core (low 32 bits): a worker that wakes late
// with a finished launch's function and context can never claim a core of a newer launch.
static struct {
    pthread_mutex_t lock;
    pthread_cond_t start;
    pthread_cond_t done;
    int nworkers;
    int sleepers;                   // workers blocked on `start`
    void (*fn)(void *, int);
    void *ctx;
    int ncores;
    _Atomic uint64_t claim;
    atomic_int unfinished;          // cores of the current launch not yet finished
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .start = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static atomic_flag pool_busy = ATOMIC_FLAG_INIT;
static atomic_int configured_threads; // 0 = not yet decided
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;

static void decide_default_threads(void) {
    int n = 0;
    const char *env = getenv("OPGRAD_NUM_THREADS");
    if (env) n = atoi(env);
    if (n < 1) {
        cpu_set_t set;
        n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    }
    if (n > MAX_THREADS) n = MAX_THREADS;
    int expected = 0;
    atomic_compare_exchange_strong(&configured_threads, &expected, n < 1 ? 1 : n);
}

int og_num_threads(void) {
    pthread_once(&threads_once, decide_default_threads);
    return atomic_load(&configured_threads);
}

int opgrad_set_num_threads(int n) {
    if (n < 1) return -1;
    pthread_once(&threads_once, decide_default_threads);
    atomic_store(&configured_threads, n > MAX_THREADS ? MAX_THREADS : n);
    return 0;
}

int opgrad_get_num_threads(void) { return og_num_threads(); }

// Runs cores of launch `gen` until none is left; returns how many this thread ran.
static int run_cores(uint32_t gen, void (*fn)(void *, int), void *ctx, int ncores) {
    int ran = 0;
    uint64_t cur = atomic_load(&pool.claim);
    while ((uint32_t)(cur >> 32) == gen && (uint32_t)cur < (uint32_t)ncores) {
        if (atomic_compare_exchange_weak(&pool.claim, &cur, cur + 1)) {
            fn(ctx, (int)(uint32_t)cur);
            ran++;
            cur = atomic_load(&pool.claim);
        }
    }
    return ran;
}

static void finish_cores(int ran) {
    if (ran && atomic_fetch_sub(&pool.unfinished, ran) == ran) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.lock);
    }
}

static void *worker_loop(void *arg) {
    (void)arg;
    uint32_t seen = 0;
    for (;;) {
        // Spin briefly for the next launch, then sleep.
        uint32_t gen = (uint32_t)(atomic_load(&pool.claim) >> 32);
        for (int i = 0; i < SPIN_POLLS && gen == seen; i++) {
            _mm_pause();
            gen = (uint32_t)(atomic_load(&pool.claim) >> 32);
        }
        pthread_mutex_lock(&pool.lock);
        while ((gen = (uint32_t)(atomic_load(&pool.claim) >> 32)) == seen) {
            pool.sleepers++;
            pthread_cond_wait(&pool.start, &pool.lock);
            pool.sleepers--;
        }
        void (*fn)(void *, int) = pool.fn;
        void *ctx = pool.ctx;
        int ncores = pool.ncores;
        pthread_mutex_unlock(&pool.lock);
        seen = gen;
        finish_cores(run_cores(gen, fn, ctx, ncores));
    }
    return NULL;
}

void og_parallel_for(int ncores, void (*fn)(void *ctx, int core), void *ctx) {
    int nthreads = og_num_threads();
    if (ncores <= 0) return;
    if (ncores == 1 || nthreads == 1 || atomic_flag_test_and_set(&pool_busy)) {
        for (int core = 0; core < ncores; core++) fn(ctx, core);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    int wanted = (ncores < nthreads ? ncores : nthreads) - 1;
    while (pool.nworkers < wanted) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_loop, NULL) != 0) break;
        pthread_detach(t);
        pool.nworkers++;
    }
    pool.fn = fn;
    pool.ctx = ctx;
    pool.ncores = ncores;
    atomic_store(&pool.unfinished, ncores);
    uint32_t gen = (uint32_t)(atomic_load(&pool.claim) >> 32) + 1;
    if (gen == 0) gen = 1; // 0 is what a new worker has seen
    atomic_store(&pool.claim, (uint64_t)gen << 32); // publishes fn/ctx (seq_cst)
    if (pool.sleepers) pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.lock);

    finish_cores(run_cores(gen, fn, ctx, ncores));

    // Wait for the cores other threads claimed: spin first, then sleep.
    for (int i = 0; i < SPIN_POLLS && atomic_load(&pool.unfinished) > 0; i++) _mm_pause();
    if (atomic_load(&pool.unfinished) > 0) {
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.unfinished) > 0) pthread_cond_wait(&pool.done, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
    atomic_flag_clear(&pool_busy);
}
