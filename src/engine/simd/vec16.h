/* 16-bit loads and stores for vec.h kernels, per ISA: a vector of VLEN bf16 or fp16 values widened
 * to fp32 (exact), and an fp32 vector rounded to nearest even into VLEN bf16 / fp16 values, with
 * the same bits as og_f32_to_bf16 / og_f32_to_f16 (tensor/dtype.c) on every ISA: a NaN keeps its
 * high half with the quiet bit set (bf16), overflow goes to inf, subnormals round like normals.
 *
 * OG_EW_LOOP16 runs a kernel body written for OG_EW_LOOP (on ins[k] / outs[k] fp32 windows) over
 * 16-bit arrays: each window is widened into a register-sized buffer, the body runs, and its
 * outputs are rounded once and stored. For an elementwise operator whose operands all have one
 * 16-bit dtype this is exactly CopyIn -> Compute -> CopyOut, fused, without the tile buffers. */
#ifndef OG_VEC16_H
#define OG_VEC16_H

#include <stdbool.h>

#include "engine/simd/vec.h"
#include "tensor/dtype.h"

#if defined(OG_ISA_AVX512)
/// The bf16 bits of 16 floats in the high halves of the 32-bit lanes (the low halves are junk):
/// u + 0x7fff + (bit 16 of u), ties to even; a NaN keeps its high half, quiet bit set.
static inline __m512i og_bf16_high(__m512 v) {
    __m512i u = _mm512_castps_si512(v);
    __m512i r = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));
    r = _mm512_mask_sub_epi32(r, _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000)), r,
                              _mm512_set1_epi32(-1));
    return _mm512_mask_or_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), u,
                                _mm512_set1_epi32(0x400000));
}
static inline vf vload_bf16(const uint16_t *p) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
static inline __m256i og_bf16_bits(vf v) {
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(og_bf16_high(v), 16));
}
static inline void vstore_bf16(uint16_t *p, vf v) {
    _mm256_storeu_si256((__m256i *)p, og_bf16_bits(v));
}
/// Non-temporal: p must be 32-byte aligned.
static inline void vstream_bf16(uint16_t *p, vf v) {
    _mm256_stream_si256((__m256i *)p, og_bf16_bits(v));
}
static inline vf vload_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
static inline void vstore_f16(uint16_t *p, vf v) {
    _mm256_storeu_si256((__m256i *)p,
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
static inline void vstream_f16(uint16_t *p, vf v) {
    _mm256_stream_si256((__m256i *)p,
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
// AVX512-BF16's vcvtneps2bf16 rounds 16 floats in one instruction, as og_bf16_high does, except
// that it flushes subnormal inputs to zero: a vector with a subnormal lane takes the integer path.
// Functions that use it carry OG_BF16_INSN_ATTR; only the OPGRAD_ISA_AVX512_BF16 level and above
// of a kernel table point at them (engine/isa_table.h).
#define OG_BF16_INSN_ATTR __attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl,avx512dq")))
static inline OG_BF16_INSN_ATTR __m256i og_bf16_bits_insn(vf v) {
    return _mm512_fpclass_ps_mask(v, 0x20) ? og_bf16_bits(v) : (__m256i)_mm512_cvtneps_pbh(v);
}
static inline OG_BF16_INSN_ATTR void vstore_bf16i(uint16_t *p, vf v) {
    _mm256_storeu_si256((__m256i *)p, og_bf16_bits_insn(v));
}
static inline OG_BF16_INSN_ATTR void vstream_bf16i(uint16_t *p, vf v) {
    _mm256_stream_si256((__m256i *)p, og_bf16_bits_insn(v));
}
#define vload_bf16i vload_bf16
#define og_bf16i_to_f32 og_bf16_to_f32
#define og_f32_to_bf16i og_f32_to_bf16
#elif defined(OG_ISA_AVX2)
/// The rounded bf16 bits of 8 floats in the high halves of the 32-bit lanes (low halves junk):
/// u + 0x7fff + (bit 16 of u), ties to even; a NaN keeps its high half, quiet bit set.
static inline __m256i og_bf16_high8(__m256 v) {
    __m256i u = _mm256_castps_si256(v);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    __m256i nan = _mm256_or_si256(u, _mm256_set1_epi32(0x400000));
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(nan),
                                                _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
/// 16 bf16 as two vectors: a holds the even elements, b the odd ones, so that neither the load
/// nor the store (vstore2_bf16) has to move values across 128-bit lanes: a load, a shift and an
/// and; two roundings, a shift and a word blend.
#define OG_VEC16_PAIR_BF16
static inline void vload2_bf16(const uint16_t *p, vf *a, vf *b) {
    __m256i w = _mm256_loadu_si256((const __m256i *)p);
    *a = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    *b = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32((int)0xffff0000u)));
}
/// The inverse of vload2_bf16, rounded; `stream`: non-temporal, p 16-byte aligned.
static inline void vstore2_bf16(uint16_t *p, vf a, vf b, bool stream) {
    __m256i h = _mm256_blend_epi16(_mm256_srli_epi32(og_bf16_high8(a), 16), og_bf16_high8(b), 0xAA);
    if (!stream)
        _mm256_storeu_si256((__m256i *)p, h);
    else if ((uintptr_t)p % 32 == 0)
        _mm256_stream_si256((__m256i *)p, h);
    else {
        _mm_stream_si128((__m128i *)p, _mm256_castsi256_si128(h));
        _mm_stream_si128((__m128i *)p + 1, _mm256_extracti128_si256(h, 1));
    }
}
/// The bf16 bits of 8 floats in the low halves of the 32-bit lanes (high halves zero): the same
/// rounding, so CopyOut (engine/convert_simd.c) and the fused loop's stores share it.
static inline __m256i og_bf16_low(__m256 v) { return _mm256_srli_epi32(og_bf16_high8(v), 16); }
/// 8 values in the low halves of the 32-bit lanes, packed in order.
static inline __m128i og_pack_low16(__m256i a) {
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(a, a), 0x08));
}
static inline vf vload_bf16(const uint16_t *p) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline void vstore_bf16(uint16_t *p, vf v) {
    _mm_storeu_si128((__m128i *)p, og_pack_low16(og_bf16_low(v)));
}
static inline void vstream_bf16(uint16_t *p, vf v) {
    _mm_stream_si128((__m128i *)p, og_pack_low16(og_bf16_low(v)));
}
static inline vf vload_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
static inline void vstore_f16(uint16_t *p, vf v) {
    _mm_storeu_si128((__m128i *)p,
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
static inline void vstream_f16(uint16_t *p, vf v) {
    _mm_stream_si128((__m128i *)p,
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#else
static inline vf vload_bf16(const uint16_t *p) { return og_bf16_to_f32(*p); }
static inline void vstore_bf16(uint16_t *p, vf v) { *p = og_f32_to_bf16(v); }
static inline vf vload_f16(const uint16_t *p) { return og_f16_to_f32(*p); }
static inline void vstore_f16(uint16_t *p, vf v) { *p = og_f32_to_f16(v); }
#define vstream_bf16 vstore_bf16 // (no non-temporal scalar store)
#define vstream_f16 vstore_f16
#endif

/// 2 VLEN values of dtype ty as two fp32 vectors and back (vload2_ty / vstore2_ty): by default
/// the first VLEN and the next; a type may split them otherwise (AVX2 bf16: even and odd), since
/// the loop below only needs vstore2 to undo vload2's order.
#define OG_VEC16_PAIR_IN_ORDER(attr, ty)                                                           \
    static inline attr void vload2_##ty(const uint16_t *p, vf *a, vf *b) {                         \
        *a = vload_##ty(p);                                                                        \
        *b = vload_##ty(p + VLEN);                                                                 \
    }                                                                                              \
    static inline attr void vstore2_##ty(uint16_t *p, vf a, vf b, bool stream) {                   \
        if (stream) {                                                                              \
            vstream_##ty(p, a);                                                                    \
            vstream_##ty(p + VLEN, b);                                                             \
        } else {                                                                                   \
            vstore_##ty(p, a);                                                                     \
            vstore_##ty(p + VLEN, b);                                                              \
        }                                                                                          \
    }
#ifndef OG_VEC16_PAIR_BF16
OG_VEC16_PAIR_IN_ORDER(, bf16)
#endif
OG_VEC16_PAIR_IN_ORDER(, f16)
#if defined(OG_ISA_AVX512)
OG_VEC16_PAIR_IN_ORDER(OG_BF16_INSN_ATTR, bf16i)
#endif

/// OG_EW_LOOP over 16-bit arrays in[k] / out[k] of dtype `ty` (bf16 or f16, the vload_ty /
/// vstore_ty pair): the body sees fp32 windows ins[k] / outs[k] exactly as in OG_EW_LOOP. With
/// `stream`, outputs whose windows are aligned for it are written non-temporally. The tail is
/// widened with zero padding and stored element by element through og_f32_to_ty, which rounds as
/// the vector stores do.
#define OG_EW_LOOP16(ty, n, nin, in, nout, out, stream, ...)                                       \
    do {                                                                                           \
        bool og_nt[2];                                                                             \
        for (int og_k = 0; og_k < (nout); og_k++)                                                  \
            og_nt[og_k] = (stream) && (uintptr_t)(out)[og_k] % (VLEN * 2) == 0;                    \
        _Alignas(64) float og_tin[4][VLEN];                                                        \
        _Alignas(64) float og_tout[2][VLEN];                                                       \
        const float *ins[4] = {og_tin[0], og_tin[1], og_tin[2], og_tin[3]};                        \
        float *outs[2] = {og_tout[0], og_tout[1]};                                                 \
        const uint16_t *og_in16[4]; /* the bases in locals, as OG_EW_LOOP_BASES */                 \
        uint16_t *og_out16[2];                                                                     \
        for (int og_k = 0; og_k < (nin); og_k++) og_in16[og_k] = (in)[og_k];                       \
        for (int og_k = 0; og_k < (nout); og_k++) og_out16[og_k] = (out)[og_k];                    \
        size_t og_i = 0;                                                                           \
        for (; og_i + 2 * VLEN <= (n); og_i += 2 * VLEN) { /* two windows per load and store */    \
            vf og_h[2][4], og_r[2][2];                                                             \
            for (int og_k = 0; og_k < (nin); og_k++)                                               \
                vload2_##ty(og_in16[og_k] + og_i, &og_h[0][og_k], &og_h[1][og_k]);                 \
            for (int og_p = 0; og_p < 2; og_p++) {                                                 \
                for (int og_k = 0; og_k < (nin); og_k++) vstore(og_tin[og_k], og_h[og_p][og_k]);   \
                __VA_ARGS__                                                                        \
                for (int og_k = 0; og_k < (nout); og_k++) og_r[og_p][og_k] = vload(og_tout[og_k]); \
            }                                                                                      \
            for (int og_k = 0; og_k < (nout); og_k++)                                              \
                vstore2_##ty(og_out16[og_k] + og_i, og_r[0][og_k], og_r[1][og_k], og_nt[og_k]);    \
        }                                                                                          \
        for (; og_i + VLEN <= (n); og_i += VLEN) {                                                 \
            for (int og_k = 0; og_k < (nin); og_k++)                                               \
                vstore(og_tin[og_k], vload_##ty(og_in16[og_k] + og_i));                            \
            __VA_ARGS__                                                                            \
            for (int og_k = 0; og_k < (nout); og_k++) {                                            \
                if (og_nt[og_k])                                                                   \
                    vstream_##ty(og_out16[og_k] + og_i, vload(og_tout[og_k]));                     \
                else                                                                               \
                    vstore_##ty(og_out16[og_k] + og_i, vload(og_tout[og_k]));                      \
            }                                                                                      \
        }                                                                                          \
        if (og_i < (n)) {                                                                          \
            size_t rest = (n)-og_i;                                                                \
            for (int og_k = 0; og_k < (nin); og_k++)                                               \
                for (size_t og_j = 0; og_j < VLEN; og_j++)                                         \
                    og_tin[og_k][og_j] =                                                           \
                        og_j < rest ? og_##ty##_to_f32((in)[og_k][og_i + og_j]) : 0.0f;            \
            __VA_ARGS__                                                                            \
            for (int og_k = 0; og_k < (nout); og_k++)                                              \
                for (size_t og_j = 0; og_j < rest; og_j++)                                         \
                    (out)[og_k][og_i + og_j] = og_f32_to_##ty(og_tout[og_k][og_j]);                \
        }                                                                                          \
    } while (0)

/// One kernel body, four entry points: name (fp32, for the engine's buffered path and the
/// reductions' maps), name_nt (fp32 with non-temporal stores: outputs used in place past the
/// engine's stream-out size), name_bf16 and name_f16 (fused 16-bit); the AVX-512 build adds
/// name_bf16i, which rounds with AVX512-BF16 instructions (the table's entry from that level up).
/// `consts` is a struct type of the body's constants and `setup(p)` fills it from the operator's
/// parameters; the body sees it as c.
#define OG_EW_KERNEL3(name, consts, setup, nin, nout, ...)                                         \
    void OG_FN(name)(size_t n, const float *const *in, float *const *out, const void *p) {         \
        const consts c = setup(p);                                                                 \
        (void)c;                                                                                   \
        OG_EW_LOOP(n, nin, in, nout, out, __VA_ARGS__);                                            \
    }                                                                                              \
    void OG_FN(name##_nt)(size_t n, const float *const *in, float *const *out, const void *p) {    \
        const consts c = setup(p);                                                                 \
        (void)c;                                                                                   \
        OG_EW_LOOP_NT(n, nin, in, nout, out, __VA_ARGS__);                                         \
    }                                                                                              \
    void OG_FN(name##_bf16)(size_t n, const uint16_t *const *in, uint16_t *const *out,             \
                            const void *p, bool stream) {                                          \
        const consts c = setup(p);                                                                 \
        (void)c;                                                                                   \
        OG_EW_LOOP16(bf16, n, nin, in, nout, out, stream, __VA_ARGS__);                            \
    }                                                                                              \
    OG_EW_KERNEL_BF16I(name, consts, setup, nin, nout, __VA_ARGS__)                                \
    void OG_FN(name##_f16)(size_t n, const uint16_t *const *in, uint16_t *const *out,              \
                           const void *p, bool stream) {                                           \
        const consts c = setup(p);                                                                 \
        (void)c;                                                                                   \
        OG_EW_LOOP16(f16, n, nin, in, nout, out, stream, __VA_ARGS__);                             \
    }

/// The entry points of OG_EW_KERNEL3 for a kernel whose function picks among several loops by its
/// parameters: `body(LOOP)` is a function-like macro, the function's statements over n, in, out
/// and p, that runs each loop as LOOP(nin, nout, { ...vector code on ins[k] / outs[k]... }). Each
/// entry point passes its own loop (fp32, fp32 non-temporal, fused bf16 / fp16).
#define OG_EW_KERNEL3_FN(name, body)                                                               \
    void OG_FN(name)(size_t n, const float *const *in, float *const *out, const void *p) {         \
        body(OG_EW_FN_LOOP_F32);                                                                   \
    }                                                                                              \
    void OG_FN(name##_nt)(size_t n, const float *const *in, float *const *out, const void *p) {    \
        body(OG_EW_FN_LOOP_NT);                                                                    \
    }                                                                                              \
    void OG_FN(name##_bf16)(size_t n, const uint16_t *const *in, uint16_t *const *out,             \
                            const void *p, bool stream) {                                          \
        body(OG_EW_FN_LOOP_BF16);                                                                  \
    }                                                                                              \
    OG_EW_KERNEL_FN_BF16I(name, body)                                                              \
    void OG_FN(name##_f16)(size_t n, const uint16_t *const *in, uint16_t *const *out,              \
                           const void *p, bool stream) {                                           \
        body(OG_EW_FN_LOOP_F16);                                                                   \
    }
#define OG_EW_FN_LOOP_F32(nin, nout, ...) OG_EW_LOOP(n, nin, in, nout, out, __VA_ARGS__)
#define OG_EW_FN_LOOP_NT(nin, nout, ...) OG_EW_LOOP_NT(n, nin, in, nout, out, __VA_ARGS__)
#define OG_EW_FN_LOOP_BF16(nin, nout, ...)                                                         \
    OG_EW_LOOP16(bf16, n, nin, in, nout, out, stream, __VA_ARGS__)
#define OG_EW_FN_LOOP_BF16I(nin, nout, ...)                                                        \
    OG_EW_LOOP16(bf16i, n, nin, in, nout, out, stream, __VA_ARGS__)
#define OG_EW_FN_LOOP_F16(nin, nout, ...)                                                          \
    OG_EW_LOOP16(f16, n, nin, in, nout, out, stream, __VA_ARGS__)

#if defined(OG_ISA_AVX512)
#define OG_EW_KERNEL_FN_BF16I(name, body)                                                          \
    OG_BF16_INSN_ATTR void OG_FN(name##_bf16i)(size_t n, const uint16_t *const *in,                \
                                               uint16_t *const *out, const void *p, bool stream) { \
        body(OG_EW_FN_LOOP_BF16I);                                                                 \
    }
#else
#define OG_EW_KERNEL_FN_BF16I(name, body)
#endif

#if defined(OG_ISA_AVX512)
#define OG_EW_KERNEL_BF16I(name, consts, setup, nin, nout, ...)                                    \
    OG_BF16_INSN_ATTR void OG_FN(name##_bf16i)(size_t n, const uint16_t *const *in,                \
                                               uint16_t *const *out, const void *p, bool stream) { \
        const consts c = setup(p);                                                                 \
        (void)c;                                                                                   \
        OG_EW_LOOP16(bf16i, n, nin, in, nout, out, stream, __VA_ARGS__);                           \
    }
#else
#define OG_EW_KERNEL_BF16I(name, consts, setup, nin, nout, ...)
#endif

/// For kernels without constants.
typedef struct og_no_consts {
    char unused;
} og_no_consts;
static inline og_no_consts og_no_setup(const void *p) {
    (void)p;
    return (og_no_consts){0};
}

#endif
