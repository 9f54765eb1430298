/* Compiled once per ISA (see CMakeLists.txt). */
#include "engine/convert.h"
#include "engine/simd/vec.h"
#include "tensor/dtype.h"

#if defined(OG_ISA_AVX512)
static inline __m512i bf16_round(__m512 v) {
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
    __m512i nan = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    return _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), r, nan);
}
#define CVT_ALIGN 64
#elif defined(OG_ISA_AVX2)
static inline __m128i bf16_round(__m256 v) {
    __m256i u = _mm256_castps_si256(v);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    __m256i nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    r = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(nan),
                                             _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    __m256i packed = _mm256_packus_epi32(r, r); // per 128-bit lane
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}
#define CVT_ALIGN 32
#endif

void OG_FN(og_cvt_f16_to_f32)(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
#if defined(OG_ISA_AVX512)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
#elif defined(OG_ISA_AVX2)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
#endif
    for (; i < n; i++) dst[i] = og_f16_to_f32(src[i]);
}

void OG_FN(og_cvt_bf16_to_f32)(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
#if defined(OG_ISA_AVX512)
    for (; i + 16 <= n; i += 16) {
        __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i)));
        _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
#elif defined(OG_ISA_AVX2)
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
        _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
    }
#endif
    for (; i < n; i++) dst[i] = og_bf16_to_f32(src[i]);
}

// Scalar head until dst reaches `align` bytes (only when streaming), so the vector loop may use
// aligned non-temporal stores; returns the number of elements handled.
#if defined(OG_ISA_AVX512) || defined(OG_ISA_AVX2)
#define STREAM_HEAD(dst, n, elem_size, scalar_store)                                              \
    size_t i = 0;                                                                              \
    if (stream)                                                                                \
        for (; i < n && ((uintptr_t)((dst) + i) % CVT_ALIGN) != 0; i++) scalar_store;
#endif

void OG_FN(og_cvt_f32_to_f16)(const float *src, uint16_t *dst, size_t n, bool stream) {
#if defined(OG_ISA_AVX512)
    STREAM_HEAD(dst, n, 2, dst[i] = og_f32_to_f16(src[i]))
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (stream) _mm256_stream_si256((__m256i *)(dst + i), h);
        else _mm256_storeu_si256((__m256i *)(dst + i), h);
    }
    if (stream) _mm_sfence();
#elif defined(OG_ISA_AVX2)
    STREAM_HEAD(dst, n, 2, dst[i] = og_f32_to_f16(src[i]))
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (stream) _mm_stream_si128((__m128i *)(dst + i), h);
        else _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    if (stream) _mm_sfence();
#else
    (void)stream;
    size_t i = 0;
#endif
    for (; i < n; i++) dst[i] = og_f32_to_f16(src[i]);
}

void OG_FN(og_cvt_f32_to_bf16)(const float *src, uint16_t *dst, size_t n, bool stream) {
#if defined(OG_ISA_AVX512)
    STREAM_HEAD(dst, n, 2, dst[i] = og_f32_to_bf16(src[i]))
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm512_cvtepi32_epi16(bf16_round(_mm512_loadu_ps(src + i)));
        if (stream) _mm256_stream_si256((__m256i *)(dst + i), h);
        else _mm256_storeu_si256((__m256i *)(dst + i), h);
    }
    if (stream) _mm_sfence();
#elif defined(OG_ISA_AVX2)
    STREAM_HEAD(dst, n, 2, dst[i] = og_f32_to_bf16(src[i]))
    for (; i + 8 <= n; i += 8) {
        __m128i h = bf16_round(_mm256_loadu_ps(src + i));
        if (stream) _mm_stream_si128((__m128i *)(dst + i), h);
        else _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    if (stream) _mm_sfence();
#else
    (void)stream;
    size_t i = 0;
#endif
    for (; i < n; i++) dst[i] = og_f32_to_bf16(src[i]);
}

void OG_FN(og_copy_f32)(const float *src, float *dst, size_t n, bool stream) {
#if defined(OG_ISA_AVX512) || defined(OG_ISA_AVX2)
    if (stream) {
        STREAM_HEAD(dst, n, 4, dst[i] = src[i])
        for (; i + VLEN <= n; i += VLEN) {
#if defined(OG_ISA_AVX512)
            _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
#else
            _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
#endif
        }
        _mm_sfence();
        for (; i < n; i++) dst[i] = src[i];
        return;
    }
#endif
    (void)stream;
    memcpy(dst, src, n * sizeof *src);
}
