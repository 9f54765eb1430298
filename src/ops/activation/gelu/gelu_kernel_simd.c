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
 * and 0 (backward), +inf gives +inf and gradOutput; NaN propagates.
 *
 * The forms above (the *_general functions) serve only lanes with |x| > 9.5 or NaN. The common
 * range |x| <= 9.5, where every exponential is a normal float, takes float-only fast paths (no
 * double, no division), chosen per lane, so the ISA builds stay bitwise identical:
 * - tanh form: u = a + b x^2 (a = 2 sqrt(2/pi), b = a 0.044715) as a float pair (Fast2Sum, fma
 *   products), s = -|x|; the exp reduction r = s uh - n L1 is one fma of an exact product, then
 *   - n L2 + s ul; e = 2^n (1 + tp) with n from a magic-number fma. Quotients by 1 + e = dh + dl
 *   (or (1 + e)^2 as a float pair) use a Newton reciprocal (2^-16) and one residual correction.
 *   The forward instead uses E = e^(-z) signed (up to e^78 at x = -9.5, a normal float):
 *   gelu = x / (1 + E) for either sign, one vdivps (3 issue slots; cheaper than the Newton
 *   reciprocal, the divider is otherwise idle), its residual with 1 + E = dh + dl
 *   (dl = E - (dh - 1), exact below E = 2^24, within 2^-24 relative above) corrected through
 *   a bit-trick reciprocal (1/8 relative is enough for the correction). a's high part ends at
 *   2^-21, so uh = p + A_HI has the exact error (A_HI - uh) + p for every p <= 6.5 (no max/min).
 *   The exp polynomial is og_vexp_poly_m1's in Estrin form (shorter chain, same coefficients).
 *   Backward: N = (1 + e) + s u3 (x <= 0) or (1 + e) + x e u3 (x > 0), u3 = a + 3 b x^2 as a
 *   float pair, so the root of gelu' cancels exactly in one fma; gelu' = q or e q, q = N/(1+e)^2.
 * - erf form: R(t) from a centred polynomial in w = 3/(3+t) (normal_tail_fast, one division),
 *   relative error 1.8 2^-24. Forward, either sign: p = (t (-2^n)) R, y = (max(x, 0) + p) + p tp
 *   (x <= 0: one full rounding); backward s = g e q = (g 2^n) q + (g 2^n q) tp, gelu' g = s
 *   (x <= 0) or g - s (x > 0). */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "engine/simd/vmath.h"
#include "ops/activation/gelu/gelu_kernel.h"

#define K_TANH 1.5957691216057307 // 2 sqrt(2 / pi)
#define C_TANH 0.044715
#define INV_SQRT_2PI 0.3989422804014327

// e^-|z| for z = zh + zl given in double: the split of exp(v + lo), v = -|zh| >= -limit.
static inline og_vexp exp_neg_abs(vd zd, vm pos, float limit) {
    vf zh = vnarrow(zd);
    vf zl = vnarrow(vdfma(vwiden(zh), vdset(-1.0), zd)); // exact difference, rounded
    vf v = vmax(vsub(vset(0.0f), vabs(zh)), vset(-limit));
    return og_vexp_split2(v, vsel(pos, vsub(vset(0.0f), zl), zl));
}

static inline vf gelu_tanh_forward_general(vf x) {
    vm pos = vgt(x, vset(0.0f));
    vd xd = vwiden(vmax(vmin(x, vset(20.0f)), vset(-20.0f)));
    vd zd = vdmul(vdmul(vdset(K_TANH), xd), vdfma(vdmul(vdset(C_TANH), xd), xd, vdset(1.0)));
    og_vexp s = exp_neg_abs(zd, pos, 160.0f);
    vf e = og_vexp_value(s);
    vf q = vdiv(vmax(x, vset(-20.0f)), vadd(vset(1.0f), e));
    vf y = og_vmul_pow2(q, vsel(pos, vset(1.0f), s.p), vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, y);
}

static inline vf gelu_tanh_backward_general(vf g, vf x) {
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

static inline vf gelu_erf_forward_general(vf x) {
    vm pos = vgt(x, vset(0.0f));
    vf t = vmin(vabs(x), vset(20.0f));
    og_vexp s = exp_half_square(t);
    vf e = og_vexp_value(s);
    vf r = og_vnormal_tail_scaled(t);
    vf yp = vmul(x, vfma(vsub(vset(0.0f), e), r, vset(1.0f)));
    vf yn = og_vmul3_pow2(vmax(x, vset(-20.0f)), r, s.p, vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, vsel(pos, yp, yn));
}

static inline vf gelu_erf_backward_general(vf g, vf x) {
    vm pos = vgt(x, vset(0.0f));
    vf t = vmin(vabs(x), vset(20.0f));
    og_vexp s = exp_half_square(t);
    vf e = og_vexp_value(s);
    vf q = vfma(vsub(vset(0.0f), t), vset((float)INV_SQRT_2PI), og_vnormal_tail_scaled(t));
    vf dp = vmul(g, vfma(vsub(vset(0.0f), e), q, vset(1.0f)));
    vf dn = og_vmul3_pow2(g, q, s.p, vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, vsel(pos, dp, dn));
}

// ---------------------------------------------------------------------------------------------
// Fast paths: float arithmetic only (no double, no division), for |x| <= FAST_MAX, where every
// exponential is a normal float. A lane outside that range (or NaN) takes the general form
// above, selected per lane, so a lane's bits never depend on its neighbours or on the ISA.

#define FAST_MAX 9.5f

/// e^r - 1 for |r| <= ln2/2: og_vexp_poly_m1's coefficients in Estrin form (a shorter chain)
static inline vf exp_poly_m1_fast(vf r) {
    vf r2 = vmul(r, r);
    vf a = vfma(vset(1.6666665459e-1f), r, vset(5.0000001201e-1f));
    vf b = vfma(vset(8.3334519073e-3f), r, vset(4.1665795894e-2f));
    vf c = vfma(vset(1.9875691500e-4f), r, vset(1.3981999507e-3f));
    vf q = vfma(vfma(c, r2, b), r2, a);
    return vfma(q, r2, r);
}
#define MAGIC_B                                                                                    \
    12583039.0f // 0x1.8p23 + 127: fma(v, log2e, MAGIC_B) rounds v log2e to n, bits give 2^n

// a = 2 sqrt(2/pi) and b = a 0.044715 as float pairs
#define A_HI 0x1.98845p+0f // a multiple of 2^-21, so that A_HI - (A_HI + p) is exact for p <= 6.5
#define A_LO 0x1.9ea1b2p-23f
#define B_HI 0x1.2444f2p-4f
#define B_LO 0x1.49b16ap-29f

/// -|z| = s u for s = -|x|, u = a + b x^2, with e^(s u) = 2^n (1 + tp) and the pieces of u:
/// u = uh + ul, b x^2 = p + lowp.
typedef struct tanh_parts {
    vf s, uh, ul, p, lowp, zh;
    vf pw, tp, e;
} tanh_parts;

static inline tanh_parts tanh_exp(vf x) {
    tanh_parts o;
    o.s = vnegabs(x);
    vf x2 = vmul(x, x), x2l = vfmsub(x, x, x2); // x^2 = x2 + x2l exactly
    o.p = vmul(vset(B_HI), x2);
    vf pl = vfmsub(vset(B_HI), x2, o.p);                      // bh x2 = p + pl exactly
    o.lowp = vfma(vset(B_HI), x2l, vfma(vset(B_LO), x2, pl)); // b x^2 - p (to 2^-45 relative)
    o.uh = vadd(o.p, vset(A_HI));
    vf err = vadd(vsub(vset(A_HI), o.uh), o.p); // exact (A_HI's last bit is 2^-21, p <= 6.5)
    o.ul = vadd(vadd(o.lowp, vset(A_LO)), err);
    o.zh = vmul(o.s, o.uh);
    // Cody-Waite on s u: r = s uh - n L1 (exact product, one rounding), - n L2, + s ul
    vf wm = vfma(o.zh, vset(1.44269504088896341f), vset(MAGIC_B));
    vf nf = vsub(wm, vset(MAGIC_B));
    vf r = vfma(o.s, o.uh, vmul(nf, vset(-0.693359375f)));
    r = vfma(nf, vset(2.12194440e-4f), r);
    r = vfma(o.s, o.ul, r);
    o.tp = exp_poly_m1_fast(r);
    o.pw = vbits_shl23(wm);
    o.e = vfma(o.pw, o.tp, o.pw);
    return o;
}

/// 1 / d for d in [1, 2] to about 2^-16 (linear seed, relative error 1/17, two Newton steps):
/// callers correct the quotient with its residual.
static inline vf rcp12(vf d) {
    vf r0 = vfma(d, vset(-8.0f / 17.0f), vset(24.0f / 17.0f));
    vf r1 = vfma(r0, vfnmadd(d, r0, vset(1.0f)), r0);
    return vfma(r1, vfnmadd(d, r1, vset(1.0f)), r1);
}

static inline vf gelu_tanh_forward_fast(vf x) {
    // u = a + b x^2 = uh + ul as in tanh_exp, then E = e^(-z) = e^(-x u) = 2^n (1 + tp), signed:
    // E reaches e^78 (a normal float) at x = -9.5, so gelu = x / (1 + E) needs no select.
    vf x2 = vmul(x, x), x2l = vfmsub(x, x, x2);
    vf p = vmul(vset(B_HI), x2);
    vf pl = vfmsub(vset(B_HI), x2, p);
    vf lowp = vfma(vset(B_HI), x2l, vfma(vset(B_LO), x2, pl));
    vf uh = vadd(p, vset(A_HI));
    vf err = vadd(vsub(vset(A_HI), uh), p);
    vf ul = vadd(vadd(lowp, vset(A_LO)), err);
    vf wm = vfma(vmul(x, uh), vset(-1.44269504088896341f), vset(MAGIC_B));
    vf nf = vsub(wm, vset(MAGIC_B));
    vf r = vfnmadd(x, uh, vmul(nf, vset(-0.693359375f)));
    r = vfma(nf, vset(2.12194440e-4f), r);
    r = vfnmadd(x, ul, r);
    vf tp = exp_poly_m1_fast(r);
    vf pw = vbits_shl23(wm);
    vf e = vfma(pw, tp, pw);
    vf one = vset(1.0f);
    vf dh = vadd(one, e), dl = vsub(e, vsub(dh, one)); // 1 + E = dh + dl
    vf q0 = vdiv(x, dh);
    vf rc = vbits_rsub(dh, 0x7EF311C3);
    vf nres = vfma(q0, dl, vfmsub(q0, dh, x)); // q0 (1 + E) - x (written so that -0 stays -0)
    return vfnmadd(nres, rc, q0);
}

static inline vf gelu_tanh_forward(vf x) {
    vm rare = vgtu(vmul(x, x), vset(FAST_MAX * FAST_MAX)); // |x| > FAST_MAX or NaN
    vf y = gelu_tanh_forward_fast(x);
    if (vany(rare)) y = vsel(rare, gelu_tanh_forward_general(x), y);
    return y;
}

static inline vf gelu_tanh_backward_fast(vf g, vf x) {
    tanh_parts o = tanh_exp(x);
    vm pos = vgt(x, vset(0.0f));
    vf dh = vadd(vset(1.0f), o.e), dl = vadd(vsub(vset(1.0f), dh), o.e); // 1 + e = dh + dl
    // u3 = a + 3 b x^2 = u + 2 b x^2 = u3h + u3l (so that s u3 = x z' for x <= 0)
    vf p2 = vadd(o.p, o.p);
    vf u3h = vadd(o.uh, p2);
    vf err = vadd(vsub(vmax(o.uh, p2), u3h), vmin(o.uh, p2));
    vf u3l = vadd(vfma(o.lowp, vset(2.0f), o.ul), err);
    // numerator N = (1 + e) + x z' (x <= 0: s = x) or (1 + e) + x z' e (x > 0: x e = -s e)
    vf sm = vsel(pos, vmul(x, o.e), o.s);
    vf num = vfma(sm, u3h, dh), numl = vfma(sm, u3l, dl); // N = num + numl
    // q = N / (1 + e)^2, the quotient corrected by its residual
    vf rc = rcp12(dh);
    vf rr = vmul(rc, rc);
    vf d2h = vmul(dh, dh), d2l = vfma(vadd(dh, dh), dl, vfmsub(dh, dh, d2h));
    vf q0 = vmul(num, rr);
    vf nres = vsub(vfma(q0, d2l, vfmsub(q0, d2h, num)), numl);
    vf q = vfnmadd(nres, rr, q0);
    // x <= 0: gelu' = e q = 2^n (q + q tp)
    vf qp = vmul(q, o.pw);
    return vmul(g, vsel(pos, q, vfma(qp, o.tp, qp)));
}

static inline vf gelu_tanh_backward(vf g, vf x) {
    vm rare = vgtu(vmul(x, x), vset(FAST_MAX * FAST_MAX));
    vf y = gelu_tanh_backward_fast(g, x);
    if (vany(rare)) y = vsel(rare, gelu_tanh_backward_general(g, x), y);
    return y;
}

/// e^(-t^2/2) = 2^n (1 + tp) for t in [0, FAST_MAX] (t^2 = hh + hl exactly); the returned
/// power of two is -2^n when magic is MAGIC_B + 256 (bit 8 of the biased exponent lands in the
/// sign bit).
static inline vf exp_half_square_fast(vf t, vf *tp, float magic) {
    vf hh = vmul(t, t), hl = vfmsub(t, t, hh);
    vf v = vmul(hh, vset(-0.5f));
    vf wm = vfma(v, vset(1.44269504088896341f), vset(magic));
    vf nf = vsub(wm, vset(magic));
    vf r = og_vexp_r(v, nf);
    *tp = og_vexp_poly_m1(vfma(hl, vset(-0.5f), r));
    return vbits_shl23(wm);
}

#define C_HI 0x1.988454p-2f // 1/sqrt(2 pi) = C_HI + C_LO
#define C_LO -0x1.857936p-27f
#define W_C 0.56640625f // centre of the tail polynomial's variable v = w - W_C

/// The scaled tail R(t) = e^(t^2/2) Q(t) on [0, FAST_MAX] as w qh + s, s = w ql + corr (the sum
/// rounded once): w = 3 / (3 + t) (vdivps, correctly rounded; one division, the divider is
/// otherwise idle), q(v) = R / w a degree-8 polynomial in v = w - W_C (exact for w >= 1/4,
/// t <= 9; fitted in double to relative error 2^-26, coefficients rounded to float), its last
/// step split exactly as qh + ql (c0 - qh is exact by Sterbenz: q in [0.17, 0.5]), and corr the
/// first-order correction for w's rounding. Relative error within 1.8 2^-24 (2.4 before the
/// centring and the split: the alternating Horner sum at w = 1 cost 1.7 of it).
static inline vf normal_tail_fast(vf t) {
    vf three = vset(3.0f);
    vf d = vadd(three, t);
    vf dl = vsub(t, vsub(d, three)); // 3 + t = d + dl exactly (d - 3 and t - (d - 3) are exact)
    vf w = vdiv(three, d);
    vf rw = vfnmadd(w, d, three); // 3 - w d exactly
    vf v = vsub(w, vset(W_C));
    vf q = vset(-2.616352588e-02f);
    q = vfma(q, v, vset(2.750921808e-02f));
    q = vfma(q, v, vset(3.892375901e-02f));
    q = vfma(q, v, vset(-6.172953919e-02f));
    q = vfma(q, v, vset(-7.860569656e-02f));
    q = vfma(q, v, vset(1.080840528e-01f));
    q = vfma(q, v, vset(3.301119506e-01f));
    q = vfma(q, v, vset(3.818819523e-01f));
    vf c0 = vset(2.669646144e-01f);
    vf qh = vfma(q, v, c0);
    vf ql = vfma(q, v, vsub(c0, qh)); // q v + c0 - qh, rounded once
    // (w_exact - w) dR/dw = (rw - w dl) / (d + dl) * 3 (c - t R) / w^2 ~ (rw - w dl) (c - t R) d /
    // 3, and (c - t R) d / 3 ~ c + t (c/3 - qh) as w d ~ 3 (corr is below 3 2^-24 R: 2^-6 relative
    // accuracy is plenty)
    vf h = vfnmadd(w, dl, rw);
    vf corr = vmul(h, vfma(t, vsub(vset(C_HI / 3.0f), qh), vset(C_HI)));
    return vfma(w, qh, vfma(w, ql, corr));
}

static inline vf gelu_erf_forward_fast(vf x) {
    // gelu = max(x, 0) - t e R for either sign (t = |x|): with p = (t (-2^n)) R (one rounding,
    // t 2^n exact), y = (max(x, 0) + p) + p tp. For x <= 0 the sum is p exactly, so y is
    // p (1 + tp) with one full rounding; for x > 0, y >= x / 2 and the two roundings are small.
    vf t = vabs(x), tp;
    vf npw = exp_half_square_fast(t, &tp, MAGIC_B + 256.0f);
    vf p = vmul(vmul(t, npw), normal_tail_fast(t));
    vf base = vmax(vset(-0.0f), x); // x > 0: x, else -0 (+0 stays +0, -0 stays -0)
    return vfma(p, tp, vadd(base, p));
}

static inline vf gelu_erf_forward(vf x) {
    vm rare = vgtu(vabs(x), vset(FAST_MAX)); // |x| > FAST_MAX or NaN
    vf y = gelu_erf_forward_fast(x);
    if (vany(rare)) y = vsel(rare, gelu_erf_forward_general(x), y);
    return y;
}

static inline vf gelu_erf_backward_fast(vf g, vf x) {
    vf t = vabs(x), tp;
    vf pw = exp_half_square_fast(t, &tp, MAGIC_B);
    // q = R - t c with c as a float pair (float c alone is 0.48 2^-24 off, which t c carries
    // undiminished for large t, where q ~ -t c)
    vf q = vfnmadd(t, vset(C_LO), vfnmadd(t, vset(C_HI), normal_tail_fast(t)));
    // s = g e q = (g 2^n) q (1 + tp), rounded once but for g q 2^n; x <= 0: gelu' g = s,
    // x > 0: g - s (|s| <= |g| / 2 there, so s's error reaches the result halved)
    vf gp = vmul(g, pw), gq = vmul(gp, q);
    vf s = vfma(gp, q, vmul(gq, tp));
    return vsel(vgt(x, vset(0.0f)), vsub(g, s), s);
}

static inline vf gelu_erf_backward(vf g, vf x) {
    vm rare = vgtu(vabs(x), vset(FAST_MAX)); // |x| > FAST_MAX or NaN
    vf y = gelu_erf_backward_fast(g, x);
    if (vany(rare)) y = vsel(rare, gelu_erf_backward_general(g, x), y);
    return y;
}

OG_EW_KERNEL3(og_gelu_tanh_fwd, og_no_consts, og_no_setup, 1, 1,
              { vstore(outs[0], gelu_tanh_forward(vload(ins[0]))); })

OG_EW_KERNEL3(og_gelu_tanh_bwd, og_no_consts, og_no_setup, 2, 1,
              { vstore(outs[0], gelu_tanh_backward(vload(ins[0]), vload(ins[1]))); })

OG_EW_KERNEL3(og_gelu_erf_fwd, og_no_consts, og_no_setup, 1, 1,
              { vstore(outs[0], gelu_erf_forward(vload(ins[0]))); })

OG_EW_KERNEL3(og_gelu_erf_bwd, og_no_consts, og_no_setup, 2, 1,
              { vstore(outs[0], gelu_erf_backward(vload(ins[0]), vload(ins[1]))); })

// ---- float64 (engine/simd/map64.h)
OG_EW_KERNEL64(og_gelu_tanh_fwd, void, { Y64(0) = og_gelu_tanh64(X64(0)); })
OG_EW_KERNEL64(og_gelu_tanh_bwd, void, {
    double g = X64(0), x = X64(1);
    Y64(0) = isnan(x) ? x : g * og_gelu_tanh_grad64(x);
})
OG_EW_KERNEL64(og_gelu_erf_fwd, void, { Y64(0) = og_gelu_erf64(X64(0)); })
OG_EW_KERNEL64(og_gelu_erf_bwd, void, {
    double g = X64(0), x = X64(1);
    Y64(0) = isnan(x) ? x : g * og_gelu_erf_grad64(x);
})
