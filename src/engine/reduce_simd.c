/* Kernels of the reduction engine, compiled once per ISA (see CMakeLists.txt). They only add, and
 * every lane adds its values in the same order on every ISA (16 lanes, whatever the vector
 * width), so the three builds give bitwise-identical sums (reduce.h). */
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

// acc[i % 16] += x[i]. A vector of VLEN lanes covers lanes [j, j + VLEN) of a 16-lane group.
void OG_FN(og_red_lanes)(const float *x, size_t n, float *acc) {
    vf a[OG_RED_LANES / VLEN];
    for (int j = 0; j < OG_RED_LANES / VLEN; j++) a[j] = vload(acc + j * VLEN);
    size_t i = 0;
    for (; i + OG_RED_LANES <= n; i += OG_RED_LANES)
        for (int j = 0; j < OG_RED_LANES / VLEN; j++) a[j] = vadd(a[j], vload(x + i + j * VLEN));
    if (i < n) { // the tail: lanes past n add -0, which leaves them unchanged
        float t[OG_RED_LANES];
        for (int j = 0; j < OG_RED_LANES; j++) t[j] = i + (size_t)j < n ? x[i + (size_t)j] : -0.0f;
        for (int j = 0; j < OG_RED_LANES / VLEN; j++) a[j] = vadd(a[j], vload(t + j * VLEN));
    }
    for (int j = 0; j < OG_RED_LANES / VLEN; j++) vstore(acc + j * VLEN, a[j]);
}

// acc[(i % 16) * w + j] += rows[i][j]: lane by lane, a vector of columns kept in registers over
// the rows of that lane. ROWS_KERNEL(name, T, LOAD, ELEM) reads rows of T (fp32, or 16-bit values
// widened in registers).
#define ROWS_KERNEL(name, T, LOAD, ELEM)                                                           \
    void OG_FN(name)(const T *const *rows, size_t n, size_t w, float *acc) {                       \
        size_t lanes = n < OG_RED_LANES ? n : OG_RED_LANES;                                        \
        for (size_t l = 0; l < lanes; l++) {                                                       \
            float *al = acc + l * w;                                                               \
            size_t j = 0;                                                                          \
            for (; j + 4 * VLEN <= w; j += 4 * VLEN) {                                             \
                vf a0 = vload(al + j), a1 = vload(al + j + VLEN), a2 = vload(al + j + 2 * VLEN),   \
                   a3 = vload(al + j + 3 * VLEN);                                                  \
                for (size_t i = l; i < n; i += OG_RED_LANES) {                                     \
                    const T *r = rows[i] + j;                                                      \
                    a0 = vadd(a0, LOAD(r));                                                        \
                    a1 = vadd(a1, LOAD(r + VLEN));                                                 \
                    a2 = vadd(a2, LOAD(r + 2 * VLEN));                                             \
                    a3 = vadd(a3, LOAD(r + 3 * VLEN));                                             \
                }                                                                                  \
                vstore(al + j, a0);                                                                \
                vstore(al + j + VLEN, a1);                                                         \
                vstore(al + j + 2 * VLEN, a2);                                                     \
                vstore(al + j + 3 * VLEN, a3);                                                     \
            }                                                                                      \
            for (; j + VLEN <= w; j += VLEN) {                                                     \
                vf a0 = vload(al + j);                                                             \
                for (size_t i = l; i < n; i += OG_RED_LANES) a0 = vadd(a0, LOAD(rows[i] + j));     \
                vstore(al + j, a0);                                                                \
            }                                                                                      \
            for (; j < w; j++) { /* columns past the last full vector: the same adds */            \
                float s = al[j];                                                                   \
                for (size_t i = l; i < n; i += OG_RED_LANES) s += ELEM(rows[i] + j);               \
                al[j] = s;                                                                         \
            }                                                                                      \
        }                                                                                          \
    }
ROWS_KERNEL(og_red_rows, float, load_f32, elem_f32)
ROWS_KERNEL(og_red_rows_bf16, uint16_t, load_bf16, elem_bf16)
ROWS_KERNEL(og_red_rows_f16, uint16_t, load_f16, elem_f16)

// The 16-lane tree of one chunk's accumulators, ((l0 + l1) + (l2 + l3)) + ..., and the sums of
// whole chunks. IEEE addition is commutative, so a vector that adds each lane to its neighbour
// computes the same pairs in both lanes; the first lane ends up with the tree's result.
#if defined(OG_ISA_AVX512)
static inline float tree16(vf a) {
    a = _mm512_add_ps(a, _mm512_permute_ps(a, 0xB1));       // (l0+l1) in lane 0, ...
    a = _mm512_add_ps(a, _mm512_permute_ps(a, 0x4E));       // ((l0+l1)+(l2+l3))
    a = _mm512_add_ps(a, _mm512_shuffle_f32x4(a, a, 0xB1)); // + lanes 4..7
    a = _mm512_add_ps(a, _mm512_shuffle_f32x4(a, a, 0x4E)); // + lanes 8..15
    return _mm512_cvtss_f32(a);
}
#elif defined(OG_ISA_AVX2)
static inline float tree8(vf a) {
    a = _mm256_add_ps(a, _mm256_permute_ps(a, 0xB1));
    a = _mm256_add_ps(a, _mm256_permute_ps(a, 0x4E));
    a = _mm256_add_ps(a, _mm256_permute2f128_ps(a, a, 1));
    return _mm256_cvtss_f32(a);
}
#endif

// sums[c] = the chunk sum of x[256 c .. min(n, 256 c + 256)) (16 lanes from -0, then the tree).
// CHUNKS_KERNEL(name, T, LOAD, ELEM) reads x of T (fp32, or 16-bit values widened in registers:
// exact, so the sums are those of the widened values).
#if defined(OG_ISA_SCALAR)
#define CHUNKS_GROUP(T, LOAD)                                                                      \
    for (int g = 0; g < G; g++) {                                                                  \
        float l[OG_RED_LANES];                                                                     \
        for (int j = 0; j < OG_RED_LANES; j++) l[j] = -0.0f;                                       \
        for (size_t i = 0; i < OG_RED_CHUNK; i++)                                                  \
            l[i % OG_RED_LANES] += LOAD(base + g * OG_RED_CHUNK + i);                              \
        float s0 = l[0] + l[1], s1 = l[2] + l[3], s2 = l[4] + l[5], s3 = l[6] + l[7];              \
        float s4 = l[8] + l[9], s5 = l[10] + l[11], s6 = l[12] + l[13], s7 = l[14] + l[15];        \
        sums[c + g] = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));                           \
    }
#else
#if defined(OG_ISA_AVX512)
#define CHUNK_TREE(a) tree16((a)[0])
#else
#define CHUNK_TREE(a) (tree8((a)[0]) + tree8((a)[1]))
#endif
// The same place in the next group of G chunks (the next row, at a group's end) is prefetched:
// bf16 sums of rows at 2^24 elements ran 1.2x faster (one thread), fp32 ones no slower. The
// address may lie past x (computed as an integer: a prefetch never faults).
#define PF_HOOK                                                                                    \
    for (int g = 0; g < G; g++)                                                                    \
        __builtin_prefetch((const void *)((uintptr_t)(base + g * OG_RED_CHUNK + i) +               \
                                          G * OG_RED_CHUNK * sizeof *base),                        \
                           0, 3);
#define CHUNKS_GROUP(T, LOAD)                                                                      \
    vf a[G][OG_RED_LANES / VLEN];                                                                  \
    for (int g = 0; g < G; g++)                                                                    \
        for (int j = 0; j < OG_RED_LANES / VLEN; j++) a[g][j] = vset(-0.0f);                       \
    for (size_t i = 0; i < OG_RED_CHUNK; i += OG_RED_LANES) {                                      \
        PF_HOOK                                                                                    \
        for (int g = 0; g < G; g++)                                                                \
            for (int j = 0; j < OG_RED_LANES / VLEN; j++)                                          \
                a[g][j] = vadd(a[g][j], LOAD(base + g * OG_RED_CHUNK + i + j * VLEN));             \
    }                                                                                              \
    for (int g = 0; g < G; g++) sums[c + g] = CHUNK_TREE(a[g]);
#endif
#define CHUNKS_KERNEL(name, T, LOAD, ELEM)                                                         \
    void OG_FN(name)(const T *x, size_t n, float *sums) {                                          \
        size_t nchunks = (n + OG_RED_CHUNK - 1) / OG_RED_CHUNK, c = 0;                             \
        enum { G = 4 }; /* chunks summed side by side (independent dependency chains) */           \
        for (; c + G <= nchunks && (c + G) * OG_RED_CHUNK <= n; c += G) {                          \
            const T *base = x + c * OG_RED_CHUNK;                                                  \
            CHUNKS_GROUP(T, LOAD)                                                                  \
        }                                                                                          \
        for (; c < nchunks; c++) { /* the rest one by one (the last may be partial) */             \
            size_t lo = c * OG_RED_CHUNK, len = n - lo < OG_RED_CHUNK ? n - lo : OG_RED_CHUNK;     \
            float v[OG_RED_CHUNK], acc[OG_RED_LANES];                                              \
            const float *vx = v;                                                                   \
            if (sizeof(T) == sizeof(float))                                                        \
                vx = (const float *)(const void *)(x + lo);                                        \
            else                                                                                   \
                for (size_t i = 0; i < len; i++) v[i] = ELEM(x + lo + i);                          \
            for (int j = 0; j < OG_RED_LANES; j++) acc[j] = -0.0f;                                 \
            OG_FN(og_red_lanes)(vx, len, acc);                                                     \
            float s0 = acc[0] + acc[1], s1 = acc[2] + acc[3], s2 = acc[4] + acc[5],                \
                  s3 = acc[6] + acc[7];                                                            \
            float s4 = acc[8] + acc[9], s5 = acc[10] + acc[11], s6 = acc[12] + acc[13],            \
                  s7 = acc[14] + acc[15];                                                          \
            sums[c] = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));                           \
        }                                                                                          \
    }
CHUNKS_KERNEL(og_red_chunks, float, load_f32, elem_f32)
CHUNKS_KERNEL(og_red_chunks_bf16, uint16_t, load_bf16, elem_bf16)
CHUNKS_KERNEL(og_red_chunks_f16, uint16_t, load_f16, elem_f16)

void OG_FN(og_red_add)(const float *a, const float *b, float *dst, size_t w) {
    size_t j = 0;
    for (; j + VLEN <= w; j += VLEN) vstore(dst + j, vadd(vload(a + j), vload(b + j)));
    for (; j < w; j++) dst[j] = a[j] + b[j];
}
