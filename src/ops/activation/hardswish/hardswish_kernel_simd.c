/* Hardswish forward and backward, written once against vec.h and compiled per ISA.
 *
 * The quadratic middle piece is correctly rounded in fp32 (to within ~2^-46 relative of a
 * midpoint):
 *   forward   x (x + 3) / 6 = x k, k = (x + 3) / 6 as a float pair: x + 3 = sh + sl exactly
 *             (Fast2Sum, |x| <= 3), times 1/6 = ch + cl (float pair, 2^-50), kh = RN(sh ch),
 *             kl = the rest (the exact error of sh ch by fma, sh cl, sl ch), then
 *             y = fma(x, kh, x kl): one rounding of x k to ~2^-46. k is exactly 0 at x = -3,
 *             and kl = +0 at x = +-0, so -0 stays -0. All in float (no widening to double).
 *   backward  g (2x + 3) / 6         = g (x / 3 + 1/2) without the rounding of 1/3: 2x + 3 is
 *                                    exact in double for every float x in [-3, 3] above 2^-28,
 *                                    so the zero at x = -1.5 is exact and nothing cancels
 *                                    (evaluated in double and rounded to float once).
 * Outside [-3, 3] the pieces are selected exactly: forward x (x > 3) and -0 (x < -3, the sign
 * PyTorch's x * 0 gives); backward g (x > 3) and +0 (x < -3). At the joins the middle formula
 * applies, as in aclnn and PyTorch: hardswish'(-3) = -0.5 and hardswish'(3) = 1.5.
 * Special values: NaN propagates (it fails both compares and reaches the middle formula);
 * hardswish(+inf) = +inf, hardswish(-inf) = -0 (PyTorch's x * min(max(x + 3, 0), 6) / 6 gives
 * NaN there, and inf for x > FLT_MAX / 6; opgrad gives the mathematical values);
 * hardswish(+-0) = +-0; hardswish'(+-inf) = g / 0. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/activation/hardswish/hardswish_kernel.h"

OG_EW_KERNEL3(og_hardswish_fwd, og_no_consts, og_no_setup, 1, 1, {
    vf three = vset(3.0f), zero = vset(0.0f);
    vf ch = vset(0x1.555556p-3f), cl = vset(-0x1.555556p-28f); // 1/6 = ch + cl (to 2^-50)
    vf x = vload(ins[0]);
    vf sh = vadd(x, three);
    vf sl = vsub(x, vsub(sh, three)); // x + 3 = sh + sl
    vf kh = vmul(sh, ch);
    vf kl = vadd(vfma(sh, ch, vsub(zero, kh)), vfma(sh, cl, vmul(sl, ch)));
    vf mid = vfma(x, kh, vmul(x, kl));
    vstore(outs[0], vsel(vgt(x, three), x, vsel(vlt(x, vset(-3.0f)), vset(-0.0f), mid)));
})

OG_EW_KERNEL3(og_hardswish_bwd, og_no_consts, og_no_setup, 2, 1, {
    vf g = vload(ins[0]), x = vload(ins[1]);
    vd slope = vdfma(vwiden(x), vdset(2.0), vdset(3.0)); // 2x + 3
    vf mid = vnarrow(vdmul(vdmul(vwiden(g), slope), vdset(1.0 / 6.0)));
    vstore(outs[0], vsel(vgt(x, vset(3.0f)), g, vsel(vlt(x, vset(-3.0f)), vset(0.0f), mid)));
})

// ---- float64 (NaN propagates; x (x + 3) / 6 by one division, rounded twice at most)
OG_EW_KERNEL64(og_hardswish_fwd, void, {
    double x = X64(0);
    Y64(0) = x > 3 ? x : x < -3 ? -0.0 : x * (x + 3) / 6;
})
OG_EW_KERNEL64(og_hardswish_bwd, void, {
    double g = X64(0), x = X64(1);
    Y64(0) = x > 3 ? g : x < -3 ? 0.0 : g * (2 * x + 3) / 6;
})
