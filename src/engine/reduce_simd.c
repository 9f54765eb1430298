/* Kernels of the reduction engine, compiled once per ISA (see CMakeLists.txt): one instance of
 * reduce_kernels.inc per operation (sum, max, min). Every lane combines its values in the same
 * order on every ISA (16 lanes, whatever the vector width), so the three builds give
 * bitwise-identical results (reduce.h). */
#include "engine/reduce.h"
#include "engine/simd/vec.h"
#include "tensor/dtype.h"

// VLEN 16-bit values widened to fp32 in registers (exact: every bf16 and fp16 value is an fp32).
#if defined(OG_ISA_AVX512)
static inline vf load_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
static inline vf load_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
#elif defined(OG_ISA_AVX2)
static inline vf load_bf16(const uint16_t *p) {
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
static inline vf load_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
#else
static inline vf load_bf16(const uint16_t *p) { return og_bf16_to_f32(*p); }
static inline vf load_f16(const uint16_t *p) { return og_f16_to_f32(*p); }
#endif
static inline vf load_f32(const float *p) { return vload(p); }
static inline float elem_bf16(const uint16_t *p) { return og_bf16_to_f32(*p); }
static inline float elem_f16(const uint16_t *p) { return og_f16_to_f32(*p); }
static inline float elem_f32(const float *p) { return *p; }

// The ISA-suffixed symbol of kernel k of the instance (RED_NAME expanded before OG_FN pastes).
#define RED_FN_(name) OG_FN(name)
#define RED_FN(k) RED_FN_(RED_NAME(k))

// The 16-lane tree ((l0 o l1) o (l2 o l3)) o ... of a lane array.
#define TREE16(l)                                                                                  \
    SCOMB(SCOMB(SCOMB(SCOMB(l[0], l[1]), SCOMB(l[2], l[3])),                                       \
                SCOMB(SCOMB(l[4], l[5]), SCOMB(l[6], l[7]))),                                      \
          SCOMB(SCOMB(SCOMB(l[8], l[9]), SCOMB(l[10], l[11])),                                     \
                SCOMB(SCOMB(l[12], l[13]), SCOMB(l[14], l[15]))))

// Sum: -0 is the identity that keeps the sign of an all -0 sum.
#define RED_NAME(k) og_red_##k
#define VCOMB(a, b) vadd(a, b)
#define SCOMB(a, b) ((a) + (b))
#define RED_IDENTITY (-0.0f)
#include "engine/reduce_kernels.inc"

// Max and min propagate NaN (the first NaN met in the fixed order wins) and keep the right
// operand when both compare equal (+0 and -0), the same way on every ISA.
static inline vf vmax_nan(vf a, vf b) { return vsel(vmor(vgt(a, b), visnan(a)), a, b); }
static inline vf vmin_nan(vf a, vf b) { return vsel(vmor(vlt(a, b), visnan(a)), a, b); }
static inline float smax_nan(float a, float b) { return (a > b || a != a) ? a : b; }
static inline float smin_nan(float a, float b) { return (a < b || a != a) ? a : b; }

#define RED_NAME(k) og_redmax_##k
#define VCOMB(a, b) vmax_nan(a, b)
#define SCOMB(a, b) smax_nan(a, b)
#define RED_IDENTITY (-INFINITY)
#include "engine/reduce_kernels.inc"

#define RED_NAME(k) og_redmin_##k
#define VCOMB(a, b) vmin_nan(a, b)
#define SCOMB(a, b) smin_nan(a, b)
#define RED_IDENTITY (INFINITY)
#include "engine/reduce_kernels.inc"
