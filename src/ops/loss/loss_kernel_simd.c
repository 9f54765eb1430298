/* Loss kernels (loss_kernel.h), written once against vec.h and compiled per ISA. Every operation
 * is IEEE-exact the same way in every build, so the ISA levels give the same bits.
 *
 * log (BCE): x = m 2^k with m in [sqrt(1/2), sqrt 2), log x = k ln2 + log1p(m - 1), m - 1 exact,
 * log1p by the Cephes logf polynomial (about 1 ulp); the split of x into m and k is the one
 * ISA-specific step (the exponent bits, read with each ISA's integer operations: exact).
 * Subnormal x is scaled by 2^24 first; log 0 = -inf, log of a negative or NaN = NaN.
 * log(1 - x) is log(u) + c / u with u = 1 - x rounded and c = (1 - u) - x its exact error
 * (Fast2Sum, |x| <= 1): accurate for small x too, where log(u) alone would lose the bits of x.
 * log1p(e^-|x|) (BCE with logits) is e L(e) with e = e^-|x| (og_vexp_split, accurate where e is
 * subnormal) and og_vlog1p_ratio. sigmoid(x) = 1 / (1 + e) for x >= 0, e / (1 + e) below. */
#include "engine/simd/vmath.h"
#include "ops/loss/loss_kernel.h"

#if defined(OG_ISA_AVX512)
// m in [1, 2) and k with x = m 2^k, x a positive normal float (exact): the exponent bits, as the
// AVX2 and scalar builds read them
static inline vf loss_frexp(vf x, vf *k) {
    __m512i b = _mm512_castps_si512(x);
    *k = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(b, 23), _mm512_set1_epi32(127)));
    __m512i m = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi32(0x007fffff)),
                                _mm512_set1_epi32(0x3f800000));
    return _mm512_castsi512_ps(m);
}
#elif defined(OG_ISA_AVX2)
static inline vf loss_frexp(vf x, vf *k) {
    __m256i b = _mm256_castps_si256(x);
    *k = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(127)));
    __m256i m = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x007fffff)),
                                _mm256_set1_epi32(0x3f800000));
    return _mm256_castsi256_ps(m);
}
#else
static inline vf loss_frexp(vf x, vf *k) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    *k = (float)((int32_t)(b >> 23) - 127);
    b = (b & 0x007fffffu) | 0x3f800000u;
    float m;
    memcpy(&m, &b, sizeof m);
    return m;
}
#endif

// log x for every float x >= 0 (see the header comment); -inf at 0, NaN below 0 or for NaN.
static inline vf loss_vlog(vf x) {
    vf tiny = vset(0x1p-126f);
    vm sub = vlt(x, tiny);
    vf xs = vsel(sub, vmul(x, vset(0x1p24f)), x);
    vf k;
    vf m = loss_frexp(vsel(vlt(xs, tiny), vset(1.0f), xs), &k); // zero / negative: any normal
    k = vsub(k, vsel(sub, vset(24.0f), vset(0.0f)));
    vm big = vgt(m, vset(1.41421356237f));
    m = vsel(big, vmul(m, vset(0.5f)), m);
    k = vadd(k, vsel(big, vset(1.0f), vset(0.0f)));
    vf f = vsub(m, vset(1.0f));
    vf z = vmul(f, f);
    vf y = vset(7.0376836292e-2f);
    y = vfma(y, f, vset(-1.1514610310e-1f));
    y = vfma(y, f, vset(1.1676998740e-1f));
    y = vfma(y, f, vset(-1.2420140846e-1f));
    y = vfma(y, f, vset(1.4249322787e-1f));
    y = vfma(y, f, vset(-1.6668057665e-1f));
    y = vfma(y, f, vset(2.0000714765e-1f));
    y = vfma(y, f, vset(-2.4999993993e-1f));
    y = vfma(y, f, vset(3.3333331174e-1f));
    y = vmul(vmul(y, f), z);
    y = vfma(k, vset(-2.12194440e-4f), y);
    y = vfma(z, vset(-0.5f), y);
    vf r = vadd(f, y);
    r = vfma(k, vset(0.693359375f), r);
    r = vsel(veq(x, vset(0.0f)), vset(-INFINITY), r);
    r = vsel(visinf(x), x, r);
    return vsel(vmor(vlt(x, vset(0.0f)), visnan(x)), vset(NAN), r);
}

// log(1 - x) for x in [0, 1] (NaN outside as log does for 1 - x < 0; -inf at 1)
static inline vf loss_vlog1m(vf x) {
    vf one = vset(1.0f);
    vf u = vsub(one, x);
    vf c = vsub(vsub(one, u), x); // 1 - x = u + c exactly
    vf l = loss_vlog(u);
    return vsel(veq(u, vset(0.0f)), l, vadd(l, vdiv(c, u)));
}

// max(l, -100) keeping NaN (vec.h's vmax returns its second operand when either is NaN)
static inline vf clamp100(vf l) { return vmax(vset(-100.0f), l); }

static inline vf vsign(vf d) {
    vf s = vsel(vgt(d, vset(0.0f)), vset(1.0f), vsel(vlt(d, vset(0.0f)), vset(-1.0f), vset(0.0f)));
    return vsel(visnan(d), d, s);
}

// e = e^-|x| (NaN: any value, the formulas propagate x)
static inline vf exp_neg_abs(vf x) {
    return og_vexp_value(og_vexp_split(vmax(vnegabs(x), vset(-200.0f))));
}

// ---- MSE

void OG_FN(og_mse_fwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    OG_EW_LOOP(n, 2, in, 1, out, {
        vf d = vsub(vload(ins[0]), vload(ins[1]));
        vstore(outs[0], vmul(d, d));
    });
}

void OG_FN(og_mse_bwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_loss_params *lp = p;
    vf s2 = vset(2.0f * lp->scale);
    OG_EW_LOOP(n, 3, in, 1, out, {
        vf d = vsub(vload(ins[1]), vload(ins[2]));
        vstore(outs[0], vmul(vmul(s2, d), vload(ins[0])));
    });
}

// ---- L1

void OG_FN(og_l1_fwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    OG_EW_LOOP(n, 2, in, 1, out, { vstore(outs[0], vabs(vsub(vload(ins[0]), vload(ins[1])))); });
}

void OG_FN(og_l1_bwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_loss_params *lp = p;
    vf s = vset(lp->scale);
    OG_EW_LOOP(n, 3, in, 1, out, {
        vf d = vsub(vload(ins[1]), vload(ins[2]));
        vstore(outs[0], vmul(vmul(vload(ins[0]), s), vsign(d)));
    });
}

// ---- SmoothL1 (beta = 0: |d| < 0 never holds, the L1 branch runs)
void OG_FN(og_sl1_fwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_loss_params *lp = p;
    vf beta = vset(lp->beta), hbeta = vset(0.5f * lp->beta), half = vset(0.5f);
    OG_EW_LOOP(n, 2, in, 1, out, {
        vf ad = vabs(vsub(vload(ins[0]), vload(ins[1])));
        vf quad = vdiv(vmul(vmul(half, ad), ad), beta);
        vstore(outs[0], vsel(vlt(ad, beta), quad, vsub(ad, hbeta)));
    });
}

void OG_FN(og_sl1_bwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_loss_params *lp = p;
    vf beta = vset(lp->beta), s = vset(lp->scale);
    OG_EW_LOOP(n, 3, in, 1, out, {
        vf d = vsub(vload(ins[1]), vload(ins[2]));
        vf dv = vsel(vlt(vabs(d), beta), vdiv(d, beta), vsign(d));
        vstore(outs[0], vmul(vmul(vload(ins[0]), s), dv));
    });
}

// ---- BCE

static inline vf bce_loss(vf x, vf t) {
    vf lx = clamp100(loss_vlog(x)), l1x = clamp100(loss_vlog1m(x));
    // (t - 1) log(1 - x) - t log x
    return vfma(vsub(t, vset(1.0f)), l1x, vmul(vsub(vset(0.0f), t), lx));
}

void OG_FN(og_bce_fwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_loss_params *lp = p;
    if (lp->flags & OG_LOSS_W)
        OG_EW_LOOP(n, 3, in, 1, out, {
            vstore(outs[0], vmul(bce_loss(vload(ins[0]), vload(ins[1])), vload(ins[2])));
        });
    else
        OG_EW_LOOP(n, 2, in, 1, out, { vstore(outs[0], bce_loss(vload(ins[0]), vload(ins[1]))); });
}

static inline vf bce_grad(vf g, vf x, vf t, vf s) {
    vf den = vmax(vmul(vsub(vset(1.0f), x), x), vset(1e-12f));
    return vdiv(vmul(vsub(x, t), vmul(g, s)), den);
}

void OG_FN(og_bce_bwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_loss_params *lp = p;
    vf s = vset(lp->scale);
    if (lp->flags & OG_LOSS_W)
        OG_EW_LOOP(n, 4, in, 1, out, {
            vf r = bce_grad(vload(ins[0]), vload(ins[1]), vload(ins[2]), s);
            vstore(outs[0], vmul(r, vload(ins[3])));
        });
    else
        OG_EW_LOOP(n, 3, in, 1, out,
                   { vstore(outs[0], bce_grad(vload(ins[0]), vload(ins[1]), vload(ins[2]), s)); });
}

// ---- BCE with logits

// The loss without posWeight, max(x, 0) - x t + log1p(e^-|x|), as (1 - t) x + log1p(e^-|x|)
// for x >= 0 and -t x + log1p(e^-|x|) below: for a target in [0, 1] every term is >= 0, so
// nothing cancels (x - x t would lose the bits of x (1 - t) for t near 1).
static inline vf bcel_plain(vf x, vf t) {
    vf e = exp_neg_abs(x);
    vf sp = vmul(e, og_vlog1p_ratio(e));
    vf lin = vmul(vsel(vlt(x, vset(0.0f)), vsub(vset(0.0f), t), vsub(vset(1.0f), t)), x);
    return vadd(lin, sp);
}

// With posWeight: (1 - t) x + lw (log1p(e^-|x|) + max(-x, 0)), lw = 1 + (pw - 1) t = pw t +
// (1 - t) (that form: 1 + (pw - 1) t loses the bits of a small pw at t = 1), formed as
// lw log1p(e^-|x|) + (1 - t) x for x >= 0 and lw log1p(e^-|x|) - pw t x below (the same value:
// (1 - t - lw) x = -pw t x), whose terms share a sign for t in [0, 1] and pw >= 0.
static inline vf bcel_pos(vf x, vf t, vf pw) {
    vf e = exp_neg_abs(x);
    vf sp = vmul(e, og_vlog1p_ratio(e));
    vf lw = vfma(pw, t, vsub(vset(1.0f), t)); // pw t + (1 - t): no cancellation
    vf lin = vmul(vsel(vlt(x, vset(0.0f)), vsub(vset(0.0f), vmul(pw, t)), vsub(vset(1.0f), t)), x);
    return vfma(lw, sp, lin);
}

void OG_FN(og_bcel_fwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_loss_params *lp = p;
    switch (lp->flags & (OG_LOSS_W | OG_LOSS_PW)) {
    case 0:
        OG_EW_LOOP(n, 2, in, 1, out,
                   { vstore(outs[0], bcel_plain(vload(ins[0]), vload(ins[1]))); });
        break;
    case OG_LOSS_W:
        OG_EW_LOOP(n, 3, in, 1, out, {
            vstore(outs[0], vmul(bcel_plain(vload(ins[0]), vload(ins[1])), vload(ins[2])));
        });
        break;
    case OG_LOSS_PW:
        OG_EW_LOOP(n, 3, in, 1, out,
                   { vstore(outs[0], bcel_pos(vload(ins[0]), vload(ins[1]), vload(ins[2]))); });
        break;
    default:
        OG_EW_LOOP(n, 4, in, 1, out, {
            vf l = bcel_pos(vload(ins[0]), vload(ins[1]), vload(ins[3]));
            vstore(outs[0], vmul(l, vload(ins[2])));
        });
        break;
    }
}

static inline vf sigmoid(vf x) {
    vf e = exp_neg_abs(x);
    vf q = vdiv(vset(1.0f), vadd(vset(1.0f), e));
    vf sg = vsel(vlt(x, vset(0.0f)), vmul(e, q), q);
    return vsel(visnan(x), x, sg);
}

// The weight, when there is one, is folded into g by the caller (operand k); pw at ins[3].
void OG_FN(og_bcel_bwd)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_loss_params *lp = p;
    vf s = vset(lp->scale);
    switch (lp->flags & (OG_LOSS_W | OG_LOSS_PW)) {
    case 0:
        OG_EW_LOOP(n, 3, in, 1, out, {
            vf d = vsub(sigmoid(vload(ins[1])), vload(ins[2]));
            vstore(outs[0], vmul(vmul(vload(ins[0]), s), d));
        });
        break;
    case OG_LOSS_W:
        OG_EW_LOOP(n, 4, in, 1, out, {
            vf d = vsub(sigmoid(vload(ins[1])), vload(ins[2]));
            vstore(outs[0], vmul(vmul(vmul(vload(ins[0]), s), d), vload(ins[3])));
        });
        break;
    default: // posWeight (the weight, if any, already multiplied into g)
        OG_EW_LOOP(n, 4, in, 1, out, {
            vf t = vload(ins[2]), pw = vload(ins[3]);
            vf lw = vfma(pw, t, vsub(vset(1.0f), t)); // pw t + (1 - t): no cancellation
            vf d = vfmsub(lw, sigmoid(vload(ins[1])), vmul(pw, t));
            vstore(outs[0], vmul(vmul(vload(ins[0]), s), d));
        });
        break;
    }
}
