/* CopyIn / CopyOut conversions between storage dtypes and fp32 tile buffers, per ISA.
 * Rounding is to nearest even everywhere; NaN stays NaN; subnormals are exact. With `stream`
 * the stores are non-temporal (they bypass the cache: for outputs far larger than the cache).
 * Non-temporal stores are weakly ordered and the converters do not fence them: the calling thread
 * sees them at once, but it must call og_stream_fence() after its last one before another thread
 * may read the data (one fence per core and launch, not one per tile). */
#ifndef OG_CONVERT_H
#define OG_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"
#include "opgrad/opgrad.h"

typedef struct og_convert_table {
    void (*f16_to_f32)(const uint16_t *src, float *dst, size_t n);
    void (*bf16_to_f32)(const uint16_t *src, float *dst, size_t n);
    void (*f32_to_f16)(const float *src, uint16_t *dst, size_t n, bool stream);
    void (*f32_to_bf16)(const float *src, uint16_t *dst, size_t n, bool stream);
    void (*f32_copy)(const float *src, float *dst, size_t n, bool stream);
} og_convert_table;

extern const og_convert_table og_convert[OPGRAD_ISA_COUNT];

/// One element of a 16-bit or fp32 storage dtype, as fp32 (and back, rounding to nearest even).
/// Loads also take integer and bool inputs (an operator that promotes them to a float type):
/// converted to fp32 with rounding to nearest, bool as 0 / 1.
float og_load_elem(const char *p, aclDataType dt);
void og_store_elem(char *p, aclDataType dt, float v);
/// n elements `stride` apart (0 = broadcast one value) into / from a contiguous fp32 buffer.
void og_load_run(const og_convert_table *cv, const char *src, aclDataType dt, int64_t stride,
                 float *dst, int64_t n);
void og_store_run(const og_convert_table *cv, char *dst, aclDataType dt, int64_t stride,
                  const float *src, int64_t n, bool stream);
/// Rounds fp32 values to a 16-bit float dtype and back (an op's result in its promoted dtype).
void og_round_through(const og_convert_table *cv, float *v, int64_t n, aclDataType dt);
/// float64 CopyIn / CopyOut: n elements `stride` apart (0 = broadcast one value) of any storage
/// dtype into / from a contiguous float64 buffer. Integers convert to the nearest double; an fp32 /
/// 16-bit store rounds the double once (to nearest even).
void og_load_run64(const char *src, aclDataType dt, int64_t stride, double *dst, int64_t n);
void og_store_run64(char *dst, aclDataType dt, int64_t stride, const double *src, int64_t n);
/// Orders this thread's earlier non-temporal stores before its later stores (sfence).
void og_stream_fence(void);

#define OG_DECLARE_CONVERT(sfx)                                                                    \
    void og_cvt_f16_to_f32__##sfx(const uint16_t *src, float *dst, size_t n);                      \
    void og_cvt_bf16_to_f32__##sfx(const uint16_t *src, float *dst, size_t n);                     \
    void og_cvt_f32_to_f16__##sfx(const float *src, uint16_t *dst, size_t n, bool stream);         \
    void og_cvt_f32_to_bf16__##sfx(const float *src, uint16_t *dst, size_t n, bool stream);        \
    void og_copy_f32__##sfx(const float *src, float *dst, size_t n, bool stream);
OG_DECLARE_CONVERT(scalar)
OG_DECLARE_CONVERT(avx2)
OG_DECLARE_CONVERT(avx512)
void og_cvt_f32_to_bf16i__avx512(const float *src, uint16_t *dst, size_t n, bool stream);

#endif
