/* Hardswish forward and backward, written once against vec.h and compiled per ISA.
 *
 * The quadratic middle piece is evaluated in double and rounded to float once, so fp32 results
 * are correctly rounded (to within 2^-50 relative of a midpoint):
 *   forward   x (x + 3) / 6          x + 3 and the products carry ~2^-53 relative error each;
 *   backward  g (2x + 3) / 6         = g (x / 3 + 1/2) without the rounding of 1/3: 2x + 3 is
 *                                    exact in double for every float x in [-3, 3] above 2^-28,
 *                                    so the zero at x = -1.5 is exact and nothing cancels.
 * Outside [-3, 3] the pieces are selected exactly: forward x (x > 3) and -0 (x < -3, the sign
 * PyTorch's x * 0 gives); backward g (x > 3) and +0 (x < -3). At the joins the middle formula
 * applies, as in aclnn and PyTorch: hardswish'(-3) = -0.5 and hardswish'(3) = 1.5.
 * Special values: NaN propagates (it fails both compares and reaches the middle formula);
 * hardswish(+inf) = +inf, hardswish(-inf) = -0 (PyTorch's x * min(max(x + 3, 0), 6) / 6 gives
 * NaN there, and inf for x > FLT_MAX / 6; opgrad gives the mathematical values);
 * hardswish(+-0) = +-0; hardswish'(+-inf) = g / 0. */
#include "engine/simd/vec.h"
#include "ops/activation/hardswish/hardswish_kernel.h"

void OG_FN(og_hardswish_fwd)(size_t n, const float *const *in, float *const *out,
                             const void *params) {
    (void)params;
    vf three = vset(3.0f), mthree = vset(-3.0f), mzero = vset(-0.0f);
    OG_EW_LOOP(n, 1, in, 1, out, {
        vf x = vload(ins[0]);
        vd xd = vwiden(x);
        vf mid = vnarrow(vdmul(vdmul(xd, vdadd(xd, vdset(3.0))), vdset(1.0 / 6.0)));
        vstore(outs[0], vsel(vgt(x, three), x, vsel(vlt(x, mthree), mzero, mid)));
    });
}

void OG_FN(og_hardswish_bwd)(size_t n, const float *const *in, float *const *out,
                             const void *params) {
    (void)params;
    vf three = vset(3.0f), mthree = vset(-3.0f), zero = vset(0.0f);
    OG_EW_LOOP(n, 2, in, 1, out, {
        vf g = vload(ins[0]), x = vload(ins[1]);
        vd slope = vdfma(vwiden(x), vdset(2.0), vdset(3.0)); // 2x + 3
        vf mid = vnarrow(vdmul(vdmul(vwiden(g), slope), vdset(1.0 / 6.0)));
        vstore(outs[0], vsel(vgt(x, three), g, vsel(vlt(x, mthree), zero, mid)));
    });
}
