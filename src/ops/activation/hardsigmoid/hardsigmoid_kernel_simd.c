/* Hardsigmoid forward and backward, written once against vec.h and compiled per ISA.
 *
 * Both results are correctly rounded: each is one double expression rounded to float once.
 *   forward   (x + 3) / 6 for -3 < x < 3: x + 3 is exact in double for every float x here above
 *             2^-29 in magnitude (below, 0.5 + x / 6 rounds to 0.5 anyway), times 1/6 (to 2^-56):
 *             within ~2^-52 relative before the one rounding. The float forms lose to the
 *             cancellation near x = -3: fma(x, 1/6f, 0.5f) is 37 % off at x = -3 + 2^-22
 *             (1/6f's own error times 3 is 1.5e-8), PyTorch's (x + 3) / 6 in float up to 1.5 ulp.
 *   backward  g / 6 for -3 < x < 3, correctly rounded (g (1/6f) in float, as aclnn and PyTorch
 *             compute it, is off by one ulp for some g): one float division on AVX2 and scalar,
 *             a double product rounded once on AVX-512. Both give the correctly rounded
 *             quotient, the same bits for every float g (checked over all 2^32 of them): g / 6
 *             is never a midpoint between floats, nor within 2^-52 of one. On Zen 3 the division
 *             runs the backward at 0.40 cycles per element against the double form's 0.75
 *             (AVX2, in L1). AVX-512 keeps the double form, not measured against the division
 *             there (a 16-lane vdivps issues about once per 10 cycles on Intel's cores).
 * Outside (-3, 3) the pieces are selected exactly: forward 1 (x >= 3) and +0 (x <= -3); the
 * joins agree (the middle formula gives 0 and 1 there). The backward is 0 at the joins and
 * outside, as aclnn's mask (0 < x / 6 + 1/2 < 1) and PyTorch's (-3 < x < 3) are, whatever g is.
 * Special values: a NaN x propagates in the forward (it fails both compares and reaches the
 * middle formula) and gives 0 in the backward (it fails the mask), as PyTorch's does;
 * hardsigmoid(+-inf) = 1, 0. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/activation/hardsigmoid/hardsigmoid_kernel.h"

OG_EW_KERNEL3(og_hardsigmoid_fwd, og_no_consts, og_no_setup, 1, 1, {
    vf x = vload(ins[0]);
    vf mid = vnarrow(vdmul(vdadd(vwiden(x), vdset(3.0)), vdset(1.0 / 6.0)));
    vf y = vsel(vlt(x, vset(3.0f)), vsel(vgt(x, vset(-3.0f)), mid, vset(0.0f)), vset(1.0f));
    vstore(outs[0], vsel(visnan(x), x, y));
})

OG_EW_KERNEL3(og_hardsigmoid_bwd, og_no_consts, og_no_setup, 2, 1, {
    vf g = vload(ins[0]), x = vload(ins[1]);
#if defined(OG_ISA_AVX512)
    vf mid = vnarrow(vdmul(vwiden(g), vdset(1.0 / 6.0)));
#else
    vf mid = vdiv(g, vset(6.0f));
#endif
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
