/* bwprobe.h - a same-process memory-bandwidth probe for elementwise benchmarks.
 *
 * The probe streams over caller-provided buffers with the access pattern of an elementwise op:
 *   PROBE_RD1WR1: c = f(a)      (forward: read x, write y)
 *   PROBE_RD2WR1: c = f(a, b)   (backward: read dy and x, write dx)
 * Lanes are treated as 32-bit integers (c = a + k, c = a + b), so any bit pattern (fp32, bf16,
 * fp16 data) is safe: no denormal assists, no NaN handling. Only the memory traffic matters.
 * Stores are either normal (write-allocate) or non-temporal (streaming, no read-for-ownership).
 *
 * Work is split into `nthreads` contiguous, cache-line aligned ranges run by a small pthread
 * pool (the caller runs range 0). Idle helpers sleep on a condition variable, so they do not
 * compete with the code under test between probe runs. */
#ifndef BENCH_BWPROBE_H
#define BENCH_BWPROBE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { PROBE_RD1WR1 = 0, PROBE_RD2WR1 = 1 } probe_kind;

typedef enum {
    PROBE_ISA_AUTO = -1,
    PROBE_ISA_C = 0,
    PROBE_ISA_SSE2,
    PROBE_ISA_AVX2,
    PROBE_ISA_AVX512
} probe_isa;

typedef struct probe_pool probe_pool;

/// A pool that runs probes on `nthreads` threads (the caller plus nthreads - 1 helpers).
/// Returns NULL on failure.
probe_pool *probe_pool_create(int nthreads);
void probe_pool_destroy(probe_pool *pool);
int probe_pool_threads(const probe_pool *pool);

/// Selects the vector width of the probe kernels (AUTO: the widest this CPU and OS support).
/// Returns the ISA in effect.
probe_isa probe_set_isa(probe_isa isa);
const char *probe_isa_name(probe_isa isa);

/// Runs the kernel `reps` times over `bytes` bytes of every stream (a, b: read; c: written).
/// b is ignored for PROBE_RD1WR1. Each thread repeats its own range without synchronising with
/// the others between repetitions (an upper bound for a kernel that must synchronise per call).
void probe_run(probe_pool *pool, probe_kind kind, bool nontemporal, const void *a, const void *b,
               void *c, size_t bytes, long reps);

#endif
