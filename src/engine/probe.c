/* The machine probe (engine/probe.h). */
#include "engine/probe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/isa_table.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"

enum { TRIAD_FLOATS = 8 << 20, FMA_ITERS = 4 << 20 };

typedef double (*fma_fn)(int64_t, float);
typedef void (*triad_fn)(float *, const float *, const float *, int64_t);
static const fma_fn fma_table[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_probe_fma);
static const triad_fn triad_table[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_probe_triad);

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct triad_job {
    triad_fn fn;
    float *a, *b, *c;
    int64_t part; // floats per core, a multiple of 16
    int parts;
} triad_job;

static void triad_part(void *arg, int core, int slot) {
    (void)slot;
    const triad_job *j = arg;
    int64_t at = (int64_t)core * j->part;
    int64_t n = core == j->parts - 1 ? TRIAD_FLOATS - at : j->part;
    j->fn(j->c + at, j->a + at, j->b + at, n);
}

typedef struct fma_job {
    fma_fn fn;
    double flops[64], seconds[64];
} fma_job;

static void fma_part(void *arg, int core, int slot) {
    (void)slot;
    fma_job *j = arg;
    double t0 = now_s();
    j->flops[core] = j->fn(FMA_ITERS, (float)core);
    j->seconds[core] = now_s() - t0;
}

static og_machine_probe measured;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void measure(void) {
    opgrad_isa isa = og_isa();
    int threads = og_num_threads();
    if (threads > 64) threads = 64;
    measured.threads = threads;
    measured.isa = opgrad_isa_name(isa);
    // bandwidth: one pass to fault the pages in, then the best of three
    float *a = malloc((size_t)TRIAD_FLOATS * 3 * sizeof(float));
    if (a) {
        triad_job t = {triad_table[isa],
                       a,
                       a + TRIAD_FLOATS,
                       a + 2 * (size_t)TRIAD_FLOATS,
                       TRIAD_FLOATS / threads / 16 * 16,
                       threads};
        memset(a, 0, (size_t)TRIAD_FLOATS * 2 * sizeof(float));
        double best = 0;
        for (int rep = 0; rep < 4; rep++) {
            double t0 = now_s();
            og_parallel_for(threads, threads, triad_part, &t);
            double dt = now_s() - t0;
            if (rep > 0 && dt > 0 && 12.0 * TRIAD_FLOATS / dt * 1e-9 > best)
                best = 12.0 * TRIAD_FLOATS / dt * 1e-9;
        }
        measured.gbps = best;
        free(a);
    }
    // FMA peak: each thread's own rate, summed (the best of two runs per thread)
    fma_job f = {.fn = fma_table[isa]};
    double peak = 0;
    for (int rep = 0; rep < 2; rep++) {
        memset(f.seconds, 0, sizeof f.seconds);
        og_parallel_for(threads, threads, fma_part, &f);
        double sum = 0;
        for (int k = 0; k < threads; k++)
            if (f.seconds[k] > 0) sum += f.flops[k] / f.seconds[k] * 1e-9;
        if (sum > peak) peak = sum;
    }
    measured.gflops = peak;
}

og_machine_probe og_probe_machine(void) {
    pthread_once(&once, measure);
    return measured;
}
