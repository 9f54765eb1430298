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

#endif
