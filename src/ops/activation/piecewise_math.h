/* Vector math of the piecewise family (ELU), written against vec.h only, so that every ISA build
 * computes the same bits. Include from a *_simd.c file (one of OG_ISA_* defined).
 *
 * pw_dexp_split(u) evaluates e^u for a double vector u (the exact product x * inputScale of two
 * floats) as 2^n (1 + em), with em = expm1(r) and r = u - n ln2, |r| <= ~0.347:
 *   - n comes from the float-rounded u (any nearby integer works: the reduction stays exact);
 *   - r = u - n ln2 in double with a two-part ln2 (n ln2_hi is exact for |n| <= 2^21);
 *   - em is the Taylor polynomial of expm1 to degree 11, evaluated in double: its truncation
 *     error is below 2^-46 relative (degree 9 would leave 2^-35, up to 5e-4 float ulp).
 * Then e^u = 2^n em + 2^n and expm1(u) = 2^n em + (2^n - 1) (2^n - 1 is exact in double for
 * n >= -52; below, it is -1 to double precision, which is the float result anyway), each one
 * double fma, so a float result rounded from them is correctly rounded except within ~2^-46
 * relative of a midpoint (error <= 0.5 + 1e-6 ulp).
 * u is clamped to [-700, 700] (e^-700 times any float product of gradOutput and coefficients
 * rounds to 0 in float, e^700 times any non-zero one overflows); u = -inf gives e^u = 0 and
 * expm1 = -1 exactly, u = +inf gives +inf; NaN propagates. */
#ifndef OG_PIECEWISE_MATH_H
#define OG_PIECEWISE_MATH_H

#include "engine/simd/vec.h"

#define PW_U_LIMIT 700.0f

typedef struct pw_dexp {
    vd p2n;  // 2^n
    vd em;   // expm1(r)
    vm minf; // u == -inf (or below the float range)
    vm pinf; // u == +inf (or above the float range)
} pw_dexp;

static inline pw_dexp pw_dexp_split(vd u) {
    pw_dexp s;
    vf uf = vnarrow(u); // +-inf when |u| exceeds the float range
    s.minf = veq(uf, vset(-INFINITY));
    s.pinf = veq(uf, vset(INFINITY));
    // clamp, NaN kept in u (the float copy maps NaN to a bound, so n stays an integer)
    vm lo = vlt(uf, vset(-PW_U_LIMIT)), hi = vgt(uf, vset(PW_U_LIMIT));
    u = vdsel(lo, vdset(-PW_U_LIMIT), vdsel(hi, vdset(PW_U_LIMIT), u));
    vf ufc = vmax(vmin(uf, vset(PW_U_LIMIT)), vset(-PW_U_LIMIT));
    vf n = vround(vmul(ufc, vset(1.44269504088896341f)));
    vd nd = vwiden(n);
    vd r = vdfma(nd, vdset(-0x1.62e42fee00000p-1), u); // ln2_hi (32 significant bits)
    r = vdfma(nd, vdset(-0x1.a39ef35793c76p-33), r);   // ln2_lo
    vd q = vdset(1.0 / 39916800.0);
    q = vdfma(q, r, vdset(1.0 / 3628800.0));
    q = vdfma(q, r, vdset(1.0 / 362880.0));
    q = vdfma(q, r, vdset(1.0 / 40320.0));
    q = vdfma(q, r, vdset(1.0 / 5040.0));
    q = vdfma(q, r, vdset(1.0 / 720.0));
    q = vdfma(q, r, vdset(1.0 / 120.0));
    q = vdfma(q, r, vdset(1.0 / 24.0));
    q = vdfma(q, r, vdset(1.0 / 6.0));
    q = vdfma(q, r, vdset(0.5));
    s.em = vdfma(vdmul(r, r), q, r);
    s.p2n = vdpow2i(n);
    return s;
}

/// e^u in double (0 for u = -inf, +inf for u = +inf).
static inline vd pw_dexp_exp(pw_dexp s) {
    vd e = vdfma(s.p2n, s.em, s.p2n);
    return vdsel(s.minf, vdset(0.0), vdsel(s.pinf, vdset(INFINITY), e));
}

/// expm1(u) in double (-1 for u = -inf, +inf for u = +inf). A zero u gives +0: callers that care
/// about the sign of zero select u itself there.
static inline vd pw_dexp_expm1(pw_dexp s) {
    vd e = vdfma(s.p2n, s.em, vdadd(s.p2n, vdset(-1.0)));
    return vdsel(s.minf, vdset(-1.0), vdsel(s.pinf, vdset(INFINITY), e));
}

#endif
