/* Vector math shared by the activation kernels, written against vec.h.
 *
 * og_vexp_split(v) evaluates e^v for v in [-160, 0] as p * s1 * s2, where p = e^r lies in
 * [0.70, 1.42] and s1, s2 are normal powers of two. Keeping the power of two apart lets a kernel
 * scale its final result once, so results stay accurate where e^v itself is subnormal
 * (v < -87.3), e.g. x * e^x for x near -100.
 *
 * Method: n = round(v / ln2), r = v - n ln2 (Cody-Waite, two-part ln2), e^r from the Cephes expf
 * minimax polynomial (degree 7 in r). Max error of p vs e^r: 1 ulp (measured against MPFR in
 * tests/kernel). */
#ifndef OG_VMATH_H
#define OG_VMATH_H

#include "engine/simd/vec.h"

typedef struct og_vexp {
    vf p, s1, s2;
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
    vf n1 = vhalf_floor(n);
    e.s1 = vpow2i(n1);
    e.s2 = vpow2i(vsub(n, n1));
    return e;
}

/// e^v itself (subnormal results rounded once).
static inline vf og_vexp_value(og_vexp e) { return vmul(vmul(e.p, e.s1), e.s2); }
/// y * e^v, rounded once at the end.
static inline vf og_vexp_scale(og_vexp e, vf y) { return vmul(vmul(vmul(y, e.p), e.s1), e.s2); }

#endif
