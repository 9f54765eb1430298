/* GLU row kernels (glu_kernel.h), compiled once per ISA. Each row is processed in chunks of
 * CHUNK values: the activation kernel of the same ISA build (og_silu_*, og_gelu_*) runs on the
 * chunk into a stack buffer, and plain products finish it. Products of two floats are exact
 * IEEE operations on every ISA (no contraction: C11 without extensions), so the builds agree
 * bit for bit as the activation kernels do. */
#include <string.h>

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

void OG_FN(og_swiglu_fwd)(size_t n, const float *const *in, float *const *out, const void *params,
                          float *stats) {
    (void)params, (void)stats;
    size_t h = n / 2;
    const float *a = in[0], *b = in[0] + h;
    float *t = out[0], s[CHUNK];
    for (size_t c = 0; c < h; c += CHUNK) {
        size_t m = h - c < CHUNK ? h - c : CHUNK;
        act1(OG_FN(og_silu_fwd), m, a + c, s);
        for (size_t j = 0; j < m; j++) t[c + j] = s[j] * b[c + j];
    }
}

void OG_FN(og_swiglu_bwd)(size_t n, const float *const *in, float *const *out, const void *params,
                          float *stats) {
    (void)params, (void)stats;
    size_t h = n / 2;
    const float *a = in[0], *b = in[0] + h, *dy = in[1];
    float *da = out[0], *db = out[0] + h;
    float s[CHUNK], g[CHUNK];
    for (size_t c = 0; c < h; c += CHUNK) {
        size_t m = h - c < CHUNK ? h - c : CHUNK;
        act1(OG_FN(og_silu_fwd), m, a + c, s);                      // silu(A)
        for (size_t j = 0; j < m; j++) g[j] = dy[c + j] * b[c + j]; // dy B
        act2(OG_FN(og_silu_bwd), m, g, a + c, g);                   // dy B silu'(A)
        for (size_t j = 0; j < m; j++) s[j] *= dy[c + j];           // dy silu(A)
        // every input of the chunk has been read: dx may be x (in place)
        memcpy(da + c, g, m * sizeof *g);
        memcpy(db + c, s, m * sizeof *s);
    }
}

static og_ew_compute_fn gelu_fwd_fn(const og_glu_params *p) {
    return p->approximate ? OG_FN(og_gelu_tanh_fwd) : OG_FN(og_gelu_erf_fwd);
}
static og_ew_compute_fn gelu_bwd_fn(const og_glu_params *p) {
    return p->approximate ? OG_FN(og_gelu_tanh_bwd) : OG_FN(og_gelu_erf_bwd);
}

void OG_FN(og_geglu_fwd)(size_t n, const float *const *in, float *const *out, const void *params,
                         float *stats) {
    (void)stats;
    const og_glu_params *p = params;
    size_t h = n / 2;
    const float *lin = p->activate_left ? in[0] + h : in[0];
    const float *gat = p->activate_left ? in[0] : in[0] + h;
    og_ew_compute_fn f = gelu_fwd_fn(p);
    float *t = out[0], *g = out[1];
    for (size_t c = 0; c < h; c += CHUNK) {
        size_t m = h - c < CHUNK ? h - c : CHUNK;
        act1(f, m, gat + c, g + c);
        for (size_t j = 0; j < m; j++) t[c + j] = lin[c + j] * g[c + j];
    }
}

void OG_FN(og_geglu_bwd)(size_t n, const float *const *in, float *const *out, const void *params,
                         float *stats) {
    (void)stats;
    const og_glu_params *p = params;
    size_t h = n / 2;
    const float *lin = p->activate_left ? in[0] + h : in[0];
    const float *gat = p->activate_left ? in[0] : in[0] + h;
    const float *dy = in[1], *gel = in[2];
    float *dlin = p->activate_left ? out[0] + h : out[0];
    float *dgat = p->activate_left ? out[0] : out[0] + h;
    og_ew_compute_fn f = gelu_bwd_fn(p);
    float u[CHUNK], v[CHUNK];
    for (size_t c = 0; c < h; c += CHUNK) {
        size_t m = h - c < CHUNK ? h - c : CHUNK;
        for (size_t j = 0; j < m; j++) u[j] = dy[c + j] * lin[c + j]; // dy L
        act2(f, m, u, gat + c, u);                                    // dy L gelu'(G)
        for (size_t j = 0; j < m; j++) v[j] = dy[c + j] * gel[c + j]; // dy gelu(G)
        memcpy(dlin + c, v, m * sizeof *v);
        memcpy(dgat + c, u, m * sizeof *u);
    }
}
