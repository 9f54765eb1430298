/* Compiled once per ISA (see CMakeLists.txt).
 *
 * bf16 rounding is integer round-to-nearest-even on the fp32 bits, u + 0x7fff + (bit 16 of u),
 * whose high half is the bf16 result; a NaN keeps its high half with the quiet bit set (0x40 of
 * the bf16, 0x400000 of the fp32). The AVX-512 build keeps the rounded values in the high halves
 * of 32-bit lanes and packs two vectors with one word permute (vpermt2w); AVX2 packs two vectors
 * with vpackusdw. The vector bodies and the tails compute exactly what og_f32_to_bf16 /
 * og_f32_to_f16 (tensor/dtype.c) compute, so every ISA writes the same bits. */
#include "engine/convert.h"
#include "engine/simd/vec16.h"
#include "tensor/dtype.h"

#define F16_RC (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC) // vcvtps2ph: nearest even

#if defined(OG_ISA_AVX512)
// The high words of a's and b's lanes, in order: 32 bf16.
static inline __m512i bf16_pack2(__m512i a, __m512i b) {
    const __m512i odd =
        _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27,
                         25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_permutex2var_epi16(a, odd, b);
}
static inline __m256i bf16_pack1(__m512i a) {
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(a, 16));
}
static inline __mmask16 tail_mask(size_t rest) { return (__mmask16)((1u << rest) - 1u); }

// AVX512-BF16 (Cooper Lake, Sapphire Rapids, Zen 4 on): vcvtne2ps2bf16 rounds 32 floats to
// nearest even in one instruction, NaN -> its high half with the quiet bit set, exactly as above,
// except that it flushes subnormal inputs to zero. Vectors with a subnormal lane take the integer
// path, so the results are the same bits everywhere.
__attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl"))) static void
f32_to_bf16_insn(const float *src, uint16_t *dst, size_t n, bool stream) {
    for (size_t i = 0; i < n; i += 32) { // n is a multiple of 32
        __m512 a = _mm512_loadu_ps(src + i), b = _mm512_loadu_ps(src + i + 16);
        __mmask16 sub = _mm512_fpclass_ps_mask(a, 0x20) | _mm512_fpclass_ps_mask(b, 0x20);
        __m512i h = sub ? bf16_pack2(og_bf16_high(a), og_bf16_high(b))
                        : (__m512i)_mm512_cvtne2ps_pbh(b, a); // a in the low half
        if (stream)
            _mm512_stream_si512((void *)(dst + i), h);
        else
            _mm512_storeu_si512(dst + i, h);
    }
}
#define CVT_ALIGN 64
#elif defined(OG_ISA_AVX2)
// 16 bf16 of two vectors of 8, in order.
static inline __m256i bf16_pack2(__m256i a, __m256i b) {
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8); // packs per 128-bit lane
}
#define CVT_ALIGN 32
#endif

void OG_FN(og_cvt_f16_to_f32)(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
#if defined(OG_ISA_AVX512)
    for (; i + 32 <= n; i += 32) {
        __m512 a = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i)));
        __m512 b = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i + 16)));
        _mm512_storeu_ps(dst + i, a);
        _mm512_storeu_ps(dst + i + 16, b);
    }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
        _mm512_mask_storeu_ps(dst + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, src + i)));
    }
#else
#if defined(OG_ISA_AVX2)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
#endif
    for (; i < n; i++) dst[i] = og_f16_to_f32(src[i]);
#endif
}

void OG_FN(og_cvt_bf16_to_f32)(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
#if defined(OG_ISA_AVX512)
    for (; i + 32 <= n; i += 32) {
        __m512i a = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i)));
        __m512i b = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i + 16)));
        _mm512_storeu_si512(dst + i, _mm512_slli_epi32(a, 16));
        _mm512_storeu_si512(dst + i + 16, _mm512_slli_epi32(b, 16));
    }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
        __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, src + i));
        _mm512_mask_storeu_ps(dst + i, m, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
#else
#if defined(OG_ISA_AVX2)
    for (; i + 16 <= n; i += 16) {
        __m256i a = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
        __m256i b = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i + 8)));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_slli_epi32(a, 16));
        _mm256_storeu_si256((__m256i *)(dst + i + 8), _mm256_slli_epi32(b, 16));
    }
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_slli_epi32(w, 16));
    }
#endif
    for (; i < n; i++) dst[i] = og_bf16_to_f32(src[i]);
#endif
}

// Scalar head until dst reaches CVT_ALIGN bytes (only when streaming), so the vector loop may use
// aligned non-temporal stores; leaves i at the first element of the vector loop.
#if defined(OG_ISA_AVX512) || defined(OG_ISA_AVX2)
#define STREAM_HEAD(dst, n, scalar_store)                                                          \
    size_t i = 0;                                                                                  \
    if (stream)                                                                                    \
        for (; i < n && ((uintptr_t)((dst) + i) % CVT_ALIGN) != 0; i++) scalar_store;
#endif

void OG_FN(og_cvt_f32_to_f16)(const float *src, uint16_t *dst, size_t n, bool stream) {
#if defined(OG_ISA_AVX512)
    STREAM_HEAD(dst, n, dst[i] = og_f32_to_f16(src[i]))
    for (; i + 32 <= n; i += 32) {
        __m256i a = _mm512_cvtps_ph(_mm512_loadu_ps(src + i), F16_RC);
        __m256i b = _mm512_cvtps_ph(_mm512_loadu_ps(src + i + 16), F16_RC);
        __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
        if (stream)
            _mm512_stream_si512((void *)(dst + i), h);
        else
            _mm512_storeu_si512(dst + i, h);
    }
    if (i + 16 <= n) {
        __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(src + i), F16_RC);
        if (stream)
            _mm256_stream_si256((__m256i *)(dst + i), h);
        else
            _mm256_storeu_si256((__m256i *)(dst + i), h);
        i += 16;
    }
    if (i < n) {
        __mmask16 m = tail_mask(n - i);
        _mm256_mask_storeu_epi16(dst + i, m,
                                 _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, src + i), F16_RC));
    }
#else
#if defined(OG_ISA_AVX2)
    STREAM_HEAD(dst, n, dst[i] = og_f32_to_f16(src[i]))
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (stream)
            _mm_stream_si128((__m128i *)(dst + i), h);
        else
            _mm_storeu_si128((__m128i *)(dst + i), h);
    }
#else
    (void)stream;
    size_t i = 0;
#endif
    for (; i < n; i++) dst[i] = og_f32_to_f16(src[i]);
#endif
}

#if defined(OG_ISA_AVX512)
// `insn`: the CPU has AVX512-BF16 (the plan chose the OPGRAD_ISA_AVX512_BF16 level or above).
static inline void f32_to_bf16(const float *src, uint16_t *dst, size_t n, bool stream, bool insn) {
    STREAM_HEAD(dst, n, dst[i] = og_f32_to_bf16(src[i]))
    if (insn && n - i >= 32) {
        size_t m = (n - i) / 32 * 32;
        f32_to_bf16_insn(src + i, dst + i, m, stream);
        i += m;
    }
    for (; i + 32 <= n; i += 32) {
        __m512i h = bf16_pack2(og_bf16_high(_mm512_loadu_ps(src + i)),
                               og_bf16_high(_mm512_loadu_ps(src + i + 16)));
        if (stream)
            _mm512_stream_si512((void *)(dst + i), h);
        else
            _mm512_storeu_si512(dst + i, h);
    }
    if (i + 16 <= n) {
        __m256i h = bf16_pack1(og_bf16_high(_mm512_loadu_ps(src + i)));
        if (stream)
            _mm256_stream_si256((__m256i *)(dst + i), h);
        else
            _mm256_storeu_si256((__m256i *)(dst + i), h);
        i += 16;
    }
    if (i < n) {
        __mmask16 m = tail_mask(n - i);
        _mm256_mask_storeu_epi16(dst + i, m,
                                 bf16_pack1(og_bf16_high(_mm512_maskz_loadu_ps(m, src + i))));
    }
}

void OG_FN(og_cvt_f32_to_bf16)(const float *src, uint16_t *dst, size_t n, bool stream) {
    f32_to_bf16(src, dst, n, stream, false);
}

void OG_FN(og_cvt_f32_to_bf16i)(const float *src, uint16_t *dst, size_t n, bool stream) {
    f32_to_bf16(src, dst, n, stream, true);
}
#else
void OG_FN(og_cvt_f32_to_bf16)(const float *src, uint16_t *dst, size_t n, bool stream) {
#if defined(OG_ISA_AVX2)
    STREAM_HEAD(dst, n, dst[i] = og_f32_to_bf16(src[i]))
    for (; i + 16 <= n; i += 16) {
        __m256i h = bf16_pack2(og_bf16_low(_mm256_loadu_ps(src + i)),
                               og_bf16_low(_mm256_loadu_ps(src + i + 8)));
        if (stream)
            _mm256_stream_si256((__m256i *)(dst + i), h);
        else
            _mm256_storeu_si256((__m256i *)(dst + i), h);
    }
    if (i + 8 <= n) {
        __m128i h = og_pack_low16(og_bf16_low(_mm256_loadu_ps(src + i)));
        if (stream)
            _mm_stream_si128((__m128i *)(dst + i), h);
        else
            _mm_storeu_si128((__m128i *)(dst + i), h);
        i += 8;
    }
#else
    (void)stream;
    size_t i = 0;
#endif
    for (; i < n; i++) dst[i] = og_f32_to_bf16(src[i]);
}
#endif

void OG_FN(og_copy_f32)(const float *src, float *dst, size_t n, bool stream) {
#if defined(OG_ISA_AVX512) || defined(OG_ISA_AVX2)
    if (stream) {
        STREAM_HEAD(dst, n, dst[i] = src[i])
        for (; i + VLEN <= n; i += VLEN) {
#if defined(OG_ISA_AVX512)
            _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
#else
            _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
#endif
        }
        for (; i < n; i++) dst[i] = src[i];
        return;
    }
#endif
    (void)stream;
    memcpy(dst, src, n * sizeof *src);
}
