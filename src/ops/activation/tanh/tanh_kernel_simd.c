/* Tanh forward and backward, written once against vec.h and compiled per ISA.
 *
 * Forward (og_vtanh, vmath.h): m / (2 - m) with m = 1 - exp(-2|x|), both carried as float pairs
 * (error-free transformations, one division), sign restored: nearly correctly rounded (max 0.504
 * ulp over every float, bitwise the same on every ISA); |x| < 2^-12 gives x (keeps -0 and
 * subnormals), +-inf give +-1, NaN propagates. The backward's accuracy follows y's: 1 - y^2
 * amplifies y's error by 2 y^2 / (1 - y^2).
 * Backward, from the forward's output y: dx = g * (1 - y^2) with 1 - y^2 = fma(-y, y, 1), one
 * rounding of the exact value, then one rounding of the product with g; |y| >= 2^64 (where
 * 1 - y^2 overflows in float; no tanh output) is evaluated in double. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "engine/simd/vmath.h"
#include "ops/activation/tanh/tanh_kernel.h"

// Lanes with |y| > 2^63 (no tanh output, infinities included): 1 - y^2 may overflow there.
static inline vf tanh_backward_wide(vf g, vf y) {
    vf d = vfma(vsub(vset(0.0f), y), y, vset(1.0f));
    vf dx = vmul(g, d);
    // |y| >= 2^64 (no tanh output) overflows 1 - y^2 where g (1 - y^2) may be finite: those lanes
    // take the product in double ((1 - y)(1 + y) exact), the others keep their float result
    vm ext = vmandnot(visinf(y), visinf(d));
    if (vany(ext)) {
        vd yd = vwiden(y), one = vdset(1.0);
        vd v = vdmul(vwiden(g), vdmul(vdfma(yd, vdset(-1.0), one), vdadd(yd, one)));
        dx = vsel(ext, vnarrow(v), dx);
    }
    return dx;
}

// The common case tests one bound instead of the wide form's infinities; a vector with a lane
// past it takes the wide form, the same bits.
static inline vf tanh_backward(vf g, vf y) {
    if (vany(vgt(vabs(y), vset(0x1p63f)))) return tanh_backward_wide(g, y);
    return vmul(g, vfma(vsub(vset(0.0f), y), y, vset(1.0f)));
}

OG_EW_KERNEL3(og_tanh_fwd, og_no_consts, og_no_setup, 1, 1,
              { vstore(outs[0], og_vtanh(vload(ins[0]))); })

OG_EW_KERNEL3(og_tanh_bwd, og_no_consts, og_no_setup, 2, 1,
              { vstore(outs[0], tanh_backward(vload(ins[0]), vload(ins[1]))); })

// ---- float64: 1 - y^2 as (1 - y)(1 + y), exact factors where y is near +-1
OG_EW_KERNEL64(og_tanh_fwd, void, { Y64(0) = tanh(X64(0)); })
OG_EW_KERNEL64(og_tanh_bwd, void, {
    double g = X64(0), y = X64(1);
    Y64(0) = g * ((1 - y) * (1 + y));
})
