/* fma_peak - the machine's fp32 multiply-add peak, measured: the ceiling bench_gemm.py divides
 * GEMM GFLOP/s by ("peak_frac").
 *
 * Each thread runs 12 independent vector FMA chains (acc_i = acc_i * a + b) on registers only.
 * 12 chains cover FMA latency x throughput on current cores (Zen3: 4 cycles x 2 pipes = 8;
 * Skylake-X / Ice Lake: 4 x 2 = 8; Zen4 / Sapphire Rapids: at most 4 x 2 = 8), so the loop is
 * bound by FMA throughput, as a GEMM micro-kernel at its best is. The widest ISA this CPU *and
 * OS* support is chosen at run time (__builtin_cpu_supports checks XCR0 too): AVX-512F (16 fp32
 * lanes), else AVX2+FMA (8 lanes), else SSE2 mul+add (4 lanes, two instructions per 2 flops); the
 * file is built with generic x86-64 flags, each kernel has its own target attribute, so it runs
 * (and reports the lower peak) on any x86-64.
 *
 * Usage: fma_peak [--threads 1,2] [--ms 200] [--reps 5] [--isa avx512|avx2|sse2]
 * Output, one line per thread count:  "fma_peak isa=avx2 threads=2 gflops=190.3 per_thread=95.2"
 * gflops is the best of --reps runs of >= --ms each (all threads start together; the time is
 * the slowest thread's). Threads are not pinned: like the GEMM libraries it is compared with.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_barrier_t */
#endif
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAINS 12
#define INNER 256 /* FMA rounds per loop trip: keeps the loop overhead negligible */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Each kernel returns the sum of its accumulators, which the caller stores: without a use of
 * the result the compiler could drop the loop. The chains start from different values read
 * through a volatile (seeds[]), and a, b are read the same way: with equal or known starting
 * values the compiler merges the chains into one or folds them. The multiplier is just below 1
 * and the addend small, so the values stay normal (no denormal slow path) and finite. */
static volatile float seeds[CHAINS + 2] = {1.0f, 1.1f, 1.2f, 1.3f, 1.4f, 1.5f,      1.6f,
                                           1.7f, 1.8f, 1.9f, 2.0f, 2.1f, 0.999999f, 1e-6f};
#define INIT_CHAINS(SET1)                                                                          \
    c0 = SET1(seeds[0]), c1 = SET1(seeds[1]), c2 = SET1(seeds[2]), c3 = SET1(seeds[3]),            \
    c4 = SET1(seeds[4]), c5 = SET1(seeds[5]), c6 = SET1(seeds[6]), c7 = SET1(seeds[7]),            \
    c8 = SET1(seeds[8]), c9 = SET1(seeds[9]), c10 = SET1(seeds[10]), c11 = SET1(seeds[11]);
#define ROUNDS(FMA)                                                                                \
    for (int r = 0; r < INNER; r++) {                                                              \
        c0 = FMA(c0, a, b);                                                                        \
        c1 = FMA(c1, a, b);                                                                        \
        c2 = FMA(c2, a, b);                                                                        \
        c3 = FMA(c3, a, b);                                                                        \
        c4 = FMA(c4, a, b);                                                                        \
        c5 = FMA(c5, a, b);                                                                        \
        c6 = FMA(c6, a, b);                                                                        \
        c7 = FMA(c7, a, b);                                                                        \
        c8 = FMA(c8, a, b);                                                                        \
        c9 = FMA(c9, a, b);                                                                        \
        c10 = FMA(c10, a, b);                                                                      \
        c11 = FMA(c11, a, b);                                                                      \
    }

__attribute__((target("avx512f"))) static float run_avx512(uint64_t trips) {
    __m512 a = _mm512_set1_ps(seeds[12]), b = _mm512_set1_ps(seeds[13]);
    __m512 INIT_CHAINS(_mm512_set1_ps) for (uint64_t t = 0; t < trips; t++) ROUNDS(_mm512_fmadd_ps)
        __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                                 _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float run_avx2(uint64_t trips) {
    __m256 a = _mm256_set1_ps(seeds[12]), b = _mm256_set1_ps(seeds[13]);
    __m256 INIT_CHAINS(_mm256_set1_ps) for (uint64_t t = 0; t < trips; t++) ROUNDS(_mm256_fmadd_ps)
        __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                                 _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
    float v[8];
    _mm256_storeu_ps(v, s);
    return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

/* SSE2 has no FMA: one mul and one add per "fma" (the same 2 flops, in two instructions). */
#define SSE_MULADD(c, a, b) _mm_add_ps(_mm_mul_ps(c, a), b)
static float run_sse2(uint64_t trips) {
    __m128 a = _mm_set1_ps(seeds[12]), b = _mm_set1_ps(seeds[13]);
    __m128 INIT_CHAINS(_mm_set1_ps) for (uint64_t t = 0; t < trips; t++) ROUNDS(SSE_MULADD)
        __m128 s = _mm_add_ps(_mm_add_ps(_mm_add_ps(c0, c1), _mm_add_ps(c2, c3)),
                              _mm_add_ps(_mm_add_ps(c4, c5), _mm_add_ps(c6, c7)));
    s = _mm_add_ps(s, _mm_add_ps(_mm_add_ps(c8, c9), _mm_add_ps(c10, c11)));
    float v[4];
    _mm_storeu_ps(v, s);
    return v[0] + v[1] + v[2] + v[3];
}

typedef float (*kernel_fn)(uint64_t);
static struct {
    const char *name;
    kernel_fn fn;
    int lanes;
} isa;

typedef struct {
    pthread_barrier_t *start;
    uint64_t trips;
    double seconds;
    volatile float sink;
} job;

static void *worker(void *p) {
    job *j = p;
    pthread_barrier_wait(j->start);
    double t0 = now();
    j->sink = isa.fn(j->trips);
    j->seconds = now() - t0;
    return NULL;
}

/* Wall time of `trips` on each of n threads started together: the slowest thread's time. */
static double run_threads(int n, uint64_t trips) {
    pthread_t tid[256];
    job jobs[256];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        jobs[i] = (job){.start = &start, .trips = trips};
        if (i) pthread_create(&tid[i], NULL, worker, &jobs[i]);
    }
    worker(&jobs[0]); /* the main thread is thread 0 */
    double worst = jobs[0].seconds;
    for (int i = 1; i < n; i++) {
        pthread_join(tid[i], NULL);
        if (jobs[i].seconds > worst) worst = jobs[i].seconds;
    }
    pthread_barrier_destroy(&start);
    return worst;
}

int main(int argc, char **argv) {
    const char *threads = "1,2", *want = NULL;
    double ms = 200;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = argv[++i];
        else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
            ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--isa") && i + 1 < argc)
            want = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--threads 1,2] [--ms 200] [--reps 5] [--isa avx512|avx2|sse2]\n",
                    argv[0]);
            return 2;
        }
    }
    __builtin_cpu_init();
    int has512 = __builtin_cpu_supports("avx512f"),
        has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (want && !strcmp(want, "sse2")) has512 = has2 = 0;
    if (want && !strcmp(want, "avx2")) has512 = 0;
    if (want && !strcmp(want, "avx512") && !has512) {
        fprintf(stderr, "fma_peak: this CPU/OS has no AVX-512F\n");
        return 1;
    }
    if (has512)
        isa.name = "avx512", isa.fn = run_avx512, isa.lanes = 16;
    else if (has2)
        isa.name = "avx2", isa.fn = run_avx2, isa.lanes = 8;
    else
        isa.name = "sse2", isa.fn = run_sse2, isa.lanes = 4;
    const double flops_per_trip = 2.0 * CHAINS * INNER * isa.lanes;

    /* Calibrate on one thread: trips for one run of >= ms. */
    uint64_t trips = 1024;
    for (;;) {
        double t = run_threads(1, trips);
        if (t >= ms * 1e-3 / 2 || trips > (1ull << 40)) {
            trips = (uint64_t)(trips * (ms * 1e-3 / (t > 0 ? t : 1e-9))) + 1;
            break;
        }
        trips *= 4;
    }
    for (const char *p = threads; *p;) {
        int n = atoi(p);
        if (n < 1 || n > 256) {
            fprintf(stderr, "fma_peak: bad thread count in '%s'\n", threads);
            return 2;
        }
        run_threads(n, trips / 8 + 1); /* warm-up: wake the cores to their sustained clock */
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            double t = run_threads(n, trips);
            if (t < best) best = t;
        }
        double gflops = n * trips * flops_per_trip / best / 1e9;
        printf("fma_peak isa=%s threads=%d gflops=%.1f per_thread=%.1f\n", isa.name, n, gflops,
               gflops / n);
        fflush(stdout);
        p = strchr(p, ',');
        if (!p) break;
        p++;
    }
    return 0;
}
