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
 * One exp and one float division each. x is clamped where it multiplies e (160 forward, 200
 * backward: beyond, every float result is 0), so -inf gives -0 (forward) and 0 (backward), +inf
 * gives +inf and gradOutput; NaN propagates.
 *
 * These general forms run only for the lanes of a vector with x < -87 (backward: x < -64) or
 * NaN x. Everywhere else e = p 2^n is a normal float (og_vexp_normal, argument clamped at -87,
 * resp. -64, which changes nothing for larger x where 1 + e rounds to 1), and:
 *   forward:   q = x / (1 + e);  y = q (x > 0),  q e (x <= 0): q e = q p 2^n rounded once, the
 *              same bits as the general form.
 *   backward:  all in float. e^v = (1 + t) 2^n is carried as e = p 2^n plus the rounding of
 *              p, 1 + e^v as dh + dl; one division s0 = e / dh, corrected to
 *              s = e^v / (1 + e^v) = s0 + sl (sl from the exact residual e - s0 dh), and
 *              w = 1 - s = (1 - s0) - sl, with 1 - s0 exact. Then
 *                x <= 0:  silu' = s (1 + x w)      x > 0:  silu' = w (1 + x s)
 *              i.e. F (1 + x M) with M = 1 - F: b = fma(x, M, 1) (one rounding, which holds
 *              the root's cancellation), silu' = fma(fh, b, fl (b - x fh)), dx = g silu'.
 *              Three roundings and the exp's 0.3 ulp: relative error at most 3.0 x 2^-24
 *              before the product with g (every float of [-64, 64]), so within 3.5 ulp for
 *              any g where well conditioned (PyTorch's float formula: 7.5 ulp on [-6, 6], 14
 *              on [-20, 20]); absolute 2^-24 |g| M near the root. The general form above is
 *              within 2.8 ulp but costs twice as much. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "engine/simd/vmath.h"
#include "ops/activation/silu/silu_kernel.h"

#define FWD_LIMIT 160.0f
#define BWD_LIMIT 200.0f

static inline vf silu_forward_general(vf x) {
    vm pos = vgt(x, vset(0.0f));
    og_vexp s = og_vexp_split(vmax(vsub(vset(0.0f), vabs(x)), vset(-FWD_LIMIT)));
    vf e = og_vexp_value(s);
    vf q = vdiv(vmax(x, vset(-FWD_LIMIT)), vadd(vset(1.0f), e));
    vf y = og_vmul_pow2(q, vsel(pos, vset(1.0f), s.p), vsel(pos, vset(0.0f), s.n));
    return vsel(visnan(x), x, y);
}

static inline vf silu_backward_general(vf g, vf x) {
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

static inline vf silu_forward(vf x) {
    vf lo = vset(OG_VEXP_NORMAL_MIN);
    vf v = vmax(vnegabs(x), lo);
    // e = e^v = p 2^n, n = round(v / ln2) by the magic-number rounding (one rounding of the
    // exact product) and 2^n from the same bits: kt = 1.5 2^23 + 127 + n
    vf kt = vfma(v, vset(1.44269504088896341f), vset(0x1.8p23f + 127.0f));
    vf n = vsub(kt, vset(0x1.8p23f + 127.0f));
    vf e = vmul(og_vexp_poly(og_vexp_r(v, n)), vbits_shl23(kt));
    vf q = vdiv(x, vadd(vset(1.0f), e));
    vf y = vsel(vgt(x, vset(0.0f)), q, vmul(q, e));
    vm rare = og_vbelow_or_nan(x, lo);
    if (vany(rare)) y = vsel(rare, silu_forward_general(x), y);
    return y;
}

// The backward's fast path stops at -64: its correction terms (~2^-24 e) stay normal floats
// (a subnormal operand costs a microcode assist of ~100 cycles on x86).
#define BWD_FAST_MIN (-64.0f)

static inline vf silu_backward(vf g, vf x) {
    vf zero = vset(0.0f), one = vset(1.0f), lo = vset(BWD_FAST_MIN);
    vf v = vmax(vnegabs(x), lo);
    vf kt = vfma(v, vset(1.44269504088896341f), vset(0x1.8p23f + 127.0f)); // as the forward
    vf n = vsub(kt, vset(0x1.8p23f + 127.0f));
    vf t = og_vexp_poly_m1(og_vexp_r(v, n)); // e^v = (1 + t) 2^n
    vf pw = vbits_shl23(kt);
    vf p = vadd(t, one);
    vf e = vmul(p, pw);                      // exact: normal
    vf de = vmul(vsub(t, vsub(p, one)), pw); // e^v - e (the rounding of p)
    vm pos = vgt(x, zero);
    vf dh = vadd(one, e);
    vf dl = vadd(vsub(e, vsub(dh, one)), de); // 1 + e^v = dh + dl
    // s = e^v / (1 + e^v) = s0 + sl, w = 1 - s = (1 - s0) - sl, 1 - s0 exact (s0 <= 1/2)
    vf s0 = vdiv(e, dh);
    vf ns0 = vsub(zero, s0);
    vf w1 = vsub(one, s0);
    // s0 dl ~ e^2 matters only while e >= 2^-30 (and would underflow, slowly, below 2^-63)
    vf dls = vsel(vlt(e, vset(0x1p-30f)), zero, dl);
    vf sl = vmul(vadd(vfma(ns0, dls, vfma(ns0, dh, e)), de), w1);
    // x <= 0: silu' = s (1 + x w);  x > 0: silu' = w (1 + x s);  F (1 + x M), M = 1 - F
    vf fh = vsel(pos, w1, s0), fl = vsel(pos, vsub(zero, sl), sl), mh = vsel(pos, s0, w1);
    vf xc = vmin(x, vset(-BWD_FAST_MIN)); // e is clamped there too: x s vanishes
    vf b = vfma(xc, mh, one);             // 1 + x M, rounded once
    // F (1 + x M) = fh b + fl (b - x fh) to first order in fl (ml = -fl)
    vf sil = vfma(fh, b, vmul(fl, vfma(fh, vsub(zero, xc), b)));
    vf dx = vmul(g, sil);
    vm rare = og_vbelow_or_nan(x, lo);
    if (vany(rare)) dx = vsel(rare, silu_backward_general(g, x), dx);
    return dx;
}

OG_EW_KERNEL3(og_silu_fwd, og_no_consts, og_no_setup, 1, 1,
              { vstore(outs[0], silu_forward(vload(ins[0]))); })

OG_EW_KERNEL3(og_silu_bwd, og_no_consts, og_no_setup, 2, 1,
              { vstore(outs[0], silu_backward(vload(ins[0]), vload(ins[1]))); })

// ---- float64 (engine/simd/map64.h)
OG_EW_KERNEL64(og_silu_fwd, void, { Y64(0) = og_silu64(X64(0)); })
OG_EW_KERNEL64(og_silu_bwd, void, {
    double g = X64(0), x = X64(1);
    Y64(0) = isnan(x) ? x : g * og_silu_grad64(x);
})
