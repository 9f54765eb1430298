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
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
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

// sign(d): 1, -1, or 0 for +-0 and NaN (PyTorch's sign: NaN has no direction)
static inline vf vsign(vf d) {
    return vsel(vgt(d, vset(0.0f)), vset(1.0f), vsel(vlt(d, vset(0.0f)), vset(-1.0f), vset(0.0f)));
}

// x - y in double (exact for floats: no overflow, no rounding)
static inline vd dsub(vf x, vf y) { return vdadd(vwiden(x), vdmul(vwiden(y), vdset(-1.0))); }

// A NaN x gives x itself (quieted), the same bits on every ISA (which of several NaN operands an
// operation returns differs between the builds)
static inline vf keep_nan(vf x, vf r) { return vsel(visnan(x), vadd(x, x), r); }

// ---- MSE

#define BODY_MSE_FWD(LOOP)                                                                         \
    (void)p;                                                                                       \
    LOOP(2, 1, {                                                                                   \
        vf d = vsub(vload(ins[0]), vload(ins[1]));                                                 \
        vstore(outs[0], vmul(d, d));                                                               \
    });
OG_EW_KERNEL3_FN(og_mse_fwd, BODY_MSE_FWD)

#define BODY_MSE_BWD(LOOP)                                                                         \
    const og_loss_params *lp = p;                                                                  \
    vd s2 = vdset(2.0 * (double)lp->scale);                                                        \
    LOOP(3, 1, {                                                                                   \
        vstore(outs[0], vnarrow(vdmul(vdmul(dsub(vload(ins[1]), vload(ins[2])), s2),               \
                                      vwiden(vload(ins[0])))));                                    \
    });
OG_EW_KERNEL3_FN(og_mse_bwd, BODY_MSE_BWD)

// ---- L1

#define BODY_L1_FWD(LOOP)                                                                          \
    (void)p;                                                                                       \
    LOOP(2, 1, { vstore(outs[0], vabs(vsub(vload(ins[0]), vload(ins[1])))); });
OG_EW_KERNEL3_FN(og_l1_fwd, BODY_L1_FWD)

#define BODY_L1_BWD(LOOP)                                                                          \
    const og_loss_params *lp = p;                                                                  \
    vf s = vset(lp->scale);                                                                        \
    LOOP(3, 1, {                                                                                   \
        vf d = vsub(vload(ins[1]), vload(ins[2]));                                                 \
        vstore(outs[0], vmul(vmul(vload(ins[0]), s), vsign(d)));                                   \
    });
OG_EW_KERNEL3_FN(og_l1_bwd, BODY_L1_BWD)

// ---- SmoothL1 (beta = 0: |d| < 0 never holds, the L1 branch runs)
#define BODY_SL1_FWD(LOOP)                                                                         \
    const og_loss_params *lp = p;                                                                  \
    vf beta = vset(lp->beta), hbeta = vset(0.5f * lp->beta), half = vset(0.5f);                    \
    LOOP(2, 1, {                                                                                   \
        vf ad = vabs(vsub(vload(ins[0]), vload(ins[1])));                                          \
        vf quad = vdiv(vmul(vmul(half, ad), ad), beta);                                            \
        vstore(outs[0], vsel(vlt(ad, beta), quad, vsub(ad, hbeta)));                               \
    });
OG_EW_KERNEL3_FN(og_sl1_fwd, BODY_SL1_FWD)

#define BODY_SL1_BWD(LOOP)                                                                         \
    const og_loss_params *lp = p;                                                                  \
    vf beta = vset(lp->beta), s = vset(lp->scale);                                                 \
    LOOP(3, 1, {                                                                                   \
        vf d = vsub(vload(ins[1]), vload(ins[2]));                                                 \
        vf dv = vsel(vlt(vabs(d), beta), vdiv(d, beta), vsign(d));                                 \
        vstore(outs[0], vmul(vmul(vload(ins[0]), s), dv));                                         \
    });
OG_EW_KERNEL3_FN(og_sl1_bwd, BODY_SL1_BWD)

// ---- BCE
// The logs in float (clamped), the rest in double: w (t - 1) log(1 - x) - w t log x and
// g s w (x - t) / max(x (1 - x), 1e-12) are rounded once, and no product overflows on the way
// to a result in range (a weight or gradient far from 1, a target outside [0, 1]).

// (the weight's NaN, a single NaN input, propagates through the double products unchanged)
static inline vf bce_loss(vf x, vf t, vd w) {
    vf lx = clamp100(loss_vlog(x)), l1x = clamp100(loss_vlog1m(x));
    vd td = vwiden(t);
    vd r = vdfma(vdadd(td, vdset(-1.0)), vwiden(l1x), vdmul(vdmul(td, vdset(-1.0)), vwiden(lx)));
    return keep_nan(t, keep_nan(x, vnarrow(vdmul(r, w))));
}

#define BODY_BCE_FWD(LOOP)                                                                         \
    const og_loss_params *lp = p;                                                                  \
    if (lp->flags & OG_LOSS_W)                                                                     \
        LOOP(3, 1, {                                                                               \
            vf w = vload(ins[2]);                                                                  \
            vstore(outs[0], keep_nan(w, bce_loss(vload(ins[0]), vload(ins[1]), vwiden(w))));       \
        });                                                                                        \
    else                                                                                           \
        LOOP(2, 1, { vstore(outs[0], bce_loss(vload(ins[0]), vload(ins[1]), vdset(1.0))); });
OG_EW_KERNEL3_FN(og_bce_fwd, BODY_BCE_FWD)

static inline vf bce_grad(vf g, vf x, vf t, vd sw) {
    // x (1 - x) in [1e-12, 1/4] after the clamp (negative outside [0, 1]): its reciprocal in
    // double by og_vrecip_double
    vf den = vmax(vmul(vsub(vset(1.0f), x), x), vset(1e-12f));
    vd r = vdmul(vdmul(dsub(x, t), vdmul(vwiden(g), sw)), og_vrecip_double(vwiden(den)));
    return keep_nan(g, keep_nan(t, keep_nan(x, vnarrow(r))));
}

#define BODY_BCE_BWD(LOOP)                                                                         \
    const og_loss_params *lp = p;                                                                  \
    vd s = vdset(lp->scale);                                                                       \
    if (lp->flags & OG_LOSS_W)                                                                     \
        LOOP(4, 1, {                                                                               \
            vf w = vload(ins[3]);                                                                  \
            vd sw = vdmul(s, vwiden(w));                                                           \
            vstore(outs[0],                                                                        \
                   keep_nan(w, bce_grad(vload(ins[0]), vload(ins[1]), vload(ins[2]), sw)));        \
        });                                                                                        \
    else                                                                                           \
        LOOP(3, 1, { vstore(outs[0], bce_grad(vload(ins[0]), vload(ins[1]), vload(ins[2]), s)); });
OG_EW_KERNEL3_FN(og_bce_bwd, BODY_BCE_BWD)

// ---- BCE with logits
// e = e^-|x| in double (og_vexp_double: e^-200 and the like keep their bits), log1p(e) = e L(e)
// with L in float (relative 2^-27.5), everything else in double and rounded once at the end.
// The loss (1 - t) x + lw (log1p(e^-|x|) + max(-x, 0)), lw = 1 + (pw - 1) t (1 without posWeight)
// is formed as lw log1p(e^-|x|) + (x < 0 ? -pw t x : (1 - t) x) with lw = pw t + (1 - t): the
// same function, whose terms share a sign for t in [0, 1] and pw >= 0 (nothing cancels: the
// other form loses log1p(e^-|x|) beside a large |x|, and 1 + (pw - 1) t a small pw at t = 1).
// At x = -inf it is the limit +inf (t > 0) where the other form gives inf - inf.

typedef struct bcel_e {
    vd e;  // e^-|x|
    vd sp; // log1p(e^-|x|)
} bcel_e;

static inline bcel_e bcel_exp(vf x) {
    og_vexp s = og_vexp_split(vmax(vnegabs(x), vset(-200.0f)));
    bcel_e r;
    r.e = og_vexp_double(s);
    r.sp = vdmul(r.e, vwiden(og_vlog1p_ratio(vnarrow(r.e))));
    return r;
}

// lw and the -pw t (x < 0) or (1 - t) (x >= 0) factor of x, in double
static inline vd bcel_loss_d(vf x, vf t, vd pw, vd w) {
    bcel_e c = bcel_exp(x);
    vd xd = vwiden(x), td = vwiden(t), one_t = vdadd(vdset(1.0), vdmul(td, vdset(-1.0)));
    vd lw = vdfma(pw, td, one_t);
    vd f = vdsel(vlt(x, vset(0.0f)), vdmul(vdmul(pw, td), vdset(-1.0)), one_t);
    return vdmul(vdfma(lw, c.sp, vdmul(f, xd)), w);
}

static inline vf bcel_loss(vf x, vf t, vd pw, vd w) {
    return keep_nan(t, keep_nan(x, vnarrow(bcel_loss_d(x, t, pw, w))));
}

#define BODY_BCEL_FWD(LOOP)                                                                        \
    const og_loss_params *lp = p;                                                                  \
    vd one = vdset(1.0);                                                                           \
    switch (lp->flags & (OG_LOSS_W | OG_LOSS_PW)) {                                                \
    case 0:                                                                                        \
        LOOP(2, 1, {                                                                               \
            vf x = vload(ins[0]);                                                                  \
            vstore(outs[0], bcel_loss(x, vload(ins[1]), one, one));                                \
        });                                                                                        \
        break;                                                                                     \
    case OG_LOSS_W:                                                                                \
        LOOP(3, 1, {                                                                               \
            vf x = vload(ins[0]);                                                                  \
            vf w = vload(ins[2]);                                                                  \
            vstore(outs[0], keep_nan(w, bcel_loss(x, vload(ins[1]), one, vwiden(w))));             \
        });                                                                                        \
        break;                                                                                     \
    case OG_LOSS_PW:                                                                               \
        LOOP(3, 1, {                                                                               \
            vf x = vload(ins[0]);                                                                  \
            vf pw = vload(ins[2]);                                                                 \
            vstore(outs[0], keep_nan(pw, bcel_loss(x, vload(ins[1]), vwiden(pw), one)));           \
        });                                                                                        \
        break;                                                                                     \
    default:                                                                                       \
        LOOP(4, 1, {                                                                               \
            vf x = vload(ins[0]);                                                                  \
            vf w = vload(ins[2]), pw = vload(ins[3]);                                              \
            vf l = bcel_loss(x, vload(ins[1]), vwiden(pw), vwiden(w));                             \
            vstore(outs[0], keep_nan(pw, keep_nan(w, l)));                                         \
        });                                                                                        \
        break;                                                                                     \
    }
OG_EW_KERNEL3_FN(og_bcel_fwd, BODY_BCEL_FWD)

// sigmoid(x) - 1/2 = sign(x) (1 - e) / (2 (1 + e)), e = e^-|x| = (1 + m) 2^n with m = e^r - 1
// from the expf polynomial before its "+ 1" (relative accuracy for small r), in double, kept
// apart from the 1/2 so that sigmoid(x) - t keeps its bits where t = 1/2 and x is small. For
// n = 0 (|x| < ln2 / 2) 1 - e is -m itself (1 - e in double would round a tiny m away); for
// n < 0, e <= 0.71 and 1 - e cancels nothing.
static inline vd sigmoid_minus_half(vf x) {
    vf v = vmax(vnegabs(x), vset(-200.0f)); // NaN: -200 (keep_nan restores it)
    vf n = og_vexp_n(v);
    vf m = og_vexp_poly_m1(og_vexp_r(v, n));
    vd e = vdmul(vdadd(vdset(1.0), vwiden(m)), vdpow2i(n));
    vd one_minus_e = vdsel(veq(n, vset(0.0f)), vdmul(vwiden(m), vdset(-1.0)),
                           vdadd(vdset(1.0), vdmul(e, vdset(-1.0))));
    vd h = vdmul(one_minus_e, og_vrecip_double(vdadd(vdset(1.0), e)));
    return vdmul(h, vdsel(vlt(x, vset(0.0f)), vdset(-0.5), vdset(0.5)));
}

// g s w (lw sigmoid(x) - pw t) = g s w ((lw / 2 - pw t) + lw h), h = sigmoid(x) - 1/2, in double
static inline vf bcel_grad(vf g, vf x, vf t, vd pw, vd sw) {
    vd h = sigmoid_minus_half(x);
    vd td = vwiden(t);
    vd lw = vdfma(pw, td, vdadd(vdset(1.0), vdmul(td, vdset(-1.0))));
    vd c0 = vdfma(lw, vdset(0.5), vdmul(vdmul(pw, td), vdset(-1.0)));
    vd d = vdfma(lw, h, c0);
    return keep_nan(g, keep_nan(t, keep_nan(x, vnarrow(vdmul(vdmul(vwiden(g), sw), d)))));
}

// The weight, when there is one with posWeight, is folded into g by the caller.
#define BODY_BCEL_BWD(LOOP)                                                                        \
    const og_loss_params *lp = p;                                                                  \
    vd s = vdset(lp->scale), one = vdset(1.0);                                                     \
    switch (lp->flags & (OG_LOSS_W | OG_LOSS_PW)) {                                                \
    case 0:                                                                                        \
        LOOP(3, 1, {                                                                               \
            vstore(outs[0], bcel_grad(vload(ins[0]), vload(ins[1]), vload(ins[2]), one, s));       \
        });                                                                                        \
        break;                                                                                     \
    case OG_LOSS_W:                                                                                \
        LOOP(4, 1, {                                                                               \
            vf w = vload(ins[3]);                                                                  \
            vd sw = vdmul(s, vwiden(w));                                                           \
            vf r = bcel_grad(vload(ins[0]), vload(ins[1]), vload(ins[2]), one, sw);                \
            vstore(outs[0], keep_nan(w, r));                                                       \
        });                                                                                        \
        break;                                                                                     \
    default: /* posWeight at ins[3] */                                                             \
        LOOP(4, 1, {                                                                               \
            vf pw = vload(ins[3]);                                                                 \
            vf r = bcel_grad(vload(ins[0]), vload(ins[1]), vload(ins[2]), vwiden(pw), s);          \
            vstore(outs[0], keep_nan(pw, r));                                                      \
        });                                                                                        \
        break;                                                                                     \
    }
OG_EW_KERNEL3_FN(og_bcel_bwd, BODY_BCEL_BWD)

// ---- float64: the same formulas in double with libm (NaN propagates; sign(+-0, NaN) = 0)
static inline double sign64(double d) { return (double)((d > 0) - (d < 0)); }
// max(l, -100) keeping NaN
static inline double clamp100_64(double l) { return l < -100 ? -100.0 : l; }
// the operands after self and target: (weight, posWeight), 1 where absent
static inline void weights64(const og_loss_params *lp, const double *const *in, size_t i, int k,
                             double *w, double *pw) {
    *w = lp->flags & OG_LOSS_W ? in[k++][i] : 1.0;
    *pw = lp->flags & OG_LOSS_PW ? in[k][i] : 1.0;
}
// (lw / 2 - pw t) + lw h with h = sigmoid(x) - 1/2 = tanh(x / 2) / 2 (keeps its bits near x = 0)
static inline double bcel_d64(double x, double t, double pw) {
    double lw = fma(pw, t, 1 - t);
    return fma(lw, 0.5 * tanh(0.5 * x), fma(lw, 0.5, -pw * t));
}

OG_EW_KERNEL64(og_mse_fwd, og_loss_params, {
    double d = X64(0) - X64(1);
    Y64(0) = d * d;
})
OG_EW_KERNEL64(og_mse_bwd, og_loss_params,
               { Y64(0) = (X64(1) - X64(2)) * (2 * prm->scale64) * X64(0); })
OG_EW_KERNEL64(og_l1_fwd, og_loss_params, { Y64(0) = fabs(X64(0) - X64(1)); })
OG_EW_KERNEL64(og_l1_bwd, og_loss_params,
               { Y64(0) = X64(0) * prm->scale64 * sign64(X64(1) - X64(2)); })
OG_EW_KERNEL64(og_sl1_fwd, og_loss_params, {
    double ad = fabs(X64(0) - X64(1)), beta = prm->beta64;
    Y64(0) = ad < beta ? 0.5 * ad * ad / beta : ad - 0.5 * beta;
})
OG_EW_KERNEL64(og_sl1_bwd, og_loss_params, {
    double d = X64(1) - X64(2), beta = prm->beta64;
    Y64(0) = X64(0) * prm->scale64 * (fabs(d) < beta ? d / beta : sign64(d));
})
OG_EW_KERNEL64(og_bce_fwd, og_loss_params, {
    double x = X64(0), t = X64(1), w, pw;
    weights64(prm, in, i, 2, &w, &pw);
    double lx = clamp100_64(log(x)), l1x = clamp100_64(log1p(-x));
    Y64(0) = fma(t - 1, l1x, -t * lx) * w;
})
OG_EW_KERNEL64(og_bce_bwd, og_loss_params, {
    double g = X64(0), x = X64(1), t = X64(2), w, pw, v = x * (1 - x);
    weights64(prm, in, i, 3, &w, &pw);
    Y64(0) = g * prm->scale64 * w * (x - t) / (v > 1e-12 ? v : 1e-12);
})
// lw log1p(e^-|x|) + (x < 0 ? -pw t : 1 - t) x, lw = pw t + (1 - t): terms of one sign
OG_EW_KERNEL64(og_bcel_fwd, og_loss_params, {
    double x = X64(0), t = X64(1), w, pw;
    weights64(prm, in, i, 2, &w, &pw);
    double lw = fma(pw, t, 1 - t), f = x < 0 ? -pw * t : 1 - t;
    Y64(0) = fma(lw, log1p(exp(-fabs(x))), f * x) * w;
})
OG_EW_KERNEL64(og_bcel_bwd, og_loss_params, {
    double g = X64(0), x = X64(1), t = X64(2), w, pw;
    weights64(prm, in, i, 3, &w, &pw);
    Y64(0) = g * prm->scale64 * w * bcel_d64(x, t, pw);
})
