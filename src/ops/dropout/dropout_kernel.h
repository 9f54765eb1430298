/* Dropout's per-ISA kernels (dropout_simd.c). */
#ifndef OG_DROPOUT_KERNEL_H
#define OG_DROPOUT_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "opgrad/opgrad.h"

/// The mask bytes of blocks ctr, ctr + 1, ... (two Philox blocks, 8 elements, per byte): nbytes
/// bytes, keep iff (word >> 8) < K.
typedef void (*og_dropout_bits_fn)(uint64_t seed, uint64_t ctr, uint32_t K, uint8_t *bytes,
                                   size_t nbytes);
/// y[i] = bit i of bits ? x[i] * scale : +0 (x and y may be the same array).
typedef void (*og_dropout_apply_fn)(const float *x, const uint8_t *bits, float scale, float *y,
                                    size_t n);

/// The same in float64 (a float64 input).
typedef void (*og_dropout_apply64_fn)(const double *x, const uint8_t *bits, double scale, double *y,
                                      size_t n);

#define OG_DROPOUT_DECLARE(sfx)                                                                    \
    void og_dropout_bits__##sfx(uint64_t, uint64_t, uint32_t, uint8_t *, size_t);                  \
    void og_dropout_apply__##sfx(const float *, const uint8_t *, float, float *, size_t);          \
    void og_dropout_apply64__##sfx(const double *, const uint8_t *, double, double *, size_t);
OG_DROPOUT_DECLARE(scalar)
OG_DROPOUT_DECLARE(avx2)
OG_DROPOUT_DECLARE(avx512)

extern const og_dropout_bits_fn og_dropout_bits_kernels[OPGRAD_ISA_COUNT];
extern const og_dropout_apply_fn og_dropout_apply_kernels[OPGRAD_ISA_COUNT];
extern const og_dropout_apply64_fn og_dropout_apply64_kernels[OPGRAD_ISA_COUNT];

#endif
