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

static inline og_vexp og_vexp_split(vf v) {
    vf n = vround(vmul(v, vset(1.44269504088896341f)));
    vf r = vfma(n, vset(-0.693359375f), v);
    r = vfma(n, vset(2.12194440e-4f), r);
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

#endif
