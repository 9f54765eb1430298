/* Vector math shared by the activation kernels, written against vec.h.
 *
 * og_vexp_split(v) evaluates e^v for v in [-200, 0] as p * 2^n, where p = e^r lies in
 * [0.70, 1.42] and n is an integer. Keeping the power of two apart lets a kernel scale its final
 * result once, so results stay accurate where e^v itself is subnormal (v < -87.3), e.g. x * e^x
 * for x near -100: in float (og_vexp_scale, n >= -252) or exactly in double (og_vexp_double).
 *
 * Method: n = round(v / ln2), r = v - n ln2 (Cody-Waite, two-part ln2), e^r from the Cephes expf
 * minimax polynomial (degree 7 in r). Max error of p vs e^r: 1 ulp (measured against MPFR in
 * tests/kernel). */
#ifndef OG_VMATH_H
#define OG_VMATH_H

#include "engine/simd/vec.h"

typedef struct og_vexp {
    vf p, n;   // e^v = p * 2^n
    vf s1, s2; // 2^n = s1 * s2, both normal floats (valid for n >= -252)
} og_vexp;

// e^(n ln2 + r) for |r| <= ln2 / 2: the Cephes polynomial, with 2^n kept apart.
static inline og_vexp og_vexp_reduced(vf n, vf r) {
    vf q = vset(1.9875691500e-4f);
    q = vfma(q, r, vset(1.3981999507e-3f));
    q = vfma(q, r, vset(8.3334519073e-3f));
    q = vfma(q, r, vset(4.1665795894e-2f));
    q = vfma(q, r, vset(1.6666665459e-1f));
    q = vfma(q, r, vset(5.0000001201e-1f));
    vf r2 = vmul(r, r);
    og_vexp e;
    e.p = vadd(vfma(q, r2, r), vset(1.0f));
    e.n = n;
    vf n1 = vhalf_floor(n);
    e.s1 = vpow2i(vmax(n1, vset(-126.0f)));
    e.s2 = vpow2i(vmax(vsub(n, n1), vset(-126.0f)));
    return e;
}

// n = round(v / ln2) and the Cody-Waite remainder v - n ln2 (two-part ln2).
static inline vf og_vexp_n(vf v) { return vround(vmul(v, vset(1.44269504088896341f))); }
static inline vf og_vexp_r(vf v, vf n) {
    return vfma(n, vset(2.12194440e-4f), vfma(n, vset(-0.693359375f), v));
}

static inline og_vexp og_vexp_split(vf v) {
    vf n = og_vexp_n(v);
    return og_vexp_reduced(n, og_vexp_r(v, n));
}

/// e^v itself (subnormal results rounded once).
static inline vf og_vexp_value(og_vexp e) { return vmul(vmul(e.p, e.s1), e.s2); }
/// y * e^v, rounded once at the end (v >= -174).
static inline vf og_vexp_scale(og_vexp e, vf y) { return vmul(vmul(vmul(y, e.p), e.s1), e.s2); }
/// e^v in double, exact up to the error of p.
static inline vd og_vexp_double(og_vexp e) { return vdmul(vwiden(e.p), vdpow2i(e.n)); }

/// 1 / d in double for d in [2^-100, 2^100]: a float division seeds one Newton step
/// (relative error ~2^-47), far cheaper than a double division.
static inline vd og_vrecip_double(vd d) {
    vd r0 = vwiden(vdiv(vset(1.0f), vnarrow(d)));
    vd two_minus_dr = vdfma(vdmul(d, vdset(-1.0)), r0, vdset(2.0));
    return vdmul(r0, two_minus_dr);
}

// ---------------------------------------------------------------------------------------------
// Additions for the sigmoid family (sigmoid, tanh, silu, gelu, softplus). Every function below
// uses vec.h operations only, with explicit fma, so all ISA builds give the same bits. The
// polynomials are minimax fits (Lawson's algorithm in 40-digit arithmetic, coefficients rounded
// to float one at a time with the rest refitted); the relative error of each approximation with
// its float coefficients is given beside it, the float evaluation adds about 1 ulp.

/// og_vexp_split for e^(v + lo), v in [-200, 0] and a small correction lo (|lo| <= 2^-8): lo is
/// added to the reduced argument. With lo = 0 this is og_vexp_split bit for bit. It lets a
/// kernel pass an exponent known to more than float precision, e.g. -x^2/2 = -(hh + hl)/2 with
/// hh + hl = x*x exactly, where rounding the exponent to float would cost up to |v| 2^-24
/// relative in the result (100 ulps at v = -100).
static inline og_vexp og_vexp_split2(vf v, vf lo) {
    vf n = og_vexp_n(v);
    return og_vexp_reduced(n, vadd(og_vexp_r(v, n), lo));
}

/// g * a * 2^n rounded once, for integer-valued n in [-300, 127 - 24] (usually the n of an
/// og_vexp split, so that g * a * 2^n = g * (a / p) * e^v with a = q * p). In the normal float
/// range this is round(g * a) * 2^n, an exact scaling. A vector where some lane would leave that
/// range (n < -126, a subnormal result or one that underflows to 0, g * a overflowing) takes the same product in
/// double and rounds once: that gives the same bits wherever the float path is exact, so the
/// per-vector choice never changes a lane's result, on any ISA.
static inline vf og_vmul_pow2(vf g, vf a, vf n) {
    vf v = vmul(g, a);
    vf r = vmul(v, vpow2i(vmax(n, vset(-126.0f))));
    vm tiny = vmandnot(veq(v, vset(0.0f)), vlt(vabs(r), vset(0x1p-126f))); // not an exact 0
    vm extreme = vmor(vmor(vlt(n, vset(-126.0f)), tiny), visinf(v));
    if (vany(extreme)) r = vnarrow(vdmul(vdmul(vwiden(g), vwiden(a)), vdpow2i(n)));
    return r;
}

/// a * b * c * 2^n rounded to float once, for integer-valued n in [-1022, 1023]: the product is
/// formed in double (a b exactly, one double rounding for c, the power of two exactly), so a
/// result in the subnormal range or beyond FLT_MAX is rounded correctly (up to the 2^-53 of the
/// double product) and nothing underflows or overflows on the way. Costs about as much as a
/// float division per vector; it saves two float roundings over vmul(vmul(a, b), c).
static inline vf og_vmul3_pow2(vf a, vf b, vf c, vf n) {
    return vnarrow(vdmul(vdmul(vdmul(vwiden(a), vwiden(b)), vwiden(c)), vdpow2i(n)));
}

/// The same with the first factor already in double (not rounded to float first).
static inline vf og_vmul3d_pow2(vd a, vf b, vf c, vf n) {
    return vnarrow(vdmul(vdmul(vdmul(a, vwiden(b)), vwiden(c)), vdpow2i(n)));
}

/// log(1 + e) / e for e in [0, 1] (1 at e = 0): degree-9 polynomial, relative error 2^-27.5.
static inline vf og_vlog1p_ratio(vf e) {
    vf q = vset(-3.303909441e-03f);
    q = vfma(q, e, vset(2.014047280e-02f));
    q = vfma(q, e, vset(-5.754703283e-02f));
    q = vfma(q, e, vset(1.066897213e-01f));
    q = vfma(q, e, vset(-1.534873396e-01f));
    q = vfma(q, e, vset(1.969314367e-01f));
    q = vfma(q, e, vset(-2.495815605e-01f));
    q = vfma(q, e, vset(3.333047032e-01f));
    q = vfma(q, e, vset(-4.999993145e-01f));
    return vfma(q, e, vset(1.0f));
}

/// tanh(x) for |x| <= 0.625: x + x^3 P(x^2), P of degree 4, relative error 2^-27.7. Below
/// 2^-12, where tanh(x) rounds to x, x itself (so -0 stays -0 and subnormals are unchanged).
static inline vf og_vtanh_small(vf x) {
    vf s = vmul(x, x);
    vf q = vset(-5.699397996e-03f);
    q = vfma(q, s, vset(2.063351683e-02f));
    q = vfma(q, s, vset(-5.373777077e-02f));
    q = vfma(q, s, vset(1.333141476e-01f));
    q = vfma(q, s, vset(-3.333328068e-01f));
    return vsel(vlt(vabs(x), vset(0x1p-12f)), x, vfma(vmul(x, s), q, x));
}

/// tanh(x) for every float x: the polynomial for |x| < 0.625, else (1 - e) / (1 + e) with
/// e = exp(-2|x|) <= 0.29 (no cancellation, no overflow), sign restored; +-inf give +-1, NaN
/// propagates. One exp and one division.
static inline vf og_vtanh(vf x) {
    vf a = vabs(x);
    og_vexp s = og_vexp_split(vmax(vmul(a, vset(-2.0f)), vset(-200.0f)));
    vf e = og_vexp_value(s);
    vf one = vset(1.0f);
    vf big = vdiv(vsub(one, e), vadd(one, e));
    big = vsel(vlt(x, vset(0.0f)), vsub(vset(0.0f), big), big);
    vf y = vsel(vlt(a, vset(0.625f)), og_vtanh_small(x), big);
    return vsel(visnan(x), x, y);
}

/// The scaled normal tail R(t) = Q(t) e^(t^2/2) for t in [0, 20], Q(t) = 1 - Phi(t) the upper
/// tail of the standard normal (R(t) = erfcx(t / sqrt 2) / 2): R = w P(w) with w = 3 / (3 + t)
/// and P of degree 10, relative error 2^-29. The rounding of w (in 3 + t and in the division)
/// would be amplified up to 2.4 times in R; it is computed exactly instead (Fast2Sum for 3 + t,
/// fma for the division's residual) and corrected to first order with dR/dw = 3 (c - t R) / w^2,
/// c = 1/sqrt(2 pi), from R' = t R - c. One division.
static inline vf og_vnormal_tail_scaled(vf t) {
    vf three = vset(3.0f);
    vf d = vadd(three, t);
    vf dl = vadd(vsub(vmax(three, t), d), vmin(three, t)); // 3 + t = d + dl exactly
    vf w = vdiv(three, d);
    vf rw = vfma(vsub(vset(0.0f), w), d, three);           // 3 - w d exactly
    vf q = vset(1.804562658e-02f);
    q = vfma(q, w, vset(-1.123253554e-01f));
    q = vfma(q, w, vset(2.817225158e-01f));
    q = vfma(q, w, vset(-3.426824808e-01f));
    q = vfma(q, w, vset(1.917442083e-01f));
    q = vfma(q, w, vset(-8.008468151e-02f));
    q = vfma(q, w, vset(7.514028996e-02f));
    q = vfma(q, w, vset(8.371689916e-02f));
    q = vfma(q, w, vset(1.188013256e-01f));
    q = vfma(q, w, vset(1.329396665e-01f));
    q = vfma(q, w, vset(1.329819858e-01f));
    vf r = vmul(w, q);
    // (w_exact - w) dR/dw = (rw - w dl) / (d + dl) * 3 (c - t R) / w^2 ~ (c - t R) (rw - w dl) d / 3
    // (as w d ~ 3), added to first order
    vf h = vfma(vsub(vset(0.0f), w), dl, rw);
    vf k = vfma(vsub(vset(0.0f), t), r, vset(0.3989422804f));
    return vfma(vmul(k, h), vmul(d, vset(1.0f / 3.0f)), r);
}

#endif
