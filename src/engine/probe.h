/* A quick probe of what this machine can do, for the profiler's "fraction of the machine"
 * figures: memory bandwidth (read two streams, write one, normal stores, the pool's threads, over
 * 3 x 32 MiB, best of three) and fp32 FMA peak (every thread, the widest ISA opgrad runs). Measured
 * once per process, on first use (about 0.1 s). */
#ifndef OG_PROBE_H
#define OG_PROBE_H

#include <stdint.h>

typedef struct og_machine_probe {
    double gbps;   // bytes moved per ns: 12 bytes per element of the triad
    double gflops; // fp32 FMA peak, 2 FLOPs per FMA lane
    int threads;
    const char *isa;
} og_machine_probe;

/// The cached probe (measured on the first call; thread-safe).
og_machine_probe og_probe_machine(void);

double og_probe_fma__scalar(int64_t iters, float seed);
double og_probe_fma__avx2(int64_t iters, float seed);
double og_probe_fma__avx512(int64_t iters, float seed);
void og_probe_triad__scalar(float *c, const float *a, const float *b, int64_t n);
void og_probe_triad__avx2(float *c, const float *a, const float *b, int64_t n);
void og_probe_triad__avx512(float *c, const float *a, const float *b, int64_t n);

#endif
