/* GELU forward and backward (tanh approximation and exact erf form), written once against vec.h
 * and compiled per ISA.
 *
 * Tanh approximation. With z = 2 sqrt(2/pi) x (1 + 0.044715 x^2), 1 + tanh(z/2) = 2 sigmoid(z),
 * so gelu(x) = x sigmoid(z), computed like SiLU from e = exp(-|z|) = p 2^n:
 *   forward:   x > 0: x / (1 + e)                  x <= 0: (x / (1 + e)) e
 *   backward:  gelu' = sigmoid(z) + x z' sigmoid(z) (1 - sigmoid(z)), x z' = k x (1 + 3c x^2)
 *              x > 0: ((1 + e) + x z' e) / (1 + e)^2   x <= 0: e (1 + e + x z') / (1 + e)^2
 * The exponent |z| reaches 87 where the result is still a normal float, and an exponent rounded
 * to float would cost |z| 2^-24 relative (over 100 ulps). So z (and x z') is formed in double
 * from float x and split as z = zh + zl; exp takes both parts (og_vexp_split2). The backward's
 * numerator (its x <= 0 bracket cancels at the root of gelu', x = -0.7518) and (1 + e)^2 are
 * formed in double too, divided through og_vrecip_double, and the product with g p 2^n is
 * rounded to float once (og_vmul3d_pow2).
 *
 * Erf form. With t = |x|, Q(t) = 1 - Phi(t) = e R(t), e = exp(-t^2/2), R the scaled tail
 * (og_vnormal_tail_scaled, one division), and c = 1/sqrt(2 pi):
 *   forward:   x > 0: x (1 - e R)                      x <= 0: x e R
 *   backward:  x > 0: 1 - e (R - t c)                  x <= 0: e (R - t c)
 * t^2 = hh + hl exactly (fma), halved exactly, so e has no argument rounding. R - t c cancels at
 * the root of gelu' (x = -0.7518); that is the only cancellation.
 *
 * In both forms the power of two of e is applied once at the end, so results stay accurate down
 * to the subnormal range and with huge gradOutput: og_vmul_pow2 (float, double only for extreme
 * vectors) in the tanh forward, og_vmul3_pow2 / og_vmul3d_pow2 (the whole product in double,
 * one rounding) in the other three. x is clamped where that
 * changes no float result (|x| <= 20 forward, 15 or 20 backward), so -inf gives -0 (forward)
 * and 0 (backward), +inf gives +inf and gradOutput; NaN propagates. */
#include "engine/simd/vmath.h"
#include "ops/activation/gelu/gelu_kernel.h"

#define K_TANH 1.5957691216057307   // 2 sqrt(2 / pi)
#define C_TANH 0.044715
#define INV_SQRT_2PI 0.3989422804014327

// e^-|z| for z = zh + zl given in double: the split of exp(v + lo), v = -|zh| >= -limit.
static inline og_vexp exp_neg_abs(vd zd, vm pos, float limit) {
    vf zh = vnarrow(zd);
    vf zl = vnarrow(vdfma(vwiden(zh), vdset(-1.0), zd)); // exact difference, rounded
    vf v = vmax(vsub(vset(0.0f), vabs(zh)), vset(-limit));
    return og_vexp_split2(v, vsel(pos, vsub(vset(0.0f), zl), zl));
}

static inline vf gelu_tanh_forward(vf x) {
    vm pos = vgt(x, vset(0.0f));
    vd xd = vwiden(vmax(vmin(x, vset(20.0f)), vset(-20.0f)));
    vd zd = vdmul(vdmul(vdset(K_TANH), xd), vdfma(vdmul(vdset(C_TANH), xd), xd, vdset(1.0)));
    og_vexp s = exp_neg_abs(zd, pos, 160.0f);
    vf e = og_vexp_value(s);
    vf q = vdiv(vmax(x, vset(-20.0f)), vadd(vset(1.0f), e));
    vf y = og_vmul_pow2(q, vsel(pos, vset(1.0f), s.p), vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, y);
}

static inline vf gelu_tanh_backward(vf g, vf x) {
    vm pos = vgt(x, vset(0.0f));
    vd xd = vwiden(vmax(vmin(x, vset(15.0f)), vset(-15.0f)));
    vd x2 = vdmul(xd, xd), kx = vdmul(vdset(K_TANH), xd), one = vdset(1.0);
    vd zd = vdmul(kx, vdfma(vdset(C_TANH), x2, one));
    vd xzp = vdmul(kx, vdfma(vdset(3.0 * C_TANH), x2, one)); // x z'
    og_vexp s = exp_neg_abs(zd, pos, 200.0f);
    vd ed = vwiden(og_vexp_value(s));
    vd ope = vdadd(one, ed); // exact
    vd num = vdsel(pos, vdfma(xzp, ed, ope), vdadd(ope, xzp));
    vd q = vdmul(num, og_vrecip_double(vdmul(ope, ope)));
    vf dx = og_vmul3d_pow2(q, g, vsel(pos, vset(1.0f), s.p), vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, dx);
}

// e = exp(-t^2/2) as a split, t = min(|x|, 20).
static inline og_vexp exp_half_square(vf t) {
    vf hh = vmul(t, t), hl = vfma(t, t, vsub(vset(0.0f), hh));
    return og_vexp_split2(vmul(hh, vset(-0.5f)), vmul(hl, vset(-0.5f)));
}

static inline vf gelu_erf_forward(vf x) {
    vm pos = vgt(x, vset(0.0f));
    vf t = vmin(vabs(x), vset(20.0f));
    og_vexp s = exp_half_square(t);
    vf e = og_vexp_value(s);
    vf r = og_vnormal_tail_scaled(t);
    vf yp = vmul(x, vfma(vsub(vset(0.0f), e), r, vset(1.0f)));
    vf yn = og_vmul3_pow2(vmax(x, vset(-20.0f)), r, s.p, vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, vsel(pos, yp, yn));
}

static inline vf gelu_erf_backward(vf g, vf x) {
    vm pos = vgt(x, vset(0.0f));
    vf t = vmin(vabs(x), vset(20.0f));
    og_vexp s = exp_half_square(t);
    vf e = og_vexp_value(s);
    vf q = vfma(vsub(vset(0.0f), t), vset((float)INV_SQRT_2PI), og_vnormal_tail_scaled(t));
    vf dp = vmul(g, vfma(vsub(vset(0.0f), e), q, vset(1.0f)));
    vf dn = og_vmul3_pow2(g, q, s.p, vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, vsel(pos, dp, dn));
}

void OG_FN(og_gelu_tanh_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 1, in, 1, out, { vstore(outs[0], gelu_tanh_forward(vload(ins[0]))); });
}

void OG_FN(og_gelu_tanh_bwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 2, in, 1, out, { vstore(outs[0], gelu_tanh_backward(vload(ins[0]), vload(ins[1]))); });
}

void OG_FN(og_gelu_erf_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 1, in, 1, out, { vstore(outs[0], gelu_erf_forward(vload(ins[0]))); });
}

void OG_FN(og_gelu_erf_bwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 2, in, 1, out, { vstore(outs[0], gelu_erf_backward(vload(ins[0]), vload(ins[1]))); });
}
