/* The foreach operators' per-ISA tile kernels (foreach_simd.c): fp32 tiles in L1, loaded and
 * stored by the list walk in foreach.c (any dtype, any strides). */
#ifndef OG_FOREACH_KERNEL_H
#define OG_FOREACH_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "opgrad/opgrad.h"

/// What a tile kernel does to x[0..n): scale by s, divide by s, or scale by s and report whether
/// an input was not finite (the unscale of a mixed-precision step).
typedef enum { OG_FE_MUL, OG_FE_DIV, OG_FE_UNSCALE } og_fe_map_kind;
/// x[i] = x[i] * s or x[i] / s (one fp32 rounding); returns true when kind is OG_FE_UNSCALE and
/// some x[i] (before scaling) is an inf or a NaN.
typedef bool (*og_fe_map_fn)(float *x, size_t n, float s, og_fe_map_kind kind);

/// The norm partials of a tile: sum |x| (order 1), sum x^2 (order 2), max |x| (+inf), min |x|
/// (-inf) or the count of non-zeros (0), added into / combined with *acc (double); NaN
/// propagates.
typedef enum { OG_FE_L1, OG_FE_L2, OG_FE_MAX, OG_FE_MIN, OG_FE_L0 } og_fe_norm_kind;
typedef void (*og_fe_norm_fn)(const float *x, size_t n, og_fe_norm_kind kind, double *acc);

#define OG_FE_DECLARE(sfx)                                                                         \
    bool og_fe_map__##sfx(float *, size_t, float, og_fe_map_kind);                                 \
    void og_fe_norm__##sfx(const float *, size_t, og_fe_norm_kind, double *);
OG_FE_DECLARE(scalar)
OG_FE_DECLARE(avx2)
OG_FE_DECLARE(avx512)

extern const og_fe_map_fn og_fe_map_kernels[OPGRAD_ISA_COUNT];
extern const og_fe_norm_fn og_fe_norm_kernels[OPGRAD_ISA_COUNT];

#endif
