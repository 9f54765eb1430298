#undef _POSIX_C_SOURCE
#define _GNU_SOURCE
#include "runtime/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "opgrad/opgrad.h"

enum { MAX_THREADS = 256 };

static struct {
    pthread_mutex_t lock;
    pthread_cond_t start;
    pthread_cond_t done;
    pthread_t workers[MAX_THREADS];
    int nworkers;
    unsigned long generation;
    void (*fn)(void *, int);
    void *ctx;
    int ncores;
    atomic_int next_core;
    int unfinished;
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

// Claims cores until none is left; returns how many this thread ran.
static int run_cores(void (*fn)(void *, int), void *ctx, int ncores) {
    int ran = 0;
    for (;;) {
        int core = atomic_fetch_add(&pool.next_core, 1);
        if (core >= ncores) return ran;
        fn(ctx, core);
        ran++;
    }
}

static void *worker_loop(void *arg) {
    (void)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.generation == seen) pthread_cond_wait(&pool.start, &pool.lock);
        seen = pool.generation;
        void (*fn)(void *, int) = pool.fn;
        void *ctx = pool.ctx;
        int ncores = pool.ncores;
        pthread_mutex_unlock(&pool.lock);
        int ran = run_cores(fn, ctx, ncores);
        pthread_mutex_lock(&pool.lock);
        pool.unfinished -= ran;
        if (pool.unfinished == 0) pthread_cond_signal(&pool.done);
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
        if (pthread_create(&pool.workers[pool.nworkers], NULL, worker_loop, NULL) != 0) break;
        pthread_detach(pool.workers[pool.nworkers]);
        pool.nworkers++;
    }
    pool.fn = fn;
    pool.ctx = ctx;
    pool.ncores = ncores;
    pool.unfinished = ncores;
    atomic_store(&pool.next_core, 0);
    pool.generation++;
    pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.lock);

    int ran = run_cores(fn, ctx, ncores);

    pthread_mutex_lock(&pool.lock);
    pool.unfinished -= ran;
    while (pool.unfinished > 0) pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    atomic_flag_clear(&pool_busy);
}
