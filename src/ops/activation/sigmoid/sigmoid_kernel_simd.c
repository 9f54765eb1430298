/* Sigmoid forward and backward, written once against vec.h and compiled per ISA.
 *
 * Forward: with e = exp(-|x|) in (0, 1], which never overflows,
 *   sigmoid(x) = 1 / (1 + e)  (x > 0),   e / (1 + e)  (x <= 0)
 * one exp and one division. Where e^x is subnormal (x < -87.3) e is rounded once and 1 + e = 1,
 * so the result is e itself; x = -inf gives +0, +inf gives 1, NaN propagates.
 * Backward, from the forward's output y: dx = g * y (1 - y) with y (1 - y) = fma(-y, y, y), one
 * rounding of the exact y - y^2, then one rounding of the product with g (<= 1 ulp in all).
 * y = +-inf (not a sigmoid output) gives y (1 - y) = -inf, as the formula does; |y| >= 2^64
 * (where y - y^2 overflows in float) is evaluated in double.
 *
 * Fast path (vmath.h): for x >= -87, where e = p 2^n is a normal float, e is formed with one
 * multiply (og_vexp_normal) instead of the two-factor scaling, which gives the same bits; the
 * argument is clamped at -87, which changes nothing for x > 87 (1 + e rounds to 1 either way).
 * Vectors with a lane below -87 or NaN evaluate those lanes with the general form above. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "engine/simd/vmath.h"
#include "ops/activation/sigmoid/sigmoid_kernel.h"

static inline vf sigmoid_general(vf x) {
    og_vexp s = og_vexp_split(vmax(vsub(vset(0.0f), vabs(x)), vset(-200.0f)));
    vf e = og_vexp_value(s);
    vf y = vdiv(vsel(vgt(x, vset(0.0f)), vset(1.0f), e), vadd(vset(1.0f), e));
    return vsel(visnan(x), x, y);
}

static inline vf sigmoid_forward(vf x) {
    vf lo = vset(OG_VEXP_NORMAL_MIN);
    vf e = og_vexp_normal(vmax(vsub(vset(0.0f), vabs(x)), lo)).e;
    vf y = vdiv(vsel(vgt(x, vset(0.0f)), vset(1.0f), e), vadd(vset(1.0f), e));
    vm rare = og_vbelow_or_nan(x, lo);
    if (vany(rare)) y = vsel(rare, sigmoid_general(x), y);
    return y;
}

// Lanes with |y| > 2^63 (no sigmoid output, infinities included): y - y^2 may overflow there.
static inline vf sigmoid_backward_wide(vf g, vf y) {
    vf d = vfma(vsub(vset(0.0f), y), y, y);
    d = vsel(visinf(y), vset(-INFINITY), d);
    vf dx = vmul(g, d);
    // |y| >= 2^64 (no sigmoid output) overflows y - y^2 where g y (1 - y) may be finite: those
    // lanes take the product in double (exact y (1 - y)), the others keep their float result
    vm ext = vmandnot(visinf(y), visinf(d));
    if (vany(ext)) {
        vd yd = vwiden(y);
        vd v = vdmul(vwiden(g), vdmul(yd, vdfma(yd, vdset(-1.0), vdset(1.0))));
        dx = vsel(ext, vnarrow(v), dx);
    }
    return dx;
}

// The common case tests one bound instead of the wide form's infinities (0.63 -> 0.42 cycles
// per element in L1, Zen 3 AVX2, bench/act_cpe; tanh's 0.55 -> 0.31); a vector with a lane past
// it takes the wide form, the same bits.
static inline vf sigmoid_backward(vf g, vf y) {
    if (vany(vgt(vabs(y), vset(0x1p63f)))) return sigmoid_backward_wide(g, y);
    return vmul(g, vfma(vsub(vset(0.0f), y), y, y));
}

OG_EW_KERNEL3(og_sigmoid_fwd, og_no_consts, og_no_setup, 1, 1,
              { vstore(outs[0], sigmoid_forward(vload(ins[0]))); })

OG_EW_KERNEL3(og_sigmoid_bwd, og_no_consts, og_no_setup, 2, 1,
              { vstore(outs[0], sigmoid_backward(vload(ins[0]), vload(ins[1]))); })

// ---- float64
OG_EW_KERNEL64(og_sigmoid_fwd, void, { Y64(0) = og_sigmoid64(X64(0)); })
OG_EW_KERNEL64(og_sigmoid_bwd, void, {
    double g = X64(0), y = X64(1);
    Y64(0) = g * (y * (1 - y));
})
