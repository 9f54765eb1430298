/* Hardsigmoid forward and backward, written once against vec.h and compiled per ISA.
 *
 * Both results are correctly rounded, in float arithmetic:
 *   forward   (x + 3) / 6 for -3 < x < 3 = (sh + sl)(ch + cl): x + 3 = sh + sl exactly
 *             (Fast2Sum, |x| < 3), 1/6 = ch + cl as a float pair (to 2^-50), and
 *             y = fma(sh, ch, fma(sh, cl, sl ch)): the products' small terms are added under
 *             the big one, which is rounded once. The correctly rounded quotient for every one
 *             of the 2^31 floats in (-3, 3) (checked exhaustively against (x + 3) / 6 in double
 *             with its double rounding resolved); the old form, x + 3 and a product in double
 *             rounded to float once, gave the same bits at 0.78 cycles per element against
 *             0.40 (Zen 3, AVX2, in L1). The one-product forms lose to the cancellation near
 *             x = -3: fma(x, 1/6f, 0.5f) is 37 % off at x = -3 + 2^-22 (1/6f's own error times
 *             3 is 1.5e-8), PyTorch's (x + 3) / 6 in float up to 1.5 ulp.
 *   backward  g / 6 for -3 < x < 3, correctly rounded (g (1/6f) in float, as aclnn and PyTorch
 *             compute it, is off by one ulp for some g): one float division. A double product
 *             g (1/6) rounded once gives the same bits for every float g (checked over all 2^32
 *             of them): g / 6 is never a midpoint between floats, nor within 2^-52 of one. The
 *             division is the faster of the two on both machines measured: on Zen 3 (AVX2, in
 *             L1) it runs the backward at 0.40 cycles per element against the double form's
 *             0.75; on Zen 4 (AVX-512) 2^20 elements on one thread take 170-175 us against
 *             205-240 (fp32) and 153-155 against 300-305 (bf16, fused: the widened double
 *             halves spill). (A 16-lane vdivps issues about once per 10 cycles on Intel's
 *             cores; not measured there.)
 * Outside [-3, 3] the pieces are selected exactly: forward 1 (x > 3) and +0 (x < -3); at the
 * joins the middle formula gives exactly 1 and +0. The backward is 0 at the joins and
 * outside, as aclnn's mask (0 < x / 6 + 1/2 < 1) and PyTorch's (-3 < x < 3) are, whatever g is.
 * Special values: a NaN x propagates in the forward (it fails both compares and reaches the
 * middle formula) and gives 0 in the backward (it fails the mask), as PyTorch's does;
 * hardsigmoid(+-inf) = 1, 0. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/activation/hardsigmoid/hardsigmoid_kernel.h"

OG_EW_KERNEL3(og_hardsigmoid_fwd, og_no_consts, og_no_setup, 1, 1, {
    vf three = vset(3.0f);
    vf ch = vset(0x1.555556p-3f), cl = vset(-0x1.555556p-28f); // 1/6 = ch + cl (to 2^-50)
    vf x = vload(ins[0]);
    vf sh = vadd(x, three);
    vf sl = vsub(x, vsub(sh, three)); // x + 3 = sh + sl
    vf mid = vfma(sh, ch, vfma(sh, cl, vmul(sl, ch)));
    // strict compares: the middle formula gives 1 and +0 at the joins, and a NaN x reaches it
    vstore(outs[0], vsel(vgt(x, three), vset(1.0f), vsel(vlt(x, vset(-3.0f)), vset(0.0f), mid)));
})

OG_EW_KERNEL3(og_hardsigmoid_bwd, og_no_consts, og_no_setup, 2, 1, {
    vf g = vload(ins[0]), x = vload(ins[1]);
    vf mid = vdiv(g, vset(6.0f));
    vstore(outs[0],
           vsel(vlt(x, vset(3.0f)), vsel(vgt(x, vset(-3.0f)), mid, vset(0.0f)), vset(0.0f)));
})

// ---- float64 (x = 3 gives 1, x = -3 gives 0; NaN propagates forward, gives 0 backward)
OG_EW_KERNEL64(og_hardsigmoid_fwd, void, {
    double x = X64(0);
    Y64(0) = isnan(x) ? x : x >= 3 ? 1.0 : x <= -3 ? 0.0 : (x + 3) / 6;
})
OG_EW_KERNEL64(og_hardsigmoid_bwd, void, {
    double g = X64(0), x = X64(1);
    Y64(0) = x > -3 && x < 3 ? g / 6 : 0.0;
})
