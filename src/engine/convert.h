/* CopyIn / CopyOut conversions between storage dtypes and fp32 tile buffers, per ISA.
 * Rounding is to nearest even everywhere; NaN stays NaN; subnormals are exact. With `stream`
 * the stores are non-temporal (they bypass the cache: for outputs far larger than the cache). */
#ifndef OG_CONVERT_H
#define OG_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opgrad/opgrad.h"

typedef struct og_convert_table {
    void (*f16_to_f32)(const uint16_t *src, float *dst, size_t n);
    void (*bf16_to_f32)(const uint16_t *src, float *dst, size_t n);
    void (*f32_to_f16)(const float *src, uint16_t *dst, size_t n, bool stream);
    void (*f32_to_bf16)(const float *src, uint16_t *dst, size_t n, bool stream);
    void (*f32_copy)(const float *src, float *dst, size_t n, bool stream);
} og_convert_table;

extern const og_convert_table og_convert[OPGRAD_ISA_COUNT];

#define OG_DECLARE_CONVERT(sfx)                                                                \
    void og_cvt_f16_to_f32__##sfx(const uint16_t *src, float *dst, size_t n);                  \
    void og_cvt_bf16_to_f32__##sfx(const uint16_t *src, float *dst, size_t n);                 \
    void og_cvt_f32_to_f16__##sfx(const float *src, uint16_t *dst, size_t n, bool stream);     \
    void og_cvt_f32_to_bf16__##sfx(const float *src, uint16_t *dst, size_t n, bool stream);    \
    void og_copy_f32__##sfx(const float *src, float *dst, size_t n, bool stream);
OG_DECLARE_CONVERT(scalar)
OG_DECLARE_CONVERT(avx2)
OG_DECLARE_CONVERT(avx512)

#endif
