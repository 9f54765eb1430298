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
#include <time.h>

#include "opgrad/opgrad.h"

enum {
    MAX_THREADS = 256,
    // Polls (each a `pause`, 13 ns on the Xeon this was tuned on) between looks at the clock and
    // sched_yield() while a thread waits.
    SPIN_POLLS = 64,
    // How long an idle worker keeps polling before it sleeps, unless OPGRAD_SPIN_US says otherwise.
    // Operators that follow each other within it start without a futex wake-up, which on a VM
    // costs tens to hundreds of microseconds (an idle vCPU is halted, and waking it goes through
    // the host). The poll yields the CPU to any other runnable thread, so it only takes time that
    // nothing else wants. OpenMP runtimes spin far longer by default (libgomp: ~300,000 polls).
    DEFAULT_SPIN_US = 2000,
};

// One launch at a time. Its cores are dealt out as contiguous runs, one per slot (thread): a
// thread takes its own run from the front, in order, and when it is empty takes the others' from
// the back. So when every thread starts on time each runs the same cores on every launch (their
// data stays in its cache), and a late thread loses only what the others reach first.
// A run is one 64-bit word: the launch's generation (high 32 bits), front and back (16 each),
// changed by compare-and-swap: a worker that wakes late with a finished launch's function and
// context can never take a core of a newer launch.
typedef struct run_queue {
    _Alignas(64) _Atomic uint64_t word;
} run_queue;

static run_queue queues[MAX_THREADS];

static struct {
    pthread_mutex_t lock;
    pthread_cond_t start;
    pthread_cond_t done;
    int nworkers;
    int sleepers; // workers blocked on `start`
    og_core_fn fn;
    void *ctx;
    int nslots;              // the caller is slot 0, worker w is slot w + 1
    _Atomic uint32_t launch; // generation of the latest launch (0: none yet)
    atomic_int unfinished;   // cores of the current launch not yet finished
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

static int64_t spin_ns = -1; // decided once, by the first launch (before any worker exists)

static void decide_spin(void) {
    const char *env = getenv("OPGRAD_SPIN_US");
    long long us = env ? atoll(env) : DEFAULT_SPIN_US;
    spin_ns = us < 0 ? 0 : us > 1000000 ? 1000000000 : us * 1000;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Polls until done(arg) or spin_ns have passed; returns done(arg). Yields between polls, so a
// waiting thread never keeps another runnable thread off its CPU.
static bool poll_until(bool (*done)(const void *), const void *arg) {
    if (done(arg)) return true;
    int64_t start = now_ns();
    for (;;) {
        for (int i = 0; i < SPIN_POLLS; i++) {
            _mm_pause();
            if (done(arg)) return true;
        }
        if (now_ns() - start >= spin_ns) return done(arg);
        sched_yield();
    }
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

// The next core of run q for launch gen: its front for the run's owner, its back for the others;
// -1 when the run is empty or belongs to another launch.
static int take_core(int q, uint32_t gen, bool owner) {
    uint64_t cur = atomic_load(&queues[q].word);
    for (;;) {
        uint32_t front = (uint32_t)(cur >> 16) & 0xffff, back = (uint32_t)cur & 0xffff;
        if ((uint32_t)(cur >> 32) != gen || front >= back) return -1;
        uint64_t next = owner ? cur + (1u << 16) : cur - 1;
        if (atomic_compare_exchange_weak(&queues[q].word, &cur, next))
            return (int)(owner ? front : back - 1);
    }
}

// Runs cores of launch `gen` (nslots runs) until none is left; returns how many this thread ran.
static int run_cores(uint32_t gen, og_core_fn fn, void *ctx, int nslots, int slot) {
    int ran = 0, core;
    while ((core = take_core(slot, gen, true)) >= 0) fn(ctx, core, slot), ran++;
    // Runs only shrink during a launch, so one pass that empties each of the others is enough.
    for (int k = 1; k < nslots; k++)
        while ((core = take_core((slot + k) % nslots, gen, false)) >= 0) fn(ctx, core, slot), ran++;
    return ran;
}

static void finish_cores(int ran) {
    if (ran && atomic_fetch_sub(&pool.unfinished, ran) == ran) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.lock);
    }
}

static bool launched_since(const void *seen) {
    return atomic_load(&pool.launch) != *(const uint32_t *)seen;
}

static bool all_finished(const void *unused) {
    (void)unused;
    return atomic_load(&pool.unfinished) <= 0;
}

static void *worker_loop(void *arg) {
    int slot = (int)(intptr_t)arg;
    uint32_t seen = 0, gen;
    for (;;) {
        // Poll for the next launch for a while, then sleep.
        poll_until(launched_since, &seen);
        pthread_mutex_lock(&pool.lock);
        while ((gen = atomic_load(&pool.launch)) == seen) {
            pool.sleepers++;
            pthread_cond_wait(&pool.start, &pool.lock);
            pool.sleepers--;
        }
        og_core_fn fn = pool.fn;
        void *ctx = pool.ctx;
        int nslots = pool.nslots;
        pthread_mutex_unlock(&pool.lock);
        seen = gen;
        if (slot < nslots) finish_cores(run_cores(gen, fn, ctx, nslots, slot));
    }
    return NULL;
}

void og_parallel_for(int ncores, int nslots, og_core_fn fn, void *ctx) {
    int nthreads = og_num_threads();
    if (nslots < nthreads) nthreads = nslots;
    if (ncores <= 0) return;
    if (ncores < nthreads) nthreads = ncores;
    // (a run holds 16-bit core numbers; the planners stay far below)
    if (nthreads <= 1 || ncores > 0xffff || atomic_flag_test_and_set(&pool_busy)) {
        for (int core = 0; core < ncores; core++) fn(ctx, core, 0);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    if (spin_ns < 0) decide_spin();
    while (pool.nworkers < nthreads - 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_loop, (void *)(intptr_t)(pool.nworkers + 1)) != 0)
            break;
        pthread_detach(t);
        pool.nworkers++;
    }
    pool.fn = fn;
    pool.ctx = ctx;
    pool.nslots = nthreads;
    atomic_store(&pool.unfinished, ncores);
    uint32_t gen = atomic_load(&pool.launch) + 1;
    if (gen == 0) gen = 1;               // 0 is what a new worker has seen
    for (int q = 0; q < nthreads; q++) { // thread q's run: cores [q n / t, (q + 1) n / t)
        uint64_t front = (uint64_t)q * (uint64_t)ncores / (uint64_t)nthreads;
        uint64_t back = (uint64_t)(q + 1) * (uint64_t)ncores / (uint64_t)nthreads;
        atomic_store(&queues[q].word, (uint64_t)gen << 32 | front << 16 | back);
    }
    atomic_store(&pool.launch, gen); // publishes fn/ctx and the runs (seq_cst)
    if (pool.sleepers) pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.lock);

    finish_cores(run_cores(gen, fn, ctx, nthreads, 0));

    // Wait for the cores other threads claimed: poll first, then sleep.
    if (!poll_until(all_finished, NULL)) {
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.unfinished) > 0) pthread_cond_wait(&pool.done, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
    atomic_flag_clear(&pool_busy);
}
