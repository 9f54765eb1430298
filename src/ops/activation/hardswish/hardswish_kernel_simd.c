/* Hardswish forward and backward, written once against vec.h and compiled per ISA.
 *
 * The quadratic middle piece is correctly rounded in fp32 (to within ~2^-46 relative of a
 * midpoint):
 *   forward   x (x + 3) / 6 = x k, k = (x + 3) / 6 as a float pair: x + 3 = sh + sl exactly
 *             (Fast2Sum, |x| <= 3), times 1/6 = ch + cl (float pair, 2^-50), kh = RN(sh ch),
 *             kl = the rest (the exact error of sh ch by fma, sh cl, sl ch), then
 *             y = fma(x, kh, x kl): one rounding of x k to ~2^-46. k is exactly 0 at x = -3,
 *             and kl = +0 at x = +-0, so -0 stays -0. All in float (no widening to double).
 *   backward  g (2x + 3) / 6 = g k, k = (x + 1.5) / 3 as a float pair the same way (x + 1.5 =
 *             sh + sl exactly by Fast2Sum for every float x in [-3, 3], checked exhaustively;
 *             1/3 = th + tl), then dx = fma(g, kh, g kl). k is exactly 0 at x = -1.5, so the
 *             zero there is exact and nothing cancels near it. A g that is zero, below 2^-100,
 *             infinite or NaN takes the double form in its lane, (g (2x + 3)) (1/6) rounded to
 *             float once (the pair would give inf * 0 = NaN for an infinite g where kl = 0, +0
 *             for g = +0 where kh and kl differ in sign, and lose g kl below 2^-149). Against
 *             MPFR: correctly rounded at 4e6 points (test_mpfr_piecewise keeps 2e5) except
 *             where |dx| < 2^-100 (within one ulp there: g kl underflows). The double form alone
 *             ran at 1.11 cycles per element, the pair at 0.67 (Zen 3, AVX2, in L1).
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
    vf c15 = vset(1.5f), th = vset(0x1.555556p-2f), tl = vset(-0x1.555556p-27f); // 1/3 = th + tl
    vf g = vload(ins[0]), x = vload(ins[1]);
    vf sh = vadd(x, c15);
    vf sl = vsub(x, vsub(sh, c15)); // x + 1.5 = sh + sl
    vf kh = vmul(sh, th);
    vf kl = vadd(vfmsub(sh, th, kh), vfma(sh, tl, vmul(sl, th)));
    vf mid = vfma(g, kh, vmul(g, kl));
    vf ag = vabs(g);
    vm rare = vmor(vlt(ag, vset(0x1p-100f)), vgtu(ag, vset(0x1.fffffep127f)));
    if (vany(rare)) { // a zero, tiny, infinite or NaN g: g (2x + 3) / 6 in double
        vd slope = vdfma(vwiden(x), vdset(2.0), vdset(3.0));
        mid = vsel(rare, vnarrow(vdmul(vdmul(vwiden(g), slope), vdset(1.0 / 6.0))), mid);
    }
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
