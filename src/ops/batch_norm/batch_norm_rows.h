/* BatchNorm row kernels for the channel-first layout (engine/rows.h): the data [N, C, ...] is
 * viewed as N * C rows (n, c) of S = the product of the dims after the channel.
 *
 * Per row (batch_norm_rows_simd.c, one build per ISA, the same bits on each: every sum is taken
 * in 16 double lanes, element i into lane i % 16 in increasing i, then the lanes by a fixed tree;
 * fma written out; each also reads and writes bf16 / fp16 rows in place, og_*_kernels16):
 *   og_bn_row_stat:  in = {x}                  stats out = {mean_r, M2_r = sum (x - mean_r)^2}
 *                    (the row is read from memory once; its second pass runs in cache)
 *   og_bn_row_dsum:  in = {dy, x}              stats out = {sum dy, sum dy (x - x0), x0}
 *                    (x0 = the row's first x: a shift close to the data, exact)
 *   og_bn_row_norm:  in = {x}                  stats in = {mean, scale[, shift]}
 *                    out = {(x - mean) scale (+ shift: one fma)}
 *   og_bn_row_dx:    in = {dy, x}              stats in = {mean, a, b, c}
 *                    out = {a dy + (b (x - mean) + c)} (two fmas, as og_bn_dx)
 * Per channel, over the N rows of a channel in increasing n (batch_norm_coef.c, plain C in
 * double, one function for every ISA; rows [C, N] of the per-row statistics):
 *   og_bn_row_chan:  in = {mean_r, M2_r}       stats out = {mean, var}: Chan's pairwise update
 *   og_bn_row_dcomb: in = {s1, s2, x0, mean}   stats out = {sum s1, sum (s2 + (x0 - mean) s1)}
 * Each has a float64 twin (og_bn_row_*_kernels64, a DOUBLE input): the same steps in double, every
 * sum compensated (og_ksum, in increasing order: one result on every ISA), nothing rounded to
 * fp32. */
#ifndef OG_BATCH_NORM_ROWS_H
#define OG_BATCH_NORM_ROWS_H

#include "engine/isa_table.h"
#include "engine/row_kernel.h"

typedef struct og_bn_row_params {
    double S;      // og_bn_row_chan: the row length (values per row statistic)
    int has_shift; // og_bn_row_norm: stats[2] is added
} og_bn_row_params;

#define OG_BN_ROW_DECLARE(name)                                                                    \
    void og_##name##__scalar(size_t, const float *const *, float *const *, const void *, float *); \
    void og_##name##__avx2(size_t, const float *const *, float *const *, const void *, float *);   \
    void og_##name##__avx512(size_t, const float *const *, float *const *, const void *, float *); \
    extern const og_row_fn og_##name##_kernels[OPGRAD_ISA_COUNT];

OG_BN_ROW_DECLARE(bn_row_stat)
OG_BN_ROW_DECLARE(bn_row_dsum)
OG_BN_ROW_DECLARE(bn_row_norm)
OG_BN_ROW_DECLARE(bn_row_dx)
OG_ROW16_DECLARE(bn_row_stat)
OG_ROW16_DECLARE(bn_row_dsum)
OG_ROW16_DECLARE(bn_row_norm)
OG_ROW16_DECLARE(bn_row_dx)

extern const og_row_fn og_bn_row_chan_kernels[OPGRAD_ISA_COUNT];
extern const og_row_fn og_bn_row_dcomb_kernels[OPGRAD_ISA_COUNT];

OG_ROW64_DECLARE(bn_row_stat)
OG_ROW64_DECLARE(bn_row_dsum)
OG_ROW64_DECLARE(bn_row_norm)
OG_ROW64_DECLARE(bn_row_dx)
extern const og_row64_fn og_bn_row_chan_kernels64[OPGRAD_ISA_COUNT];
extern const og_row64_fn og_bn_row_dcomb_kernels64[OPGRAD_ISA_COUNT];

#endif
