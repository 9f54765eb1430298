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

/// e^r - 1 by the Cephes polynomial (|r| <= ln2 / 2), before its final "+ 1":
/// keeping t apart saves the rounding of p = t + 1, e.g. y e^v = (y + y t) 2^n rounded once.
static inline vf og_vexp_poly_m1(vf r) {
    vf q = vset(1.9875691500e-4f);
    q = vfma(q, r, vset(1.3981999507e-3f));
    q = vfma(q, r, vset(8.3334519073e-3f));
    q = vfma(q, r, vset(4.1665795894e-2f));
    q = vfma(q, r, vset(1.6666665459e-1f));
    q = vfma(q, r, vset(5.0000001201e-1f));
    return vfma(q, vmul(r, r), r);
}

// e^(n ln2 + r) for |r| <= ln2 / 2: the Cephes polynomial, with 2^n kept apart.
static inline og_vexp og_vexp_reduced(vf n, vf r) {
    og_vexp e;
    e.p = vadd(og_vexp_poly_m1(r), vset(1.0f));
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
/// range (n < -126, a subnormal result or one that underflows to 0, g * a overflowing) takes the
/// same product in double and rounds once: that gives the same bits wherever the float path is
/// exact, so the per-vector choice never changes a lane's result, on any ISA.
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

/// tanh(x) for every float x, nearly correctly rounded: max error 0.504 ulp over every float
/// (0.5 from the final rounding; tests/kernel, tests/check/mpfr_activation.c), in float
/// arithmetic with error-free transformations (no double, no table):
///   a = |x| (clamped to 9.5: tanh rounds to 1 from 9.01), 2a = k ln2 - t, so e^-2a = 2^-k e^t;
///   m = 1 - e^-2a = (1 - 2^-k) - 2^-k v with v = e^t - 1;  tanh a = m / (2 - m).
/// - t = th + tl: th = k L1 - 2a exactly (L1 = ln2 to 19 bits, k <= 27, so k L1 and the
///   difference are exact floats), tl = k (ln2 - L1), |tl| < 2^-16; e^tl = 1 + tl is applied to
///   m at the end (m -= (1 - m) tl).
/// - v(th) = th + th^2/2 + th^3/6 + th^4 Q(th) (|th| <= 0.347) as a float pair uh - nlo: th^2
///   and th^3 exact to 2^-48 by fma, th + th^2/2 and + th^3/6 by Fast2Sum, the rounding of
///   th^3 * (1/6) recovered by fma; only th^4 Q (Q of degree 4, minimax with float coefficients
///   for the relative error of v, 2^-35.9) is rounded in float (2^-34 relative to v).
/// - m as a float pair mh + ml (1 - 2^-k = o + ol exactly, Fast2Sum of o - 2^-k uh),
///   renormalized; 2 - m = dh + dl by Fast2Sum; the quotient: yh = mh / dh (one division), the
///   exact residual mh - yh dh (fma), and y = yh + (residual + ml - yh dl) / (2 - m) with
///   1 / (2 - m) = (1 + tanh a) / 2 ~ (1 + yh) / 2, rounded once by the last fma.
/// The sign is restored at the end; |x| < 2^-12 (tanh x rounds to x: -0 stays -0, subnormals
/// unchanged) and NaN return x. One division; about 65 vector operations.
static inline vf og_vtanh(vf x) {
    vf a = vabs(x);
    vf na2 = vmul(vmin(a, vset(9.5f)), vset(-2.0f)); // -2a (NaN and inf give -19)
    vf nk = vround(vmul(na2, vset(0x1.715476p+0f))); // -k, k = round(2a / ln2) in [0, 27]
    vf th = vfma(nk, vset(-0x1.62e44p-1f), na2);     // exact
    vf ntl = vmul(nk, vset(-0x1.0105c6p-21f));       // -tl = -k (ln2 - L1)
    // v = e^th - 1 = uh - nlo
    vf p = vmul(th, th);
    vf np = vsub(vset(0.0f), p);
    vf pl = vfma(th, th, np); // th^2 = p + pl exactly
    vf vh = vfma(p, vset(0.5f), th);
    vf nvl = vfma(p, vset(-0.5f), vsub(vh, th)); // th + p/2 = vh - nvl (Fast2Sum, |th| >= p/2)
    vf nc = vmul(np, th);                        // -c, c = th^3 rounded
    vf cl = vfma(pl, th, vfma(p, th, nc));       // th^3 - c
    vf ch = vmul(nc, vset(-0x1.555556p-3f));     // c C6, C6 = 1/6 rounded up
    vf ncr = vfma(cl, vset(-0x1.555556p-3f),     // ch - th^3/6, with 1/6 - C6 = -0x1.555556p-28
                  vfma(nc, vset(-0x1.555556p-28f), vfma(nc, vset(0x1.555556p-3f), ch)));
    vf uh = vadd(vh, ch);
    vf nt2 = vsub(vsub(uh, vh), ch); // vh + ch = uh - nt2 (Fast2Sum)
    vf nq = vset(-0x1.a1fa50p-16f);  // -Q(th)
    nq = vfma(nq, th, vset(-0x1.a126d6p-13f));
    nq = vfma(nq, th, vset(-0x1.6c1566p-10f));
    nq = vfma(nq, th, vset(-0x1.1110e4p-7f));
    nq = vfma(nq, th, vset(-0x1.555556p-5f));
    vf nlo = vadd(vadd(vfma(pl, vset(-0.5f), nvl), nt2), ncr);
    nlo = vfma(vmul(p, p), nq, nlo);
    // m = (1 - 2^-k) - 2^-k uh + 2^-k nlo = mh + ml
    vf pw = vpow2i(nk);
    vf o = vsub(vset(1.0f), pw);
    vf ol = vsub(vsub(vset(1.0f), o), pw); // 1 - 2^-k = o + ol (ol != 0 for k > 24)
    vf w1 = vmul(pw, uh);
    vf nh = vsub(o, w1); // Fast2Sum: |o| >= |w1| (k >= 1) or o = 0
    vf nl = vfma(pw, nlo, vadd(vsub(vsub(o, nh), w1), ol));
    vf mh = vadd(nh, nl);
    vf ml = vsub(nl, vsub(mh, nh));           // renormalized, |ml| <= ulp(mh) / 2
    ml = vfma(vsub(vset(1.0f), mh), ntl, ml); // e^tl = 1 + tl: m -= (1 - m) tl
    // tanh a = m / (2 - m)
    vf dh = vsub(vset(2.0f), mh);
    vf dl = vsub(vsub(vsub(vset(2.0f), dh), mh), ml); // 2 - m = dh + dl
    vf yh = vdiv(mh, dh);
    vf nyh = vsub(vset(0.0f), yh);
    vf res = vfma(nyh, dh, mh);                       // mh - yh dh exactly
    vf r = vfma(yh, vset(0.5f), vset(0.5f));          // 1 / (2 - m) to about 2^-21
    vf y = vfma(vfma(nyh, dl, vadd(res, ml)), r, yh); // yh + (m - yh (2 - m)) / (2 - m)
    y = vsel(vlt(x, vset(0.0f)), vsub(vset(0.0f), y), y);
    return vsel(vgt(a, vset(0x1.fffffep-13f)), y, x); // |x| < 2^-12 and NaN: x
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
    vf rw = vfma(vsub(vset(0.0f), w), d, three); // 3 - w d exactly
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
    // (w_exact - w) dR/dw = (rw - w dl) / (d + dl) * 3 (c - t R) / w^2 ~ (c - t R) (rw - w dl) d /
    // 3 (as w d ~ 3), added to first order
    vf h = vfma(vsub(vset(0.0f), w), dl, rw);
    vf k = vfma(vsub(vset(0.0f), t), r, vset(0.3989422804f));
    return vfma(vmul(k, h), vmul(d, vset(1.0f / 3.0f)), r);
}

// ---------------------------------------------------------------------------------------------
// Fast paths (sigmoid, silu, softplus). A kernel evaluates the common case with the helpers
// below and only lanes outside their range (the "rare" lanes: deep negative tails, NaN) with its
// general formula, selected per lane:
//     y = fast(x);  rare = ...;  if (vany(rare)) y = vsel(rare, general(x), y);
// A lane's result therefore never depends on its neighbours, and the per-vector branch cannot
// make the ISA builds differ.

/// Below this v, p 2^n is no longer a normal float (n would reach -127).
#define OG_VEXP_NORMAL_MIN (-87.0f)

/// e^v = p 2^n = e, for v in [OG_VEXP_NORMAL_MIN, 0]: e is a normal float, and (p, n, e) are bit
/// for bit og_vexp_split's p, n and og_vexp_value (p 2^n is exact), without the two-factor
/// scaling s1 s2 (which only matters below the normal range).
typedef struct og_vexpn {
    vf p, n, e;
} og_vexpn;

/// The Cephes polynomial of og_vexp_reduced: e^r for |r| <= ln2 / 2, the same operations.
static inline vf og_vexp_poly(vf r) { return vadd(og_vexp_poly_m1(r), vset(1.0f)); }

/// og_vexp_split2(v, lo) for v in [OG_VEXP_NORMAL_MIN, 0] (lo = 0: og_vexp_split), as p, n, e.
static inline og_vexpn og_vexp_normal2(vf v, vf lo) {
    og_vexpn s;
    s.n = og_vexp_n(v);
    s.p = og_vexp_poly(vadd(og_vexp_r(v, s.n), lo));
    s.e = vmul(s.p, vpow2i(s.n));
    return s;
}

/// The same with lo = 0 (og_vexp_split).
static inline og_vexpn og_vexp_normal(vf v) {
    og_vexpn s;
    s.n = og_vexp_n(v);
    s.p = og_vexp_poly(og_vexp_r(v, s.n));
    s.e = vmul(s.p, vpow2i(s.n));
    return s;
}

/// Lanes where x is below lo or NaN: vmax(x, lo) returns lo for a NaN x (vec.h's vmax returns
/// its second operand when either is NaN), so one compare finds both.
static inline vm og_vbelow_or_nan(vf x, vf lo) { return vne(vmax(x, lo), x); }

#endif
