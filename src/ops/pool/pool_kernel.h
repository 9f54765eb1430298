/* The pooling family's per-ISA inner loops (pool_simd.c): one window tap over a run of output
 * columns. Plain C loops that each ISA build vectorises; every output column is touched once per
 * call, so the per-element order of operations (and the bits) is the same on every ISA. */
#ifndef OG_POOL_KERNEL_H
#define OG_POOL_KERNEL_H

#include <stdint.h>

#include "engine/simd/map64.h"
#include "opgrad/opgrad.h"

/// Max-pool tap over n output columns: v = x[j * s]: if v > m[j], v is NaN or id[j] < 0 (no tap
/// yet), m[j] = v and id[j] = pos + j * s.
typedef void (*og_pool_max_fn)(const float *x, int64_t s, int64_t n, int32_t pos, float *m,
                               int32_t *id);
/// Sum tap: acc[j] += x[j * s] for j in [0, n).
typedef void (*og_pool_sum_fn)(const float *x, int64_t s, int64_t n, float *acc);
/// Scatter tap: g[j * s] += q[j] for j in [0, n) (s >= 1: no element twice).
typedef void (*og_pool_add_fn)(float *g, int64_t s, int64_t n, const float *q);

/// The sum of n contiguous values in a fixed order: in order when n < 16, else in 8 lanes
/// (element i into lane i % 8) combined pairwise (((0+4) + (1+5)) + ((2+6) + (3+7))).
typedef float (*og_pool_run_fn)(const float *x, int64_t n);
/// Global pooling of count dense planes of n values xs apart: y[p * ys] = run(plane p) / d1 / d2
/// (one loop, so that the planes' sums overlap in the pipeline).
typedef void (*og_pool_runs_fn)(const float *x, int64_t n, int64_t xs, int64_t count, float d1,
                                float d2, float *y, int64_t ys);

/// float64: the same taps over doubles (og_pool_*64), and a window's run added to a compensated
/// sum in order (adaptive windows can be large: the error stays one rounding of the window's sum).
typedef void (*og_pool_max64_fn)(const double *x, int64_t s, int64_t n, int32_t pos, double *m,
                                 int32_t *id);
typedef void (*og_pool_sum64_fn)(const double *x, int64_t s, int64_t n, double *acc);
typedef void (*og_pool_add64_fn)(double *g, int64_t s, int64_t n, const double *q);
typedef void (*og_pool_run64_fn)(const double *x, int64_t n, og_ksum *acc);

#define OG_POOL_DECLARE(sfx)                                                                       \
    void og_pool_max__##sfx(const float *, int64_t, int64_t, int32_t, float *, int32_t *);         \
    void og_pool_sum__##sfx(const float *, int64_t, int64_t, float *);                             \
    void og_pool_add__##sfx(float *, int64_t, int64_t, const float *);                             \
    float og_pool_run__##sfx(const float *, int64_t);                                              \
    void og_pool_runs__##sfx(const float *, int64_t, int64_t, int64_t, float, float, float *,      \
                             int64_t);                                                             \
    void og_pool_max64__##sfx(const double *, int64_t, int64_t, int32_t, double *, int32_t *);     \
    void og_pool_sum64__##sfx(const double *, int64_t, int64_t, double *);                         \
    void og_pool_add64__##sfx(double *, int64_t, int64_t, const double *);                         \
    void og_pool_run64__##sfx(const double *, int64_t, og_ksum *);
OG_POOL_DECLARE(scalar)
OG_POOL_DECLARE(avx2)
OG_POOL_DECLARE(avx512)

extern const og_pool_max_fn og_pool_max_kernels[OPGRAD_ISA_COUNT];
extern const og_pool_sum_fn og_pool_sum_kernels[OPGRAD_ISA_COUNT];
extern const og_pool_add_fn og_pool_add_kernels[OPGRAD_ISA_COUNT];
extern const og_pool_run_fn og_pool_run_kernels[OPGRAD_ISA_COUNT];
extern const og_pool_runs_fn og_pool_runs_kernels[OPGRAD_ISA_COUNT];
extern const og_pool_max64_fn og_pool_max64_kernels[OPGRAD_ISA_COUNT];
extern const og_pool_sum64_fn og_pool_sum64_kernels[OPGRAD_ISA_COUNT];
extern const og_pool_add64_fn og_pool_add64_kernels[OPGRAD_ISA_COUNT];
extern const og_pool_run64_fn og_pool_run64_kernels[OPGRAD_ISA_COUNT];

#endif
