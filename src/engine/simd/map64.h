/* Float64 elementwise kernels (og_ew_compute64_fn), written once per element in plain C with
 * libm and compiled per ISA with the kernel source that includes this header (engine/simd/vec.h
 * gives OG_FN its suffix): the compiler vectorizes the loops that call no libm function at the
 * build's vector width, and the others run libm's correctly rounded-or-nearly (<= 1 ulp)
 * functions one element at a time. float64 is the precision of gradient checks
 * (torch.autograd.gradcheck), so these kernels aim at the last bits rather than at speed.
 *
 *   OG_EW_KERNEL64(og_name, params_type, body)
 *
 * defines og_name_f64__<isa>(n, in, out, params); the body runs once per element i with
 * X64(k) = in[k][i], Y64(k) = out[k][i] and `prm`, the params as `const params_type *`. An output
 * may alias an input: a body reads its inputs before it writes. */
#ifndef OG_MAP64_H
#define OG_MAP64_H

#include <math.h>
#include <stddef.h>

#define X64(k) in[k][i]
#define Y64(k) out[k][i]

#define OG_EW_KERNEL64(name, ptype, ...)                                                           \
    void OG_FN(name##_f64)(size_t n, const double *const *in, double *const *out,                  \
                           const void *params) {                                                   \
        const ptype *prm = (const ptype *)params;                                                  \
        (void)prm;                                                                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

/// 1 / (1 + e^-x) without overflow, for any x (NaN stays NaN).
static inline double og_sigmoid64(double x) {
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

/// Neumaier's compensated sum (a float64 row kernel's sums): the error stays about one rounding
/// whatever the length, as long as the sum is finite.
typedef struct og_ksum {
    double s, c;
} og_ksum;
static inline void og_ksum_add(og_ksum *k, double v) {
    double t = k->s + v;
    k->c += fabs(k->s) >= fabs(v) ? (k->s - t) + v : (v - t) + k->s;
    k->s = t;
}
static inline double og_ksum_value(const og_ksum *k) { return isfinite(k->s) ? k->s + k->c : k->s; }

// ---- the activations the activation kernels and the GLUs share, in double. Limits at +-inf as
// the float kernels (silu(-inf) = gelu(-inf) = -0, the derivatives 1 / 0); NaN propagates.

/// silu(x) = x sigmoid(x).
static inline double og_silu64(double x) {
    return isinf(x) ? (x > 0 ? x : -0.0) : x * og_sigmoid64(x);
}

/// silu'(x) = s + x s (1 - s), s = sigmoid(x), with 1 - s = sigmoid(-x) (no cancellation).
static inline double og_silu_grad64(double x) {
    if (isinf(x)) return x > 0 ? 1.0 : 0.0;
    double s = og_sigmoid64(x);
    return s + x * s * og_sigmoid64(-x);
}

#define OG_GELU64_K 0.7978845608028654 // sqrt(2 / pi)
#define OG_GELU64_C 0.044715

/// gelu, tanh form: 1 + tanh(u) = 2 sigmoid(2u), so y = x sigmoid(2u), u = K (x + C x^3).
static inline double og_gelu_tanh64(double x) {
    double u2 = 2 * OG_GELU64_K * (x + OG_GELU64_C * x * x * x);
    return isinf(x) ? (x > 0 ? x : -0.0) : x * og_sigmoid64(u2);
}

/// Its derivative s + 2 x u' s (1 - s), s = sigmoid(2u), 1 - s = sigmoid(-2u); s (1 - s)
/// underflows to 0 long before x u' overflows (the term is then 0, not inf * 0).
static inline double og_gelu_tanh_grad64(double x) {
    if (isinf(x)) return x > 0 ? 1.0 : 0.0;
    double u2 = 2 * OG_GELU64_K * (x + OG_GELU64_C * x * x * x);
    double s = og_sigmoid64(u2), sc = s * og_sigmoid64(-u2);
    double du = OG_GELU64_K * (1 + 3 * OG_GELU64_C * x * x);
    return s + (sc == 0 ? 0.0 : 2 * x * du * sc);
}

/// gelu, erf form: x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2.
static inline double og_gelu_erf64(double x) {
    return isinf(x) ? (x > 0 ? x : -0.0) : 0.5 * x * erfc(-x * 0.7071067811865476);
}

/// Phi(x) + x phi(x) (phi = 0 beyond |x| ~ 38.6: the term is then 0).
static inline double og_gelu_erf_grad64(double x) {
    if (isinf(x)) return x > 0 ? 1.0 : 0.0;
    double pdf = 0.3989422804014327 * exp(-0.5 * x * x);
    return 0.5 * erfc(-x * 0.7071067811865476) + (pdf == 0 ? 0.0 : x * pdf);
}

#endif
