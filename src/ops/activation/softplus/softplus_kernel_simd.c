/* Softplus forward and backward, written once against vec.h and compiled per ISA.
 *
 * z = beta x is kept exactly as zh + zl (zh the float product, zl = fma(beta, x, -zh)); the
 * threshold test uses zh, as ops-nn and PyTorch do. e = exp(-|z|) = p 2^n takes both parts
 * (og_vexp_split2), so a non-power-of-two beta costs no accuracy where |z| is large.
 *   forward:   z > 0:  x + log1p(e) / beta        (log1p(beta x) / beta = x + log1p(e^-z) / beta)
 *              z <= 0: log1p(e) / beta
 *              with log1p(e) = e L(e) (og_vlog1p_ratio) and one division q = L(e) / beta: the
 *              z > 0 result is fma(q, e, x), the z <= 0 result q p 2^n scaled once at the end
 *              (og_vmul_pow2), accurate where e^z is subnormal.
 *   backward:  sigmoid(z) = 1 / (1 + e) (z > 0), e / (1 + e) (z <= 0): g q p 2^n with
 *              q = 1 / (1 + e), formed in double and rounded once (og_vmul3_pow2).
 * z <= -200 is clamped (every float result is 0 there); -inf gives 0 and +inf gives x (above
 * the threshold) in both directions; NaN propagates.
 *
 * These general forms run only for the lanes of a vector with z < -87, z = +-inf or NaN.
 * Everywhere else e = p 2^n is a normal float (og_vexp_normal2, argument clamped at -87, which
 * changes nothing for z > 87: 1 + e rounds to 1 and q e vanishes beside x), and
 *   forward:   q e for z <= 0, which is q p 2^n rounded once: the bits of the general form;
 *   backward:  q = 1 / (1 + e), dx = g q (z > 0), (h + h t) 2^(n+1) with h = g q / 2 (z <= 0),
 *              e = (1 + t) 2^n and t unrounded: three roundings and the exp's (the general
 *              form: p, q and the double product), a smaller relative error than the general
 *              form's (2.9 against 3.5 x 2^-24 at g = 1, beta = 0.7). h (1 + t) <= |g| / sqrt 2
 *              cannot overflow; a result below the normal range is rounded twice; g = +-0 or
 *              +-inf gives g q itself (the sign of zero and the infinity of the product).
 * beta = 1 (PyTorch's default) runs its own instance of the loops: z = x exactly (no low part),
 * no division by beta, and +inf is no rare lane. n = round(v / ln2) is the magic-number
 * rounding of the exact product (one fma), whose bits also give 2^n. */
#include <float.h>

#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "engine/simd/vmath.h"
#include "ops/activation/softplus/softplus_kernel.h"

#define LIMIT 200.0f

typedef struct sp_common {
    vm pos, above;
    og_vexp s;
    vf e;
} sp_common;

static inline sp_common sp_prepare(vf x, vf beta, vf threshold) {
    sp_common c;
    vf zh = vmul(beta, x);
    vf zl = vfma(beta, x, vsub(vset(0.0f), zh));
    c.pos = vgt(zh, vset(0.0f));
    c.above = vgt(zh, threshold);
    vf v = vsub(vset(0.0f), vabs(zh));
    vm clamp = vlt(v, vset(-LIMIT)); // also -inf; NaN keeps zl out of the reduction below
    vf lo = vsel(vmor(clamp, visnan(zl)), vset(0.0f), vsel(c.pos, vsub(vset(0.0f), zl), zl));
    c.s = og_vexp_split2(vmax(v, vset(-LIMIT)), lo);
    c.e = og_vexp_value(c.s);
    return c;
}

static inline vf softplus_forward_general(vf x, vf beta, vf threshold) {
    sp_common c = sp_prepare(x, beta, threshold);
    vf q = vdiv(og_vlog1p_ratio(c.e), beta);
    vf neg = og_vmul_pow2(q, c.s.p, vsel(c.pos, vset(0.0f), c.s.n));
    vf y = vsel(c.above, x, vsel(c.pos, vfma(q, c.e, x), neg));
    return vsel(visnan(x), x, y);
}

static inline vf softplus_backward_general(vf g, vf x, vf beta, vf threshold) {
    sp_common c = sp_prepare(x, beta, threshold);
    vf q = vdiv(vset(1.0f), vadd(vset(1.0f), c.e));
    vf sig = og_vmul3_pow2(g, q, vsel(c.pos, vset(1.0f), c.s.p), vsel(c.pos, vset(0.0f), c.s.n));
    vf dx = vsel(c.above, g, sig);
    return vsel(visnan(x), x, dx);
}

// The fast path's e = exp(-|z|) with z = zh + zl = beta x exactly, and its rare lanes.
// unit: beta = 1 (z = x exactly: no product, no low part, no division by beta).
typedef struct sp_fast {
    vm pos, above, rare;
    vf e, t, pw; // e = (1 + t) pw
} sp_fast;

static inline sp_fast sp_prepare_fast(vf x, vf beta, vf threshold, const int unit) {
    sp_fast c;
    vf zero = vset(0.0f), lo = vset(OG_VEXP_NORMAL_MIN);
    vf zh = unit ? x : vmul(beta, x);
    c.pos = vgt(zh, zero);
    c.above = vgt(zh, threshold);
    // z < -87, z = +-inf (zl is NaN) or NaN: vmax maps NaN to lo, vmin maps +inf to FLT_MAX;
    // unit: +inf is no rare lane (z = x: the fast forms give x, resp. g, as the general ones)
    c.rare = unit ? og_vbelow_or_nan(zh, lo) : vne(vmin(vmax(zh, lo), vset(FLT_MAX)), zh);
    vf v = vmax(vnegabs(zh), lo);
    // n = round(v / ln2) by the magic-number rounding (one rounding of the exact product), and
    // 2^n from the same bits: kt = 1.5 2^23 + 127 + n
    vf kt = vfma(v, vset(1.44269504088896341f), vset(0x1.8p23f + 127.0f));
    vf n = vsub(kt, vset(0x1.8p23f + 127.0f));
    vf r = og_vexp_r(v, n);
    if (!unit) {
        vf zl = vfma(beta, x, vsub(zero, zh));
        r = vadd(r, vsel(c.pos, vsub(zero, zl), zl));
    }
    c.t = og_vexp_poly_m1(r);
    c.pw = vbits_shl23(kt);
    c.e = vmul(vadd(c.t, vset(1.0f)), c.pw);
    return c;
}

static inline vf softplus_forward(vf x, vf beta, vf threshold, const int unit) {
    sp_fast c = sp_prepare_fast(x, beta, threshold, unit);
    vf l = og_vlog1p_ratio(c.e);
    vf q = unit ? l : vdiv(l, beta);
    // z > 0: x + q e;  z <= 0: q e (+-0 + q e, q e > 0)
    vf y = vfma(q, c.e, unit ? vmax(x, vset(0.0f)) : vsel(c.pos, x, vset(0.0f)));
    y = vsel(c.above, x, y);
    if (vany(c.rare)) y = vsel(c.rare, softplus_forward_general(x, beta, threshold), y);
    return y;
}

static inline vf softplus_backward(vf g, vf x, vf beta, vf threshold, const int unit) {
    sp_fast c = sp_prepare_fast(x, beta, threshold, unit);
    vf one = vset(1.0f);
    // z > 0: g q;  z <= 0: g q e = (h + h t) 2^(n+1) with h = g q / 2, rounded once (the
    // rounding of p saved); the halving keeps h (1 + t) <= |g| / sqrt 2 from overflowing
    // (z > 0 lanes scale by 1, not by the tiny 2^(n+1) of their clamped e: no subnormal work)
    // g q = +-0 or +-inf (g is) is the result itself, with its sign: the pair's fma would give
    // +0 for -0 (when t < 0) and inf - inf
    vf gq = vmul(g, vdiv(vsel(c.pos, one, vset(0.5f)), vadd(one, c.e)));
    vf neg = vmul(vfma(gq, c.t, gq), vsel(c.pos, one, vadd(c.pw, c.pw)));
    vm plain = vmor(c.pos, vmor(veq(gq, vset(0.0f)), visinf(gq)));
    vf dx = vsel(c.above, g, vsel(plain, gq, neg));
    if (vany(c.rare)) dx = vsel(c.rare, softplus_backward_general(g, x, beta, threshold), dx);
    return dx;
}

#define SOFTPLUS_FWD(LOOP)                                                                         \
    const og_softplus_params *prm = p;                                                             \
    vf beta = vset(prm->beta), threshold = vset(prm->threshold);                                   \
    if (prm->beta == 1.0f)                                                                         \
        LOOP(1, 1, { vstore(outs[0], softplus_forward(vload(ins[0]), beta, threshold, 1)); });     \
    else                                                                                           \
        LOOP(1, 1, { vstore(outs[0], softplus_forward(vload(ins[0]), beta, threshold, 0)); });
OG_EW_KERNEL3_FN(og_softplus_fwd, SOFTPLUS_FWD)

#define SOFTPLUS_BWD(LOOP)                                                                         \
    const og_softplus_params *prm = p;                                                             \
    vf beta = vset(prm->beta), threshold = vset(prm->threshold);                                   \
    if (prm->beta == 1.0f)                                                                         \
        LOOP(2, 1, {                                                                               \
            vstore(outs[0], softplus_backward(vload(ins[0]), vload(ins[1]), beta, threshold, 1));  \
        });                                                                                        \
    else                                                                                           \
        LOOP(2, 1, {                                                                               \
            vstore(outs[0], softplus_backward(vload(ins[0]), vload(ins[1]), beta, threshold, 0));  \
        });
OG_EW_KERNEL3_FN(og_softplus_bwd, SOFTPLUS_BWD)

// ---- float64: z = beta x; log1p(e^z) = z + log1p(e^-z) for z > 0 (no overflow); the backward
// sigmoid(z); above the threshold y = x and dx = g; NaN propagates
OG_EW_KERNEL64(og_softplus_fwd, og_softplus_params, {
    double x = X64(0), z = prm->beta64 * x;
    Y64(0) = isnan(x) || z > prm->threshold64 ? x
             : z > 0                          ? x + log1p(exp(-z)) / prm->beta64
                                              : log1p(exp(z)) / prm->beta64;
})
OG_EW_KERNEL64(og_softplus_bwd, og_softplus_params, {
    double g = X64(0), x = X64(1), z = prm->beta64 * x;
    Y64(0) = isnan(x) ? x : z > prm->threshold64 ? g : g * og_sigmoid64(z);
})
