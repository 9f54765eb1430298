/* A tiny fp32 vector API, so a kernel is written once and compiled per ISA (scalar, AVX2,
 * AVX-512). Every operation is IEEE-exact in the same way on all three (fma is a fused
 * multiply-add everywhere, rounding is to nearest even), so the three builds of a kernel give
 * bitwise-identical results. Include with exactly one of OG_ISA_SCALAR / OG_ISA_AVX2 /
 * OG_ISA_AVX512 defined; OG_FN(name) gives the ISA-suffixed symbol. */
#ifndef OG_VEC_H
#define OG_VEC_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(OG_ISA_AVX512)
#include <immintrin.h>
#define OG_FN(name) name##__avx512
#define VLEN 16
typedef __m512 vf;
typedef __m512i vi;
typedef __mmask16 vm;
static inline vf vload(const float *p) { return _mm512_loadu_ps(p); }
static inline void vstore(float *p, vf v) { _mm512_storeu_ps(p, v); }
/// A non-temporal store (p aligned to the vector).
static inline void vstream(float *p, vf v) { _mm512_stream_ps(p, v); }
static inline vf vset(float x) { return _mm512_set1_ps(x); }
static inline vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vdiv(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vabs(vf a) { return _mm512_abs_ps(a); }
static inline vf vround(vf a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vm vgt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
static inline vm veq(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
static inline vm visnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
static inline vm visinf(vf a) {
    return _mm512_cmp_ps_mask(_mm512_abs_ps(a), _mm512_set1_ps(INFINITY), _CMP_EQ_OQ);
}
static inline vm vmor(vm a, vm b) { return a | b; }
static inline vm vmandnot(vm a, vm b) { return (vm)(~a & b); } // !a & b
static inline vm vlt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline vm vne(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ); }
static inline int vany(vm m) { return m != 0; }
/// m ? a : b
static inline vf vsel(vm m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }
/// 2^k for integer-valued k in [-126, 127].
static inline vf vpow2i(vf k) {
    vi e = _mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}
/// floor(k / 2) for integer-valued k.
static inline vf vhalf_floor(vf k) {
    return _mm512_roundscale_ps(_mm512_mul_ps(k, _mm512_set1_ps(0.5f)),
                                _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}
/// -|a| (the sign bit set; NaN stays NaN).
static inline vf vnegabs(vf a) { return _mm512_or_ps(a, _mm512_set1_ps(-0.0f)); }
/// The float whose bits are k's shifted left by 23: 2^m for k = 0x1.8p23 + 127 + m (m integer
/// in [-126, 127]), the power of two of a magic-number rounding.
static inline vf vbits_shl23(vf k) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(k), 23));
}
/// c - a b and a b - c, fused (one rounding: the same bits as vfma with a negated operand).
static inline vf vfnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
static inline vf vfmsub(vf a, vf b, vf c) { return _mm512_fmsub_ps(a, b, c); }
/// The float whose bits are k minus a's bits (integer subtraction), e.g. a reciprocal seed.
static inline vf vbits_rsub(vf a, int32_t k) {
    return _mm512_castsi512_ps(_mm512_sub_epi32(_mm512_set1_epi32(k), _mm512_castps_si512(a)));
}
/// a > b, or a or b NaN (one compare: "not less or equal", unordered).
static inline vm vgtu(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLE_UQ); }

/// A float vector widened to double precision (two halves), for the few steps that cancel.
typedef struct {
    __m512d lo, hi;
} vd;
static inline vd vwiden(vf a) {
    vd r = {_mm512_cvtps_pd(_mm512_castps512_ps256(a)),
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)))};
    return r;
}
static inline vf vnarrow(vd a) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(a.lo)), _mm512_cvtpd_ps(a.hi),
                              1);
}
static inline vd vdset(double x) {
    vd r = {_mm512_set1_pd(x), _mm512_set1_pd(x)};
    return r;
}
static inline vd vdadd(vd a, vd b) {
    vd r = {_mm512_add_pd(a.lo, b.lo), _mm512_add_pd(a.hi, b.hi)};
    return r;
}
static inline vd vdmul(vd a, vd b) {
    vd r = {_mm512_mul_pd(a.lo, b.lo), _mm512_mul_pd(a.hi, b.hi)};
    return r;
}
static inline vd vdfma(vd a, vd b, vd c) {
    vd r = {_mm512_fmadd_pd(a.lo, b.lo, c.lo), _mm512_fmadd_pd(a.hi, b.hi, c.hi)};
    return r;
}
/// m ? a : b, with a float-lane mask.
static inline vd vdsel(vm m, vd a, vd b) {
    vd r = {_mm512_mask_blend_pd((__mmask8)(m & 0xff), b.lo, a.lo),
            _mm512_mask_blend_pd((__mmask8)(m >> 8), b.hi, a.hi)};
    return r;
}
/// 2^k in double for integer-valued k in [-1022, 1023].
static inline vd vdpow2i(vf k) {
    __m512i ki = _mm512_cvtps_epi32(k);
    __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(ki));
    __m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(ki, 1));
    __m512i bias = _mm512_set1_epi64(1023);
    vd r = {_mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(lo, bias), 52)),
            _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(hi, bias), 52))};
    return r;
}
#elif defined(OG_ISA_AVX2)
#include <immintrin.h>
#define OG_FN(name) name##__avx2
#define VLEN 8
typedef __m256 vf;
typedef __m256i vi;
typedef __m256 vm;
static inline vf vload(const float *p) { return _mm256_loadu_ps(p); }
static inline void vstore(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline void vstream(float *p, vf v) { _mm256_stream_ps(p, v); }
static inline vf vset(float x) { return _mm256_set1_ps(x); }
static inline vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vdiv(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vabs(vf a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline vf vround(vf a) {
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vm vgt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline vm veq(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline vm visnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
static inline vm visinf(vf a) {
    return _mm256_cmp_ps(vabs(a), _mm256_set1_ps(INFINITY), _CMP_EQ_OQ);
}
static inline vm vmor(vm a, vm b) { return _mm256_or_ps(a, b); }
static inline vm vmandnot(vm a, vm b) { return _mm256_andnot_ps(a, b); }
static inline vm vlt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline vm vne(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }
static inline int vany(vm m) { return _mm256_movemask_ps(m) != 0; }
static inline vf vsel(vm m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }
static inline vf vpow2i(vf k) {
    vi e = _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
static inline vf vhalf_floor(vf k) {
    return _mm256_round_ps(_mm256_mul_ps(k, _mm256_set1_ps(0.5f)),
                           _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}
static inline vf vnegabs(vf a) { return _mm256_or_ps(a, _mm256_set1_ps(-0.0f)); }
static inline vf vbits_shl23(vf k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(k), 23));
}
static inline vf vfnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
static inline vf vfmsub(vf a, vf b, vf c) { return _mm256_fmsub_ps(a, b, c); }
static inline vf vbits_rsub(vf a, int32_t k) {
    return _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_set1_epi32(k), _mm256_castps_si256(a)));
}
static inline vm vgtu(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_NLE_UQ); }

typedef struct {
    __m256d lo, hi;
} vd;
static inline vd vwiden(vf a) {
    vd r = {_mm256_cvtps_pd(_mm256_castps256_ps128(a)),
            _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1))};
    return r;
}
static inline vf vnarrow(vd a) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(a.lo)),
                                _mm256_cvtpd_ps(a.hi), 1);
}
static inline vd vdset(double x) {
    vd r = {_mm256_set1_pd(x), _mm256_set1_pd(x)};
    return r;
}
static inline vd vdadd(vd a, vd b) {
    vd r = {_mm256_add_pd(a.lo, b.lo), _mm256_add_pd(a.hi, b.hi)};
    return r;
}
static inline vd vdmul(vd a, vd b) {
    vd r = {_mm256_mul_pd(a.lo, b.lo), _mm256_mul_pd(a.hi, b.hi)};
    return r;
}
static inline vd vdfma(vd a, vd b, vd c) {
    vd r = {_mm256_fmadd_pd(a.lo, b.lo, c.lo), _mm256_fmadd_pd(a.hi, b.hi, c.hi)};
    return r;
}
static inline vd vdsel(vm m, vd a, vd b) {
    // Widening an all-ones float lane gives a negative NaN: blendv only reads the sign bit.
    __m256d mlo = _mm256_cvtps_pd(_mm256_castps256_ps128(m));
    __m256d mhi = _mm256_cvtps_pd(_mm256_extractf128_ps(m, 1));
    vd r = {_mm256_blendv_pd(b.lo, a.lo, mlo), _mm256_blendv_pd(b.hi, a.hi, mhi)};
    return r;
}
static inline vd vdpow2i(vf k) {
    __m256i ki = _mm256_cvtps_epi32(k);
    __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(ki));
    __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(ki, 1));
    __m256i bias = _mm256_set1_epi64x(1023);
    vd r = {_mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(lo, bias), 52)),
            _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(hi, bias), 52))};
    return r;
}
#elif defined(OG_ISA_SCALAR)
#define OG_FN(name) name##__scalar
#define VLEN 1
typedef float vf;
typedef int vm;
static inline vf vload(const float *p) { return *p; }
static inline void vstore(float *p, vf v) { *p = v; }
static inline void vstream(float *p, vf v) { *p = v; } // (no non-temporal scalar store)
static inline vf vset(float x) { return x; }
static inline vf vadd(vf a, vf b) { return a + b; }
static inline vf vsub(vf a, vf b) { return a - b; }
static inline vf vmul(vf a, vf b) { return a * b; }
static inline vf vdiv(vf a, vf b) { return a / b; }
static inline vf vfma(vf a, vf b, vf c) { return fmaf(a, b, c); }
// x86 min/max semantics (return the second operand when either is NaN), as the vector builds.
static inline vf vmin(vf a, vf b) { return a < b ? a : b; }
static inline vf vmax(vf a, vf b) { return a > b ? a : b; }
static inline vf vabs(vf a) { return fabsf(a); }
static inline vf vround(vf a) { return nearbyintf(a); }
static inline vm vgt(vf a, vf b) { return a > b; }
static inline vm veq(vf a, vf b) { return a == b; }
static inline vm visnan(vf a) { return a != a; }
static inline vm visinf(vf a) { return fabsf(a) == INFINITY; }
static inline vm vmor(vm a, vm b) { return a | b; }
static inline vm vmandnot(vm a, vm b) { return (!a) & b; }
static inline vm vlt(vf a, vf b) { return a < b; }
static inline vm vne(vf a, vf b) { return a != b; }
static inline int vany(vm m) { return m != 0; }
static inline vf vsel(vm m, vf a, vf b) { return m ? a : b; }
static inline vf vpow2i(vf k) {
    uint32_t bits = (uint32_t)((int)k + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
static inline vf vhalf_floor(vf k) { return floorf(k * 0.5f); }
static inline vf vnegabs(vf a) { return -fabsf(a); }
static inline vf vbits_shl23(vf k) {
    uint32_t bits;
    memcpy(&bits, &k, sizeof bits);
    bits <<= 23;
    memcpy(&k, &bits, sizeof k);
    return k;
}
static inline vf vfnmadd(vf a, vf b, vf c) { return fmaf(-a, b, c); }
static inline vf vfmsub(vf a, vf b, vf c) { return fmaf(a, b, -c); }
static inline vf vbits_rsub(vf a, int32_t k) {
    uint32_t bits;
    memcpy(&bits, &a, sizeof bits);
    bits = (uint32_t)k - bits;
    memcpy(&a, &bits, sizeof a);
    return a;
}
static inline vm vgtu(vf a, vf b) { return !(a <= b); }

typedef double vd;
static inline vd vwiden(vf a) { return (double)a; }
static inline vf vnarrow(vd a) { return (float)a; }
static inline vd vdset(double x) { return x; }
static inline vd vdadd(vd a, vd b) { return a + b; }
static inline vd vdmul(vd a, vd b) { return a * b; }
static inline vd vdfma(vd a, vd b, vd c) { return fma(a, b, c); }
static inline vd vdsel(vm m, vd a, vd b) { return m ? a : b; }
static inline vd vdpow2i(vf k) {
    uint64_t bits = (uint64_t)((int64_t)k + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}
#else
#error "define one of OG_ISA_SCALAR, OG_ISA_AVX2, OG_ISA_AVX512"
#endif

/// The tail of OG_EW_LOOP / OG_EW_LOOP_NT, the elements from og_i to n (fewer than VLEN): the
/// inputs' rest in zero-padded stack copies, the outputs in the windows `win` and copied out.
#define OG_EW_LOOP_TAIL(n, nin, in, nout, out, win, ...)                                           \
    if (og_i < (n)) {                                                                              \
        float tin[4][VLEN];                                                                        \
        size_t rest = (n)-og_i;                                                                    \
        for (int k = 0; k < (nin); k++) {                                                          \
            memset(tin[k], 0, sizeof tin[k]);                                                      \
            memcpy(tin[k], (in)[k] + og_i, rest * sizeof(float));                                  \
            ins[k] = tin[k];                                                                       \
        }                                                                                          \
        for (int k = 0; k < (nout); k++) outs[k] = (win)[k];                                       \
        __VA_ARGS__                                                                                \
        for (int k = 0; k < (nout); k++) memcpy((out)[k] + og_i, (win)[k], rest * sizeof(float));  \
    }

/// The operands' base pointers, copied once into locals before a loop: a vector store
/// (_mm256_storeu_ps and kin write through may_alias types) could otherwise change in[k] / out[k]
/// for all the compiler knows, and it would reload them on every iteration.
#define OG_EW_LOOP_BASES(nin, in, nout, out)                                                       \
    for (int k = 0; k < (nin); k++) og_in[k] = (in)[k];                                            \
    for (int k = 0; k < (nout); k++) og_out[k] = (out)[k];

/// Runs a vector body over n elements: full vectors in place, and the tail through zero-padded
/// stack copies, so no lane ever reads or writes past n. Kernels use it as
///   OG_EW_LOOP(n, nin, in, nout, out, { ...vector code on ins[k] / outs[k]... });
/// where ins[k] / outs[k] point at VLEN-element windows of in[k] / out[k].
#define OG_EW_LOOP(n, nin, in, nout, out, ...)                                                     \
    do {                                                                                           \
        size_t og_i = 0;                                                                           \
        const float *ins[4], *og_in[4];                                                            \
        float *outs[2], *og_out[2];                                                                \
        OG_EW_LOOP_BASES(nin, in, nout, out)                                                       \
        for (; og_i + VLEN <= (n); og_i += VLEN) {                                                 \
            for (int k = 0; k < (nin); k++) ins[k] = og_in[k] + og_i;                              \
            for (int k = 0; k < (nout); k++) outs[k] = og_out[k] + og_i;                           \
            __VA_ARGS__                                                                            \
        }                                                                                          \
        float og_tout[2][VLEN];                                                                    \
        OG_EW_LOOP_TAIL(n, nin, in, nout, out, og_tout, __VA_ARGS__)                               \
    } while (0)

/// OG_EW_LOOP with non-temporal stores: the body writes its outputs into VLEN-element windows on
/// the stack, which are streamed to out[k] as soon as they are computed (an output not aligned to
/// the vector takes normal stores), so the stores leave while the next loads are in flight. For
/// outputs far larger than the caches (the engine's stream_out plans); the caller fences.
#define OG_EW_LOOP_NT(n, nin, in, nout, out, ...)                                                  \
    do {                                                                                           \
        bool og_nt[2];                                                                             \
        for (int k = 0; k < (nout); k++)                                                           \
            og_nt[k] = (uintptr_t)(out)[k] % (VLEN * sizeof(float)) == 0;                          \
        _Alignas(64) float og_win[2][VLEN];                                                        \
        const float *ins[4], *og_in[4];                                                            \
        float *outs[2] = {og_win[0], og_win[1]}, *og_out[2];                                       \
        OG_EW_LOOP_BASES(nin, in, nout, out)                                                       \
        size_t og_i = 0;                                                                           \
        for (; og_i + VLEN <= (n); og_i += VLEN) {                                                 \
            for (int k = 0; k < (nin); k++) ins[k] = og_in[k] + og_i;                              \
            __VA_ARGS__                                                                            \
            for (int k = 0; k < (nout); k++) {                                                     \
                if (og_nt[k])                                                                      \
                    vstream(og_out[k] + og_i, vload(og_win[k]));                                   \
                else                                                                               \
                    vstore(og_out[k] + og_i, vload(og_win[k]));                                    \
            }                                                                                      \
        }                                                                                          \
        OG_EW_LOOP_TAIL(n, nin, in, nout, out, og_win, __VA_ARGS__)                                \
    } while (0)

#endif
