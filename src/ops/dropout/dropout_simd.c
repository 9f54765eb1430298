/* Dropout's kernels, compiled once per ISA (scalar, AVX2, AVX-512): the Philox4x32-10 bit mask
 * and the masked scale. Integer arithmetic only in the generator, so the three builds give the
 * same bits; the scale is one fp32 multiply per kept element on every build.
 *
 * The mask (docs/ops/dropout.md has the user's version of this definition):
 *   Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), key
 *   (k0, k1) = (low, high 32 bits of seed), counter (c0, c1, c2, c3) = (low, high 32 bits of
 *   offset + b, 0, 0) for block b (64-bit wrap-around), gives four 32-bit words w[0..3];
 *   element i uses word i % 4 of block i / 4 and is kept (bit 1) iff (w >> 8) < K, where
 *   K = ceil((1 - p) 2^24): the word's top 24 bits, as a uniform u in [0, 1), below 1 - p.
 *   Bit i of the mask is bit i % 8 (least significant first) of byte i / 8. */
#include <stddef.h>
#include <stdint.h>

#include "engine/simd/vec.h"
#include "ops/dropout/dropout_kernel.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

// One block, scalar: the nibble of its four keep bits (element 4b + w at bit w).
static inline unsigned block_nibble(uint32_t k0, uint32_t k1, uint64_t ctr, uint32_t K) {
    uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = 0, c3 = 0;
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += PHILOX_W0, k1 += PHILOX_W1;
    }
    return (unsigned)((c0 >> 8) < K) | (unsigned)((c1 >> 8) < K) << 1 |
           (unsigned)((c2 >> 8) < K) << 2 | (unsigned)((c3 >> 8) < K) << 3;
}

void OG_FN(og_dropout_bits)(uint64_t seed, uint64_t ctr, uint32_t K, uint8_t *bytes,
                            size_t nbytes) {
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    size_t j = 0; // byte j holds blocks 2j (low nibble) and 2j + 1
#if defined(OG_ISA_AVX512)
    // 16 blocks per vector (8 bytes)
    const __m512i m0 = _mm512_set1_epi32((int)PHILOX_M0), m1 = _mm512_set1_epi32((int)PHILOX_M1);
    const __m512i kk = _mm512_set1_epi32((int)K), one = _mm512_set1_epi32(1);
    for (; j + 8 <= nbytes; j += 8) {
        uint32_t lo[16], hi[16];
        for (int l = 0; l < 16; l++) {
            uint64_t c = ctr + 2 * j + (uint64_t)l;
            lo[l] = (uint32_t)c, hi[l] = (uint32_t)(c >> 32);
        }
        __m512i c0 = _mm512_loadu_si512(lo), c1 = _mm512_loadu_si512(hi);
        __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
        uint32_t a = k0, b = k1;
        for (int r = 0; r < 10; r++) {
            __m512i e0 = _mm512_mul_epu32(c0, m0),
                    o0 = _mm512_mul_epu32(_mm512_srli_epi64(c0, 32), m0);
            __m512i e1 = _mm512_mul_epu32(c2, m1),
                    o1 = _mm512_mul_epu32(_mm512_srli_epi64(c2, 32), m1);
            __m512i hi0 = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e0, 32), o0);
            __m512i hi1 = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e1, 32), o1);
            // the low halves from the same products (cheaper than vpmulld)
            __m512i lo0 = _mm512_mask_blend_epi32(0xAAAA, e0, _mm512_slli_epi64(o0, 32));
            __m512i lo1 = _mm512_mask_blend_epi32(0xAAAA, e1, _mm512_slli_epi64(o1, 32));
            __m512i n0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32((int)a));
            __m512i n2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32((int)b));
            c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
            a += PHILOX_W0, b += PHILOX_W1;
        }
        __m512i z = _mm512_setzero_si512();
        __m512i v =
            _mm512_mask_mov_epi32(z, _mm512_cmplt_epu32_mask(_mm512_srli_epi32(c0, 8), kk), one);
        v = _mm512_or_si512(
            v, _mm512_slli_epi32(_mm512_mask_mov_epi32(
                                     z, _mm512_cmplt_epu32_mask(_mm512_srli_epi32(c1, 8), kk), one),
                                 1));
        v = _mm512_or_si512(
            v, _mm512_slli_epi32(_mm512_mask_mov_epi32(
                                     z, _mm512_cmplt_epu32_mask(_mm512_srli_epi32(c2, 8), kk), one),
                                 2));
        v = _mm512_or_si512(
            v, _mm512_slli_epi32(_mm512_mask_mov_epi32(
                                     z, _mm512_cmplt_epu32_mask(_mm512_srli_epi32(c3, 8), kk), one),
                                 3));
        // two blocks' nibbles per 64-bit lane -> one byte each
        v = _mm512_or_si512(v, _mm512_srli_epi64(v, 28));
        _mm_storel_epi64((__m128i *)(bytes + j), _mm512_cvtepi64_epi8(v));
    }
#elif defined(OG_ISA_AVX2)
    // 8 blocks per vector (4 bytes)
    const __m256i m0 = _mm256_set1_epi32((int)PHILOX_M0), m1 = _mm256_set1_epi32((int)PHILOX_M1);
    // unsigned (w >> 8) < K as a signed compare: both sides fit in 25 bits
    const __m256i kk = _mm256_set1_epi32((int)K), one = _mm256_set1_epi32(1);
    for (; j + 4 <= nbytes; j += 4) {
        uint32_t lo[8], hi[8];
        for (int l = 0; l < 8; l++) {
            uint64_t c = ctr + 2 * j + (uint64_t)l;
            lo[l] = (uint32_t)c, hi[l] = (uint32_t)(c >> 32);
        }
        __m256i c0 = _mm256_loadu_si256((const __m256i *)lo);
        __m256i c1 = _mm256_loadu_si256((const __m256i *)hi);
        __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
        uint32_t a = k0, b = k1;
        for (int r = 0; r < 10; r++) {
            __m256i e0 = _mm256_mul_epu32(c0, m0),
                    o0 = _mm256_mul_epu32(_mm256_srli_epi64(c0, 32), m0);
            __m256i e1 = _mm256_mul_epu32(c2, m1),
                    o1 = _mm256_mul_epu32(_mm256_srli_epi64(c2, 32), m1);
            __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(e0, 32), o0, 0xAA);
            __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(e1, 32), o1, 0xAA);
            // the low halves from the same products (cheaper than vpmulld)
            __m256i lo0 = _mm256_blend_epi32(e0, _mm256_slli_epi64(o0, 32), 0xAA);
            __m256i lo1 = _mm256_blend_epi32(e1, _mm256_slli_epi64(o1, 32), 0xAA);
            __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)a));
            __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)b));
            c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
            a += PHILOX_W0, b += PHILOX_W1;
        }
        __m256i v = _mm256_and_si256(_mm256_cmpgt_epi32(kk, _mm256_srli_epi32(c0, 8)), one);
        v = _mm256_or_si256(
            v, _mm256_slli_epi32(
                   _mm256_and_si256(_mm256_cmpgt_epi32(kk, _mm256_srli_epi32(c1, 8)), one), 1));
        v = _mm256_or_si256(
            v, _mm256_slli_epi32(
                   _mm256_and_si256(_mm256_cmpgt_epi32(kk, _mm256_srli_epi32(c2, 8)), one), 2));
        v = _mm256_or_si256(
            v, _mm256_slli_epi32(
                   _mm256_and_si256(_mm256_cmpgt_epi32(kk, _mm256_srli_epi32(c3, 8)), one), 3));
        v = _mm256_or_si256(v, _mm256_srli_epi64(v, 28));
        uint64_t q[4];
        _mm256_storeu_si256((__m256i *)q, v);
        for (int l = 0; l < 4; l++) bytes[j + (size_t)l] = (uint8_t)q[l];
    }
#endif
    for (; j < nbytes; j++) {
        unsigned lo = block_nibble(k0, k1, ctr + 2 * j, K);
        unsigned hi = block_nibble(k0, k1, ctr + 2 * j + 1, K);
        bytes[j] = (uint8_t)(lo | hi << 4);
    }
}

void OG_FN(og_dropout_apply)(const float *x, const uint8_t *bits, float scale, float *y, size_t n) {
    size_t i = 0;
#if defined(OG_ISA_AVX512)
    const __m512 s = _mm512_set1_ps(scale);
    for (; i + 16 <= n; i += 16) {
        __mmask16 k = (__mmask16)(bits[i / 8] | (unsigned)bits[i / 8 + 1] << 8);
        _mm512_storeu_ps(y + i, _mm512_maskz_mul_ps(k, _mm512_loadu_ps(x + i), s));
    }
#elif defined(OG_ISA_AVX2)
    const __m256 s = _mm256_set1_ps(scale);
    const __m256i sel = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    for (; i + 8 <= n; i += 8) {
        __m256i b = _mm256_and_si256(_mm256_set1_epi32(bits[i / 8]), sel);
        __m256 keep = _mm256_castsi256_ps(_mm256_cmpeq_epi32(b, sel));
        _mm256_storeu_ps(y + i, _mm256_and_ps(keep, _mm256_mul_ps(_mm256_loadu_ps(x + i), s)));
    }
#endif
    for (; i < n; i++) y[i] = (bits[i / 8] >> (i % 8)) & 1 ? x[i] * scale : 0.0f;
}

// Branch-free per element (the compiler vectorizes it per ISA build): one double multiply.
void OG_FN(og_dropout_apply64)(const double *x, const uint8_t *bits, double scale, double *y,
                               size_t n) {
    for (size_t i = 0; i < n; i++) {
        double keep = (double)((bits[i / 8] >> (i % 8)) & 1);
        y[i] = keep != 0 ? x[i] * scale : 0.0;
    }
}
