/* SiLU forward and backward, written once against vec.h and compiled per ISA.
 *
 * Everything derives from e = exp(-|x|) = p 2^n (og_vexp_split), which never overflows; the
 * power of two is applied once, at the end (og_vmul_pow2), so results stay accurate where e^x
 * is subnormal but the result is not (x e^x is a normal float down to x = -91.8, and times a
 * large gradOutput much further).
 *   forward:   x > 0:  x / (1 + e)                 x <= 0:  (x / (1 + e)) e
 *   backward:  silu' = sigmoid (1 + x (1 - sigmoid))
 *              x > 0:  ((1 + e) + x e) / (1 + e)^2   (no cancellation)
 *              x <= 0: e ((1 + e) + x) / (1 + e)^2   (cancels at the root of silu', x = -1.2785)
 *              numerator and (1 + e)^2 in double (exact but for one double rounding), the
 *              quotient q through og_vrecip_double (2^-47), and g q p 2^n in double, rounded
 *              to float once (og_vmul3d_pow2).
 * One exp and one float division each. x is clamped where it multiplies e (160 forward, 200 backward:
 * beyond, every float result is 0), so -inf gives -0 (forward) and 0 (backward), +inf gives
 * +inf and gradOutput; NaN propagates. */
#include "engine/simd/vmath.h"
#include "ops/activation/silu/silu_kernel.h"

#define FWD_LIMIT 160.0f
#define BWD_LIMIT 200.0f

static inline vf silu_forward(vf x) {
    vm pos = vgt(x, vset(0.0f));
    og_vexp s = og_vexp_split(vmax(vsub(vset(0.0f), vabs(x)), vset(-FWD_LIMIT)));
    vf e = og_vexp_value(s);
    vf q = vdiv(vmax(x, vset(-FWD_LIMIT)), vadd(vset(1.0f), e));
    vf y = og_vmul_pow2(q, vsel(pos, vset(1.0f), s.p), vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, y);
}

static inline vf silu_backward(vf g, vf x) {
    vm pos = vgt(x, vset(0.0f));
    vf xc = vmax(vmin(x, vset(BWD_LIMIT)), vset(-BWD_LIMIT));
    og_vexp s = og_vexp_split(vmax(vsub(vset(0.0f), vabs(x)), vset(-BWD_LIMIT)));
    vd ed = vwiden(og_vexp_value(s)), xd = vwiden(xc);
    vd ope = vdadd(vdset(1.0), ed); // exact
    vd num = vdsel(pos, vdfma(xd, ed, ope), vdadd(ope, xd));
    vd q = vdmul(num, og_vrecip_double(vdmul(ope, ope)));
    vf dx = og_vmul3d_pow2(q, g, vsel(pos, vset(1.0f), s.p), vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, dx);
}

void OG_FN(og_silu_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 1, in, 1, out, { vstore(outs[0], silu_forward(vload(ins[0]))); });
}

void OG_FN(og_silu_bwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 2, in, 1, out, { vstore(outs[0], silu_backward(vload(ins[0]), vload(ins[1]))); });
}
