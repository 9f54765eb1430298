/* Mish forward and backward, written once against vec.h and compiled per ISA.
 *
 * Everything derives from e = exp(-|x|), which never overflows. With t = tanh(softplus(x)):
 *   x > 0:  t = (1 + 2e) / (1 + 2e + 2e^2)
 *   x <= 0: t = e (e + 2) / (e^2 + 2e + 2)
 * and 1 - t^2 = 4 (1+e)^2 q / den^2 (q = e^2 for x > 0, 1 otherwise), which gives the backward
 * factor mish'(x) = t + x sigmoid(x) (1 - t^2) without cancellation in 1 - t^2 and with a single
 * division:
 *   x > 0:  (num den + 4 (x e) e (1 + e)) / den^2,        num = 1 + 2e, den = num + 2e^2
 *   x <= 0: e ((e + 2) den + 4 x (1 + e)) / den^2,        den = e^2 + 2e + 2
 * The bracket of the second form cancels near x = -1.19 (the root of mish').
 *
 * Two paths, chosen per lane (a per-vector branch only decides whether the general path runs
 * at all, so a lane's bits never depend on its neighbours, on any ISA):
 * - the fast path (mish_forward / mish_backward), for |x| <= 87, where e is a normal float:
 *   float only, one exp (magic-number reduction), one division. The backward evaluates the
 *   bracket as B = 4w + e (2 + 4w + e (4 + e)), w = 1 + x (exact for x <= -1/2), whose terms
 *   near the root are ~8x smaller than those of the form above, by Horner's rule so the
 *   cancelling sum is one fma; den^2 and the numerator are exact float pairs, and the
 *   quotient's residual (exact by fma) and those low parts correct it to first order inside the
 *   final fma with gradOutput (B and den^2 are scaled by 1/4 for x <= 0, exactly, so that both
 *   halves share den^2 = 1 + k). x > 0 uses mish' = 1 + S, S = -e^2 (2 + 4 (1 + e)(e - x)) / den^2
 *   (|S| <= 0.4), so g mish' = fma(g, S, g) is rounded once. A zero gradOutput gets the signed
 *   zero of g mish'(x) explicitly (a per-vector branch).
 * - the general path (mish_forward_general / mish_backward_general): |x| > 87, NaN, and (for
 *   the backward) an infinite or NaN gradOutput. e is split as p * 2^k (vmath.h) so that
 *   results involving e^x for very negative x are scaled once, at the end; the bracket and the
 *   product with grad are evaluated in double, rounded to float once. |x| is clamped where it
 *   multiplies e (160 forward, 200 backward): beyond, every float result is 0 anyway, and +-inf
 *   give the mathematical limits (mish(-inf) = -0, mish(+inf) = +inf, mish'(-inf) = 0,
 *   mish'(+inf) = 1). NaN inputs give NaN. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "engine/simd/vmath.h"
#include "ops/activation/mish/mish_kernel.h"

#define LIMIT 160.0f     // forward: e^-160 underflows every float product with x
#define BWD_LIMIT 200.0f // backward: e^-200 * FLT_MAX still rounds to 0 in float

typedef struct mish_common {
    vm pos; // x > 0
    vf xc;  // x clamped to [-160, 160]
    vf e;   // exp(-|x|), possibly subnormal
    og_vexp split;
} mish_common;

static inline mish_common mish_prepare(vf x) {
    mish_common c;
    c.pos = vgt(x, vset(0.0f));
    c.xc = vmax(vmin(x, vset(LIMIT)), vset(-LIMIT));
    c.split = og_vexp_split(vmax(vsub(vset(0.0f), vabs(x)), vset(-LIMIT)));
    c.e = og_vexp_value(c.split);
    return c;
}

// y = mish(x) and t = tanh(softplus(x)); both share ratio = t (x > 0) or t / e (x <= 0).
static inline void mish_forward_general(vf x, vf *y_out, vf *t_out) {
    mish_common c = mish_prepare(x);
    vf e = c.e, two = vset(2.0f);
    vf num_pos = vfma(two, e, vset(1.0f));       // 1 + 2e
    vf den_pos = vfma(vmul(two, e), e, num_pos); // 1 + 2e + 2e^2
    vf e_plus_2 = vadd(e, two);
    vf den_neg = vfma(e, e_plus_2, two); // e^2 + 2e + 2
    vf ratio = vdiv(vsel(c.pos, num_pos, e_plus_2), vsel(c.pos, den_pos, den_neg));
    vm nan = visnan(x);
    vf y = vsel(c.pos, vmul(x, ratio), og_vexp_scale(c.split, vmul(c.xc, ratio)));
    *y_out = vsel(nan, x, y);
    if (t_out) *t_out = vsel(nan, x, vsel(c.pos, ratio, og_vexp_scale(c.split, ratio)));
}

// dx = g * mish'(x), with one exp and one float division.
//   x > 0:  mish' = (num den + 4 (x e) e (1 + e)) / den^2 in float (no cancellation).
//   x <= 0: mish' = e B / den^2 with B = (e + 2) den + 4 x (1 + e). B cancels near mish's
//           minimum (x ~ -1.19), so B and den^2 are formed in double and rounded once each.
// Then dx = g * q * p * 2^n with q the quotient and e = p 2^n. While the result is a normal
// float and g is not huge, scaling by 2^n is exact in float. Otherwise (e subnormal, a
// subnormal result, |g| >= 2^120) the vector takes the same product in double with one final
// rounding, which gives bit-identical results wherever the float path is exact, so the choice
// per vector never changes a lane's bits on any ISA.
static inline vf mish_backward_general(vf g, vf x) {
    vm pos = vgt(x, vset(0.0f));
    vf xc = vmax(vmin(x, vset(BWD_LIMIT)), vset(-BWD_LIMIT));
    og_vexp split = og_vexp_split(vmax(vsub(vset(0.0f), vabs(x)), vset(-BWD_LIMIT)));
    vf e = og_vexp_value(split); // exact while normal; flushes to 0 far below
    vf one = vset(1.0f), two = vset(2.0f), four = vset(4.0f);
    // x > 0, float
    vf num_pos = vfma(two, e, one);
    vf den_pos = vfma(vmul(two, e), e, num_pos);
    vf a_pos = vfma(num_pos, den_pos, vmul(vmul(vmul(four, vmul(xc, e)), e), vadd(one, e)));
    // x <= 0, double: den = e^2 + 2e + 2, B = e^3 + 4e^2 + 6e + 4 + 4x(1 + e)
    vd ed = vwiden(e), xd = vwiden(xc), oned = vdset(1.0), fourd = vdset(4.0);
    vd den = vdfma(ed, vdadd(ed, vdset(2.0)), vdset(2.0));
    vd bracket = vdfma(vdfma(vdfma(vdadd(ed, fourd), ed, vdset(6.0)), ed, fourd), oned,
                       vdmul(vdmul(fourd, xd), vdadd(oned, ed)));
    vf q = vdiv(vsel(pos, a_pos, vnarrow(bracket)),
                vsel(pos, vmul(den_pos, den_pos), vnarrow(vdmul(den, den))));
    // mish'(-inf) is exactly 0 (the clamp would leave a tiny e^-200), so g = inf gives NaN
    vf qp = vsel(veq(x, vset(-INFINITY)), vset(0.0f), vsel(pos, q, vmul(q, split.p)));
    vf v = vmul(g, qp);
    vf dx = vsel(pos, v, vmul(v, vpow2i(vmax(split.n, vset(-126.0f)))));
    vm extreme =
        vmandnot(pos, vmor(vmor(vlt(split.n, vset(-126.0f)), vlt(vabs(dx), vset(0x1p-126f))),
                           vgt(vabs(g), vset(0x1p120f))));
    if (vany(extreme)) {
        vd scale = vdpow2i(vsel(pos, vset(0.0f), split.n));
        dx = vnarrow(vdmul(vdmul(vwiden(g), vwiden(qp)), scale));
    }
    return vsel(visnan(x), x, dx);
}

// ---------------------------------------------------------------------------------------------
// Fast paths, for |x| <= 87 (e = exp(-|x|) is a normal float): lanes beyond or NaN take the
// general forms above, selected per lane, so a lane's bits never depend on its neighbours.
// og_vbelow_or_nan(-|x|, -87) finds those lanes with one compare.
#define FAST_MIN (-87.0f)
#define EXP_MAGIC (0x1.8p23f + 127.0f)

// e^v for v in [-87, 0]: n = round(v / ln2) by the magic-number addition (the fma rounds the
// exact product once), 2^n from the bits of the same sum, e^r by og_vexp_poly.
static inline vf mish_exp_fast(vf v) {
    vf k = vfma(v, vset(1.44269504088896341f), vset(EXP_MAGIC));
    vf n = vsub(k, vset(EXP_MAGIC));
    return vmul(og_vexp_poly(og_vexp_r(v, n)), vbits_shl23(k));
}

// y = mish(x) and t = tanh(softplus(x)) = num / den, y = x t: for x <= 0, num = e^2 + 2e is
// rounded once (no separate rounding of e + 2) and den = num + 2.
static inline void mish_forward(vf x, vf *y_out, vf *t_out) {
    vf v = vnegabs(x);
    vm rare = og_vbelow_or_nan(v, vset(FAST_MIN));
    vm pos = vgt(x, vset(0.0f));
    vf e = mish_exp_fast(v);
    vf te = vadd(e, e);
    vf num_pos = vadd(te, vset(1.0f));      // 1 + 2e
    vf den_pos = vfma(te, e, num_pos);      // 1 + 2e + 2e^2
    vf num_neg = vfma(e, e, te);            // e^2 + 2e
    vf den_neg = vadd(num_neg, vset(2.0f)); // e^2 + 2e + 2
    vf t = vdiv(vsel(pos, num_pos, num_neg), vsel(pos, den_pos, den_neg));
    vf y = vmul(x, t);
    if (vany(rare)) {
        vf yg, tg;
        mish_forward_general(x, &yg, &tg);
        y = vsel(rare, yg, y);
        t = vsel(rare, tg, t);
    }
    *y_out = y;
    if (t_out) *t_out = t;
}

// dx = g * mish'(x) = g * num / D^2 (see the top of the file), float only. Error terms left:
// e's (<= ~0.6 ulp, amplified up to ~1.7x near x = -1), the rounding of B (and of S for x > 0,
// weighted by |S| / mish' <= 0.67), the final rounding; the pairs below remove the roundings of
// D, D^2, the numerator and the division. Measured: <= 4.1 ulp (tests/kernel).
static inline vf mish_backward(vf g, vf x) {
    vf v = vnegabs(x);
    // g * 0 is NaN for an infinite (or NaN) g: such lanes take the general path too
    vm rare = og_vbelow_or_nan(vfma(g, vset(0.0f), v), vset(FAST_MIN));
    vm pos = vgt(x, vset(0.0f));
    vf e = mish_exp_fast(v);
    vf one = vset(1.0f), four = vset(4.0f);
    vf te = vadd(e, e);
    // D = c (1 + u), c = 1, u = 2e (1 + e) (x > 0) or c = 2, u = e (1 + e/2) (x <= 0);
    // (D / c)^2 = 1 + k = d2 + d2l exactly (k rounded once)
    vf u = vfma(vsel(pos, te, vmul(e, vset(0.5f))), e, vsel(pos, te, e));
    vf k = vfma(u, u, vadd(u, u));
    vf d2 = vadd(k, one);
    vf d2l = vsub(k, vsub(d2, one));
    // x <= 0: B/4 = w + e (w + 1/2 + e (1 + e/4)), w = 1 + x
    vf w = vadd(one, x);
    vf b = vfma(e, vfma(e, vfma(e, vset(0.25f), one), vadd(w, vset(0.5f))), w);
    // x > 0: mish' = 1 + S, S = -e^2 (2 + 4 (1 + e)(e - x)) / D^2 = e^2 cn / D^2
    vf cn = vfma(vfma(e, four, four), vsub(x, e), vset(-2.0f));
    // numerator f1 f2 = num + numl exactly
    vf f1 = vsel(pos, vmul(e, e), e), f2 = vsel(pos, cn, b);
    vf num = vmul(f1, f2);
    vf numl = vfmsub(f1, f2, num);
    vf q = vdiv(num, d2);
    // num + numl = (q + dq)(d2 + d2l) to first order: dq = (res + numl - q d2l) / d2, where a
    // bit-trick reciprocal (relative error <= 0.051) is enough for a term of ~2^-23 q
    vf res = vfnmadd(q, d2, num); // num - q d2, exact
    vf corr = vfnmadd(q, d2l, vadd(res, numl));
    vf dq = vmul(corr, vbits_rsub(d2, 0x7EF311C2));
    // x <= 0: g (q + dq) rounded once; x > 0: g (1 + S) = fma(g, S, g) (dq dropped: |S| is small)
    vf dx = vfma(g, q, vsel(pos, g, vmul(g, dq)));
    vm zero = veq(g, vset(0.0f));
    if (vany(vmor(rare, zero))) {
        // g = +-0: the sum of two zeros above may lose the sign of g mish'(x) (> 0 for x > 0)
        dx = vsel(zero, vmul(g, vsel(pos, one, q)), dx);
        if (vany(rare)) dx = vsel(rare, mish_backward_general(g, x), dx);
    }
    return dx;
}

OG_EW_KERNEL3(og_mish_fwd, og_no_consts, og_no_setup, 1, 1, {
    vf y;
    mish_forward(vload(ins[0]), &y, NULL);
    vstore(outs[0], y);
})

void OG_FN(og_mish_fwd_tanhx)(size_t n, const float *const *in, float *const *out,
                              const void *params) {
    (void)params;
    OG_EW_LOOP(n, 1, in, 2, out, {
        vf y, t;
        mish_forward(vload(ins[0]), &y, &t);
        vstore(outs[0], y);
        vstore(outs[1], t);
    });
}

OG_EW_KERNEL3(og_mish_bwd, og_no_consts, og_no_setup, 2, 1,
              { vstore(outs[0], mish_backward(vload(ins[0]), vload(ins[1]))); })

// dx = g (t + x sigmoid(x) (1 - t^2)) with the caller's t, in double: t and the correction can
// cancel, and g can be huge where the correction is tiny. x sigmoid(x) is x / (1 + e) for x > 0
// and x e / (1 + e) otherwise (0 in fp32 below -200). A zero (1 - t^2) makes the correction 0
// even for x = +inf.
void OG_FN(og_mish_bwd_tanhx)(size_t n, const float *const *in, float *const *out,
                              const void *params) {
    (void)params;
    OG_EW_LOOP(n, 3, in, 1, out, {
        vf g = vload(ins[0]), x = vload(ins[1]), t = vload(ins[2]);
        vm pos = vgt(x, vset(0.0f));
        og_vexp split = og_vexp_split(vmax(vsub(vset(0.0f), vabs(x)), vset(-BWD_LIMIT)));
        vd ed = og_vexp_double(split);
        vd r = og_vrecip_double(vdadd(vdset(1.0), ed));
        vd xd = vwiden(vmax(x, vset(-BWD_LIMIT)));
        vd x_sig = vdmul(vdsel(pos, xd, vdmul(xd, ed)), r);
        x_sig = vdsel(veq(x, vset(-INFINITY)), vdset(0.0), x_sig); // x sigmoid(x) -> 0 exactly
        vd td = vwiden(t);
        vd one_minus_t2 = vdfma(vdmul(td, vdset(-1.0)), td, vdset(1.0)); // exact
        vm t_is_one = veq(vfma(vsub(vset(0.0f), t), t, vset(1.0f)), vset(0.0f));
        vd corr = vdsel(t_is_one, vdset(0.0), vdmul(x_sig, one_minus_t2));
        vf dx = vnarrow(vdmul(vwiden(g), vdadd(td, corr)));
        vstore(outs[0], vsel(visnan(x), x, dx));
    });
}

// ---- float64. t = tanh(softplus(x)) with softplus(x) = max(x, 0) + log1p(e^-|x|); the backward
// mish' = t + x sigmoid(x) sech^2(sp), sech^2(sp) = 4q / (1 + q)^2 with q = e^(-2 sp) (no
// cancellation in 1 - t^2). Limits: mish(-inf) = -0, mish'(-inf) = 0, mish'(+inf) = 1; NaN
// propagates.
static inline double mish64_sp(double x) { return (x > 0 ? x : 0.0) + log1p(exp(-fabs(x))); }
static inline double mish64_grad(double x) {
    if (isinf(x)) return x > 0 ? 1.0 : 0.0;
    double sp = mish64_sp(x), q = exp(-2 * sp);
    return tanh(sp) + x * og_sigmoid64(x) * (4 * q / ((1 + q) * (1 + q)));
}
static inline double mish64(double x, double *t) {
    *t = tanh(mish64_sp(x));
    return x == -INFINITY ? -0.0 : x * *t;
}
OG_EW_KERNEL64(og_mish_fwd, void, {
    double t;
    Y64(0) = mish64(X64(0), &t);
})
OG_EW_KERNEL64(og_mish_fwd_tanhx, void, {
    double t, y = mish64(X64(0), &t);
    Y64(0) = y;
    Y64(1) = t;
})
OG_EW_KERNEL64(og_mish_bwd, void, {
    double g = X64(0), x = X64(1);
    Y64(0) = isnan(x) ? x : g * mish64_grad(x);
})
// with the caller's t: dx = g (t + x sigmoid(x) (1 - t)(1 + t)); x sigmoid(x) -> 0 at -inf
OG_EW_KERNEL64(og_mish_bwd_tanhx, void, {
    double g = X64(0), x = X64(1), t = X64(2);
    double x_sig = x == -INFINITY ? 0.0 : x * og_sigmoid64(x);
    double corr = t == 1 || t == -1 ? 0.0 : x_sig * ((1 - t) * (1 + t));
    Y64(0) = isnan(x) ? x : g * (t + corr);
})
