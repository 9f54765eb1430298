/* Elu forward and backward, written once against vec.h and compiled per ISA.
 *
 * The x <= 0 pieces are evaluated in double and rounded to float once (piecewise_math.h):
 *   u = x * inputScale          exact in double (a product of two floats);
 *   expm1(u), e^u               2^n em + (2^n - 1) and 2^n em + 2^n with em = expm1(r), |r| < 0.35,
 *                               from a degree-11 polynomial: no cancellation near u = 0 and no
 *                               error growth with |u| (the float rounding of u alone would cost
 *                               |u| 2^-24 relative, 80 ulps at u = -80);
 *   y = (alpha scale) expm1(u)  alpha * scale exact in double;
 *   dx = g (inputScale alpha scale) e^u, or g inputScale (y + alpha scale) from the result.
 * The x > 0 pieces are one float multiply (scale x, g scale): correctly rounded.
 * So every fp32 result is correctly rounded except within ~2^-46 relative of a midpoint.
 * Special values (PyTorch's formulas): NaN x fails x > 0 and gives NaN (forward and backward
 * from the input); elu(+-0) = (+-0 * inputScale) * alpha * scale keeps the sign of zero as
 * expm1 does; elu(-inf) = -alpha * scale; elu'(-inf) = 0 (so g = inf gives NaN). The backward
 * from the result selects on y > 0 and is finite for every finite y.
 *
 * Fast path (forward and backward from the input). The double-precision form above runs only
 * for the lanes of a vector that need it; elsewhere everything is float, with float-float pairs
 * where a rounding would cost accuracy:
 *   u = uh + ul = x inputScale exactly (ul = fma(x, is, -uh)); n = round(uh / ln2);
 *   r = uh - n ln2_hi exactly (ln2_hi has 15 bits, |n| <= 126), d = ul - n ln2_lo (|d| < 2^-12),
 *   r' = r + d rounded and dr = its error (Fast2Sum), so u = n ln2 + r' + dr to ~2^-46;
 *   e^r' = 1 + r' + r'^2/2 + r'^3 Q(r') (Q: Taylor, degree 5; truncation < 2^-30 relative),
 *   with r'^2/2 rounded once (its error is below 2^-28 of the sum) and the leading sums kept
 *   as Fast2Sum pairs; dr enters to first order.
 *   forward:   expm1(u) = 2^n e^r' - 1 (n < 0: Fast2Sum of -1 and the exactly scaled pair;
 *              n = 0: expm1(r') itself, with no cancellation), then
 *              y = fma(nch, Eh, fma(nch, El, ncl Eh)), nc = alpha scale = nch + ncl.
 *   backward:  dx = fma(g, Kh 2^n, g Kl 2^n) with gc e^r' = Kh + Kl (gc = inputScale alpha scale
 *              = gch + gcl); where g is +-0, +-inf or NaN, g ((Kh + Kl) 2^n) (the signs and
 *              infinities of the product, where the pair's sum could give +0 or inf - inf).
 *   One final rounding of a value accurate to ~2^-26 relative: at most 0.65 ulp measured
 *   (tests/kernel, which asserts 1 ulp), where the double form is within 0.5 + 2^-46.
 *   The lanes left to the double form ("rare"): x <= 0 with u outside [-64, -2^-100/...]
 *   (forward: u = 0 with x != 0 and results near the subnormal range; backward: u so low that
 *   gc e^u < 2^-100, and results below 2^-100 of a nonzero finite g), NaN and -inf; and whole
 *   calls with inputScale <= 0 (u >= 0 for x <= 0) or coefficients that are not moderate
 *   floats (|nc|, |gc| outside [2^-60, 2^100], inf, NaN). x = +-0 in the forward takes
 *   (x is) nc, as the double form. The default attributes (1, 1, 1) skip the products with
 *   inputScale and the coefficient (a separate instance of the loop); the forward with them
 *   has no rare lanes at all (elu_fwd_unit: about 36 operations per vector). */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/activation/elu/elu_kernel.h"
#include "ops/activation/piecewise_math.h"

static inline vf elu_fwd_general(vf x, vd is, vd negcoef, vf scale) {
    vf zero = vset(0.0f);
    vd u = vdmul(vwiden(x), is);
    vd em1 = pw_dexp_expm1(pw_dexp_split(u));
    em1 = vdsel(veq(x, zero), u, em1); // expm1(+-0) = +-0
    vf neg = vnarrow(vdmul(em1, negcoef));
    return vsel(vgt(x, zero), vmul(x, scale), neg);
}

static inline vf elu_bwd_general(vf g, vf x, vd is, vd coef, vf scale) {
    vd e = pw_dexp_exp(pw_dexp_split(vdmul(vwiden(x), is)));
    vf neg = vnarrow(vdmul(vdmul(vwiden(g), coef), e));
    return vsel(vgt(x, vset(0.0f)), vmul(g, scale), neg);
}

// ---- the fast path

#define ELU_LOG2E 1.44269504088896341f
#define ELU_LN2_HI 0.693145751953125f      // 15 significant bits: n ln2_hi exact for |n| < 2^9
#define ELU_LN2_LO 1.42860676533018704e-6f // ln2 - ELU_LN2_HI
#define ELU_U_MIN (-64.0f)                 // 2^n >= 2^-93: the scaled low parts stay normal

/// The reduction u = uh + ul = n ln2 + r + dr (uh already clamped), and the pieces of
/// e^r = 1 + r + hh + t3 (hh = r^2/2 rounded, t3 = r^3 Q(r)).
typedef struct elu_red {
    vf n, r, dr, hh, t3;
} elu_red;

static inline elu_red elu_reduce(vf uh, vf ul) {
    elu_red o;
    o.n = vround(vmul(uh, vset(ELU_LOG2E)));
    vf r1 = vfma(o.n, vset(-ELU_LN2_HI), uh); // exact
    vf d = vfma(o.n, vset(-ELU_LN2_LO), ul);  // |d| < 2^-12
    o.r = vadd(r1, d);
    o.dr = vsub(d, vsub(o.r, r1)); // r1 + d = r + dr (to 2^-36 where |r1| < |d|)
    vf r = o.r;
    vf q = vset(4.960317460e-5f);          // 2 / 8!
    q = vfma(q, r, vset(3.968253968e-4f)); // 2 / 7!
    q = vfma(q, r, vset(2.777777778e-3f)); // 2 / 6!
    q = vfma(q, r, vset(1.666666667e-2f)); // 2 / 5!
    q = vfma(q, r, vset(8.333333333e-2f)); // 2 / 4!
    q = vfma(q, r, vset(3.333333333e-1f)); // 2 / 3!
    o.hh = vmul(r, vmul(r, vset(0.5f)));
    o.t3 = vmul(o.hh, vmul(r, q)); // (r^2/2) (2 r Q) = r^3 (1/6 + r/24 + ...)
    return o;
}

/// The forward's negative piece nc expm1(u) for lanes with u in [-64, -tiny] (others: any value);
/// unit: nc = 1 (nch = 1, ncl = 0).
static inline vf elu_fwd_neg(vf uh, vf ul, vf nch, vf ncl, const int unit) {
    vf one = vset(1.0f);
    elu_red o = elu_reduce(uh, ul);
    // expm1(r + dr) = s + sl: r + hh as a Fast2Sum pair (|hh| <= |r|), t3 and dr (1 + s) added
    vf s = vadd(o.r, o.hh);
    vf sl = vadd(vsub(o.hh, vsub(s, o.r)), o.t3);
    sl = vfma(o.dr, s, vadd(sl, o.dr));
    // n < 0: 2^n (1 + s + sl) - 1, 1 + s a Fast2Sum pair (|s| < 1/2), scaled exactly, then -1
    vf fh = vadd(one, s);
    vf fl = vadd(vadd(vsub(one, fh), s), sl);
    vf pw = vpow2i(o.n);
    vf ph = vmul(fh, pw), pl = vmul(fl, pw);
    vf eh = vsub(ph, one); // Fast2Sum(-1, ph): ph <= 1.42
    vf el = vadd(vsub(ph, vadd(eh, one)), pl);
    vm n0 = veq(o.n, vset(0.0f));
    eh = vsel(n0, s, eh);
    el = vsel(n0, sl, el);
    return unit ? vadd(eh, el) : vfma(nch, eh, vfma(nch, el, vmul(ncl, eh)));
}

/// The backward's negative piece g gc e^u for lanes with u in [ulo, 0] (others: any value);
/// *tiny marks the lanes whose result is below 2^-100 (for the double form).
static inline vf elu_bwd_neg(vf g, vf uh, vf ul, vf gch, vf gcl, vm *tiny, const int unit) {
    vf one = vset(1.0f), zero = vset(0.0f);
    elu_red o = elu_reduce(uh, ul);
    // e^(r + dr) = a1 + b: 1 + r a Fast2Sum pair (|r| < 1/2), the rest and dr a1 added to b
    vf a1 = vadd(one, o.r);
    vf b = vadd(vsub(o.r, vsub(a1, one)), vadd(o.hh, o.t3));
    b = vfma(o.dr, a1, b);
    // gc (a1 + b) = kh + kl, then scaled exactly by 2^n (kh >= 2^-101 by the choice of ulo)
    vf kh = unit ? a1 : vmul(gch, a1);
    vf kl = unit ? b : vadd(vfma(gch, a1, vsub(zero, kh)), vfma(gch, b, vmul(gcl, a1)));
    vf pw = vpow2i(o.n);
    kh = vmul(kh, pw), kl = vmul(kl, pw);
    vf dx = vfma(g, kh, vmul(g, kl));
    // g = +-0, +-inf, NaN: the plain product g (kh + kl) (the pair's sum can lose the sign of
    // zero, or give inf - inf); below 2^-100, g kl would round in the subnormal range: such
    // results (of a nonzero finite g) are left to the caller
    vm plain = vmor(veq(g, zero), vne(vmul(g, zero), zero));
    *tiny = vmandnot(plain, vlt(vabs(dx), vset(0x1p-100f)));
    return vsel(plain, vmul(g, vadd(kh, kl)), dx);
}

/// The forward with the default attributes (inputScale, alpha and scale all 1): y = x for x >= 0
/// and NaN, expm1(x) below, with no rare lanes. x is clamped to [-16.9, 0], where n =
/// round(x / ln2) >= -24 keeps 2^n - 1 exact: expm1(x) = (2^n - 1) + 2^n (s + sl), the first
/// two terms a Fast2Sum pair (|2^n - 1| >= 1/2 >= |2^n s| for n < 0; n = 0: s itself, no
/// cancellation), s + sl = expm1(r + dr) as in elu_fwd_neg. Below the clamp every result
/// rounds to -0x1.fffffep-1 down to -0x1.154244p+4 (-25 ln2 rounded up: e^x > 2^-25), and
/// to -1 beyond (-inf included). Negative x of tiny magnitude need no special case: y = x
/// (some terms are then subnormal, which costs time, not accuracy).
static inline vf elu_fwd_unit(vf x) {
    vf zero = vset(0.0f), one = vset(1.0f);
    vf uc = vmin(vmax(x, vset(-16.9f)), zero); // NaN -> -16.9
    vf kt = vfma(uc, vset(ELU_LOG2E), vset(0x1.8p23f + 127.0f));
    vf n = vsub(kt, vset(0x1.8p23f + 127.0f)); // round(uc / ln2), in [-24, 0]
    vf pw = vbits_shl23(kt);                   // 2^n
    vf r1 = vfma(n, vset(-ELU_LN2_HI), uc);    // exact
    vf d = vmul(n, vset(-ELU_LN2_LO));         // |d| < 2^-14
    vf r = vadd(r1, d);
    vf dr = vsub(d, vsub(r, r1)); // r1 + d = r + dr
    vf q = vset(4.960317460e-5f); // 2 / 8!
    q = vfma(q, r, vset(3.968253968e-4f));
    q = vfma(q, r, vset(2.777777778e-3f));
    q = vfma(q, r, vset(1.666666667e-2f));
    q = vfma(q, r, vset(8.333333333e-2f));
    q = vfma(q, r, vset(3.333333333e-1f));
    vf hh = vmul(r, vmul(r, vset(0.5f)));
    vf t3 = vmul(hh, vmul(r, q));
    // expm1(r + dr) = s + sl
    vf s = vadd(r, hh);
    vf sl = vadd(vsub(hh, vsub(s, r)), t3);
    sl = vfma(dr, s, vadd(sl, dr));
    // (2^n - 1) + 2^n s = yh + yl exactly, then + 2^n sl
    vf a = vsub(pw, one);
    vf b = vmul(pw, s);
    vf yh = vadd(a, b);
    vf yl = vadd(vsub(a, yh), b);
    vf y = vadd(yh, vfma(pw, sl, yl));
    y = vsel(vlt(x, vset(-0x1.154244p+4f)), vset(-1.0f), y);
    return vsel(vlt(x, zero), y, x);
}

/// Coefficient c (double) as a float pair ch + cl, if it is a moderate float; else 0.
static int elu_split(double c, float *ch, float *cl) {
    float h = (float)c;
    double a = fabs((double)h);
    if (!(a >= 0x1p-60 && a <= 0x1p100)) return 0;
    *ch = h;
    *cl = (float)(c - (double)h);
    return 1;
}

// The fast path's constants: the coefficient (nc or gc) as a float pair ch + cl, inputScale,
// scale, the u range of the fast lanes; and those of the double form.
typedef struct elu_fast_args {
    vf ch, cl, isf, scale, ulo, uhi;
    vd is, coef;
} elu_fast_args;

// unit: inputScale = 1 and the coefficient is 1 (u = x exactly, no products with them)
static inline vf elu_fwd_fast(vf x, const elu_fast_args *a, const int unit) {
    vf zero = vset(0.0f);
    vf uh = unit ? x : vmul(x, a->isf);
    vf ul = unit ? zero : vfma(x, a->isf, vsub(zero, uh));
    vf uc = vmax(vmin(uh, a->uhi), a->ulo); // NaN -> ulo
    vm pos = vgt(x, zero), x0 = veq(x, zero);
    vf y = elu_fwd_neg(uc, ul, a->ch, a->cl, unit);
    y = vsel(x0, unit ? uh : vmul(uh, a->ch), y); // (x is) nc: expm1(+-0) = +-0
    y = vsel(pos, vmul(x, a->scale), y);
    vm rare = vmandnot(vmor(pos, x0), vne(uc, uh));
    if (vany(rare)) y = vsel(rare, elu_fwd_general(x, a->is, a->coef, a->scale), y);
    return y;
}

static inline vf elu_bwd_fast(vf g, vf x, const elu_fast_args *a, const int unit) {
    vf zero = vset(0.0f);
    vf uh = unit ? x : vmul(x, a->isf);
    vf ul = unit ? zero : vfma(x, a->isf, vsub(zero, uh));
    vf uc = vmax(vmin(zero, uh), a->ulo); // NaN -> ulo (keeps -0)
    vm pos = vgt(x, zero), tiny;
    vf dx = vsel(pos, vmul(g, a->scale), elu_bwd_neg(g, uc, ul, a->ch, a->cl, &tiny, unit));
    vm rare = vmandnot(pos, vmor(vne(uc, uh), tiny));
    if (vany(rare)) dx = vsel(rare, elu_bwd_general(g, x, a->is, a->coef, a->scale), dx);
    return dx;
}

#define ELU_FWD(LOOP)                                                                              \
    const og_elu_params *prm = p;                                                                  \
    vf scale = vset(prm->scale), zero = vset(0.0f);                                                \
    if (prm->saturate) {                                                                           \
        vf sat = vset(prm->saturated);                                                             \
        LOOP(1, 1, {                                                                               \
            vf x = vload(ins[0]);                                                                  \
            vstore(outs[0], vsel(vmor(vgt(x, zero), visnan(x)), vmul(x, scale), sat));             \
        });                                                                                        \
        return;                                                                                    \
    }                                                                                              \
    vd is = vdset(prm->input_scale), negcoef = vdset(prm->negcoef);                                \
    float nch_s, ncl_s;                                                                            \
    if (!elu_split(prm->negcoef, &nch_s, &ncl_s) || !(prm->input_scale > 0)) {                     \
        LOOP(1, 1, { vstore(outs[0], elu_fwd_general(vload(ins[0]), is, negcoef, scale)); });      \
        return;                                                                                    \
    }                                                                                              \
    /* fast lanes: u in [-64, -tiny], tiny such that |nc| tiny >= 2^-100 (results stay normal) */  \
    double tiny = 0x1p-100 / fmin(fabs((double)nch_s), 1.0);                                       \
    elu_fast_args a = {.ch = vset(nch_s),                                                          \
                       .cl = vset(ncl_s),                                                          \
                       .isf = vset(prm->input_scale_f),                                            \
                       .scale = scale,                                                             \
                       .ulo = vset(ELU_U_MIN),                                                     \
                       .uhi = vset(-(float)tiny),                                                  \
                       .is = is,                                                                   \
                       .coef = negcoef};                                                           \
    if (prm->input_scale == 1.0 && prm->negcoef == 1.0 && prm->scale == 1.0f) /* the defaults */   \
        LOOP(1, 1, { vstore(outs[0], elu_fwd_unit(vload(ins[0]))); });                             \
    else if (prm->input_scale == 1.0 && prm->negcoef == 1.0)                                       \
        LOOP(1, 1, { vstore(outs[0], elu_fwd_fast(vload(ins[0]), &a, 1)); });                      \
    else                                                                                           \
        LOOP(1, 1, { vstore(outs[0], elu_fwd_fast(vload(ins[0]), &a, 0)); });
OG_EW_KERNEL3_FN(og_elu_fwd, ELU_FWD)

#define ELU_BWD(LOOP)                                                                              \
    const og_elu_params *prm = p;                                                                  \
    vf scale = vset(prm->scale), zero = vset(0.0f);                                                \
    vd is = vdset(prm->input_scale), coef = vdset(prm->grad_coef);                                 \
    float gch_s, gcl_s;                                                                            \
    if (!elu_split(prm->grad_coef, &gch_s, &gcl_s) || !(prm->input_scale > 0)) {                   \
        LOOP(2, 1, {                                                                               \
            vstore(outs[0], elu_bwd_general(vload(ins[0]), vload(ins[1]), is, coef, scale));       \
        });                                                                                        \
        return;                                                                                    \
    }                                                                                              \
    /* fast lanes: u in [ulo, 0] with |gc| e^ulo >= 2^-100: |gc| >= 2^(k-1), e^u >= 2^(-99-k) */   \
    int k;                                                                                         \
    frexpf(gch_s, &k);                                                                             \
    float ulo_s = fmaxf(ELU_U_MIN, (float)(-99 - k) * 0.6931472f + 0.25f);                         \
    elu_fast_args a = {.ch = vset(gch_s),                                                          \
                       .cl = vset(gcl_s),                                                          \
                       .isf = vset(prm->input_scale_f),                                            \
                       .scale = scale,                                                             \
                       .ulo = vset(ulo_s),                                                         \
                       .uhi = zero,                                                                \
                       .is = is,                                                                   \
                       .coef = coef};                                                              \
    if (prm->input_scale == 1.0 && prm->grad_coef == 1.0) /* the default attributes */             \
        LOOP(2, 1, { vstore(outs[0], elu_bwd_fast(vload(ins[0]), vload(ins[1]), &a, 1)); });       \
    else                                                                                           \
        LOOP(2, 1, { vstore(outs[0], elu_bwd_fast(vload(ins[0]), vload(ins[1]), &a, 0)); });
OG_EW_KERNEL3_FN(og_elu_bwd, ELU_BWD)

#define ELU_BWD_RESULT(LOOP)                                                                       \
    const og_elu_params *prm = p;                                                                  \
    vf scale = vset(prm->scale), zero = vset(0.0f);                                                \
    vd is = vdset(prm->input_scale), negcoef = vdset(prm->negcoef);                                \
    LOOP(2, 1, {                                                                                   \
        vf g = vload(ins[0]), y = vload(ins[1]);                                                   \
        vf neg = vnarrow(vdmul(vdmul(vwiden(g), is), vdadd(vwiden(y), negcoef)));                  \
        vstore(outs[0], vsel(vgt(y, zero), vmul(g, scale), neg));                                  \
    });
OG_EW_KERNEL3_FN(og_elu_bwd_result, ELU_BWD_RESULT)

// ---- float64 (the float kernels' formulas and limits: elu(-inf) = -alpha scale, elu'(-inf) = 0,
// NaN propagates; saturate mode as there)
OG_EW_KERNEL64(og_elu_fwd, og_elu_params, {
    double x = X64(0);
    if (prm->saturate)
        Y64(0) = x > 0 || isnan(x) ? prm->scale * x : (double)prm->saturated;
    else
        Y64(0) = x > 0 ? prm->scale * x : prm->negcoef * expm1(x * prm->input_scale);
})
OG_EW_KERNEL64(og_elu_bwd, og_elu_params, {
    double g = X64(0), x = X64(1);
    Y64(0) = x > 0 ? g * prm->scale : g * (prm->grad_coef * exp(x * prm->input_scale));
})
OG_EW_KERNEL64(og_elu_bwd_result, og_elu_params, {
    double g = X64(0), y = X64(1);
    Y64(0) = y > 0 ? g * prm->scale : g * (prm->input_scale * (y + prm->negcoef));
})
