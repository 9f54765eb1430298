/* GLU elementwise kernels (glu_kernel.h), compiled once per ISA. Each operand range is processed
 * in chunks of CHUNK values: the activation kernel of the same ISA build (og_silu_*, og_gelu_*)
 * runs on the chunk into a stack buffer, and plain products finish it. Products of two floats are
 * exact IEEE operations on every ISA (no contraction: C11 without extensions), so the builds agree
 * bit for bit as the activation kernels do.
 *
 * The 16-bit kernels (every operand bf16 or fp16 and linear: the engine's fused path) widen each
 * chunk of their inputs into fp32 stack buffers, run the same chunk code and round each result
 * once: the same bits as the fp32 kernel between the engine's CopyIn and CopyOut. */
#include <stdint.h>
#include <string.h>

#include "engine/convert.h"
#include "engine/simd/map64.h"
#include "engine/simd/vec.h"
#include "ops/activation/gelu/gelu_kernel.h"
#include "ops/activation/silu/silu_kernel.h"
#include "ops/glu/glu_kernel.h"

#define CHUNK 256

// The activation kernels take arrays of operand pointers.
static inline void act1(og_ew_compute_fn f, size_t n, const float *x, float *y) {
    const float *in[1] = {x};
    float *out[1] = {y};
    f(n, in, out, NULL);
}
static inline void act2(og_ew_compute_fn f, size_t n, const float *g, const float *x, float *y) {
    const float *in[2] = {g, x};
    float *out[1] = {y};
    f(n, in, out, NULL);
}

static og_ew_compute_fn gelu_fwd_fn(const og_glu_params *p) {
    return p->approximate ? OG_FN(og_gelu_tanh_fwd) : OG_FN(og_gelu_erf_fwd);
}
static og_ew_compute_fn gelu_bwd_fn(const og_glu_params *p) {
    return p->approximate ? OG_FN(og_gelu_tanh_bwd) : OG_FN(og_gelu_erf_bwd);
}

// ---- one chunk of m <= CHUNK values, fp32. Every chunk reads all its inputs before it writes,
// so an output may be an input (SwiGluGrad / GeGluBackward in place: dx is x).

// t = silu(a) b
static inline void swiglu_fwd_chunk(size_t m, const float *a, const float *b, float *t) {
    float s[CHUNK];
    act1(OG_FN(og_silu_fwd), m, a, s);
    for (size_t j = 0; j < m; j++) t[j] = s[j] * b[j];
}

// da = dy b silu'(a), db = dy silu(a)
static inline void swiglu_bwd_chunk(size_t m, const float *a, const float *b, const float *dy,
                                    float *da, float *db) {
    float s[CHUNK], g[CHUNK];
    act1(OG_FN(og_silu_fwd), m, a, s);
    for (size_t j = 0; j < m; j++) g[j] = dy[j] * b[j];
    act2(OG_FN(og_silu_bwd), m, g, a, g);
    for (size_t j = 0; j < m; j++) s[j] *= dy[j];
    memcpy(da, g, m * sizeof *g);
    memcpy(db, s, m * sizeof *s);
}

// g = gelu(G), t = L g
static inline void geglu_fwd_chunk(og_ew_compute_fn gelu, size_t m, const float *lin,
                                   const float *gat, float *t, float *g) {
    float u[CHUNK];
    act1(gelu, m, gat, u);
    for (size_t j = 0; j < m; j++) t[j] = lin[j] * u[j];
    memcpy(g, u, m * sizeof *u);
}

// dL = dy gelu (the forward's), dG = dy L gelu'(G)
static inline void geglu_bwd_chunk(og_ew_compute_fn dgelu, size_t m, const float *lin,
                                   const float *gat, const float *dy, const float *gel, float *dlin,
                                   float *dgat) {
    float u[CHUNK], v[CHUNK];
    for (size_t j = 0; j < m; j++) u[j] = dy[j] * lin[j];
    act2(dgelu, m, u, gat, u);
    for (size_t j = 0; j < m; j++) v[j] = dy[j] * gel[j];
    memcpy(dlin, v, m * sizeof *v);
    memcpy(dgat, u, m * sizeof *u);
}

// ---- fp32 (og_ew_compute_fn): n aligned values of each operand

void OG_FN(og_swiglu_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    for (size_t c = 0; c < n; c += CHUNK) {
        size_t m = n - c < CHUNK ? n - c : CHUNK;
        swiglu_fwd_chunk(m, in[0] + c, in[1] + c, out[0] + c);
    }
}

void OG_FN(og_swiglu_bwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    for (size_t c = 0; c < n; c += CHUNK) {
        size_t m = n - c < CHUNK ? n - c : CHUNK;
        swiglu_bwd_chunk(m, in[0] + c, in[1] + c, in[2] + c, out[0] + c, out[1] + c);
    }
}

void OG_FN(og_geglu_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    og_ew_compute_fn f = gelu_fwd_fn(params);
    for (size_t c = 0; c < n; c += CHUNK) {
        size_t m = n - c < CHUNK ? n - c : CHUNK;
        geglu_fwd_chunk(f, m, in[0] + c, in[1] + c, out[0] + c, out[1] + c);
    }
}

void OG_FN(og_geglu_bwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    og_ew_compute_fn f = gelu_bwd_fn(params);
    for (size_t c = 0; c < n; c += CHUNK) {
        size_t m = n - c < CHUNK ? n - c : CHUNK;
        geglu_bwd_chunk(f, m, in[0] + c, in[1] + c, in[2] + c, in[3] + c, out[0] + c, out[1] + c);
    }
}

// ---- 16-bit (og_ew_compute16_fn): widen a chunk of each input, the fp32 chunk code, round each
// result once. WIDEN / NARROW name the converters of the dtype (engine/convert.h, this ISA's
// build).

#define GLU_KERNELS16(sfx, WIDEN, NARROW)                                                          \
    void OG_FN(og_swiglu_fwd_##sfx)(size_t n, const uint16_t *const *in, uint16_t *const *out,     \
                                    const void *params, bool stream) {                             \
        (void)params;                                                                              \
        float a[CHUNK], b[CHUNK], t[CHUNK];                                                        \
        for (size_t c = 0; c < n; c += CHUNK) {                                                    \
            size_t m = n - c < CHUNK ? n - c : CHUNK;                                              \
            WIDEN(in[0] + c, a, m);                                                                \
            WIDEN(in[1] + c, b, m);                                                                \
            swiglu_fwd_chunk(m, a, b, t);                                                          \
            NARROW(t, out[0] + c, m, stream);                                                      \
        }                                                                                          \
    }                                                                                              \
    void OG_FN(og_swiglu_bwd_##sfx)(size_t n, const uint16_t *const *in, uint16_t *const *out,     \
                                    const void *params, bool stream) {                             \
        (void)params;                                                                              \
        float a[CHUNK], b[CHUNK], dy[CHUNK], da[CHUNK], db[CHUNK];                                 \
        for (size_t c = 0; c < n; c += CHUNK) {                                                    \
            size_t m = n - c < CHUNK ? n - c : CHUNK;                                              \
            WIDEN(in[0] + c, a, m);                                                                \
            WIDEN(in[1] + c, b, m);                                                                \
            WIDEN(in[2] + c, dy, m);                                                               \
            swiglu_bwd_chunk(m, a, b, dy, da, db);                                                 \
            NARROW(da, out[0] + c, m, stream);                                                     \
            NARROW(db, out[1] + c, m, stream);                                                     \
        }                                                                                          \
    }                                                                                              \
    void OG_FN(og_geglu_fwd_##sfx)(size_t n, const uint16_t *const *in, uint16_t *const *out,      \
                                   const void *params, bool stream) {                              \
        og_ew_compute_fn f = gelu_fwd_fn(params);                                                  \
        float l[CHUNK], g[CHUNK], t[CHUNK], u[CHUNK];                                              \
        for (size_t c = 0; c < n; c += CHUNK) {                                                    \
            size_t m = n - c < CHUNK ? n - c : CHUNK;                                              \
            WIDEN(in[0] + c, l, m);                                                                \
            WIDEN(in[1] + c, g, m);                                                                \
            geglu_fwd_chunk(f, m, l, g, t, u);                                                     \
            NARROW(t, out[0] + c, m, stream);                                                      \
            NARROW(u, out[1] + c, m, stream);                                                      \
        }                                                                                          \
    }                                                                                              \
    void OG_FN(og_geglu_bwd_##sfx)(size_t n, const uint16_t *const *in, uint16_t *const *out,      \
                                   const void *params, bool stream) {                              \
        og_ew_compute_fn f = gelu_bwd_fn(params);                                                  \
        float l[CHUNK], g[CHUNK], dy[CHUNK], ge[CHUNK], dl[CHUNK], dg[CHUNK];                      \
        for (size_t c = 0; c < n; c += CHUNK) {                                                    \
            size_t m = n - c < CHUNK ? n - c : CHUNK;                                              \
            WIDEN(in[0] + c, l, m);                                                                \
            WIDEN(in[1] + c, g, m);                                                                \
            WIDEN(in[2] + c, dy, m);                                                               \
            WIDEN(in[3] + c, ge, m);                                                               \
            geglu_bwd_chunk(f, m, l, g, dy, ge, dl, dg);                                           \
            NARROW(dl, out[0] + c, m, stream);                                                     \
            NARROW(dg, out[1] + c, m, stream);                                                     \
        }                                                                                          \
    }

GLU_KERNELS16(bf16, OG_FN(og_cvt_bf16_to_f32), OG_FN(og_cvt_f32_to_bf16))
GLU_KERNELS16(f16, OG_FN(og_cvt_f16_to_f32), OG_FN(og_cvt_f32_to_f16))

// ---- float64: per element, every input read before an output is written (dA may be A)
OG_EW_KERNEL64(og_swiglu_fwd, void, { Y64(0) = og_silu64(X64(0)) * X64(1); })
OG_EW_KERNEL64(og_swiglu_bwd, void, {
    double a = X64(0), b = X64(1), dy = X64(2);
    Y64(0) = isnan(a) ? a : dy * b * og_silu_grad64(a);
    Y64(1) = dy * og_silu64(a);
})
OG_EW_KERNEL64(og_geglu_fwd, og_glu_params, {
    double lin = X64(0), gat = X64(1);
    double g = prm->approximate ? og_gelu_tanh64(gat) : og_gelu_erf64(gat);
    Y64(0) = lin * g;
    Y64(1) = g;
})
OG_EW_KERNEL64(og_geglu_bwd, og_glu_params, {
    double lin = X64(0), gat = X64(1), dy = X64(2), gel = X64(3);
    double d = prm->approximate ? og_gelu_tanh_grad64(gat) : og_gelu_erf_grad64(gat);
    Y64(0) = dy * gel;
    Y64(1) = isnan(gat) ? gat : dy * lin * d;
})
