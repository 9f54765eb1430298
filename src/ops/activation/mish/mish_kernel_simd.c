/* Mish forward and backward, written once against vec.h and compiled per ISA.
 *
 * Everything derives from e = exp(-|x|), which never overflows, split as p * 2^k (vmath.h) so
 * that results involving e^x for very negative x are scaled once, at the end. With
 * t = tanh(softplus(x)):
 *   x > 0:  t = (1 + 2e) / (1 + 2e + 2e^2)
 *   x <= 0: t = e (e + 2) / (e^2 + 2e + 2)
 * and 1 - t^2 = 4 (1+e)^2 q / den^2 (q = e^2 for x > 0, 1 otherwise), which gives the backward
 * factor mish'(x) = t + x sigmoid(x) (1 - t^2) without cancellation in 1 - t^2 and with a single
 * division:
 *   x > 0:  (num den + 4 (x e) e (1 + e)) / den^2,        num = 1 + 2e, den = num + 2e^2
 *   x <= 0: e ((e + 2) den + 4 x (1 + e)) / den^2,        den = e^2 + 2e + 2
 * The bracket of the second form cancels near x = -1.19 (the root of mish') and is evaluated in
 * double; the error left there comes from e alone.
 * |x| is clamped to 160 where it multiplies e: e^-160 underflows every product to 0 in fp32, so
 * the result is unchanged for finite x and +-inf gives the mathematical limits (mish(-inf) = -0,
 * mish(+inf) = +inf, mish'(-inf) = 0, mish'(+inf) = 1). NaN inputs give NaN. */
#include "engine/simd/vmath.h"
#include "ops/activation/mish/mish_kernel.h"

#define LIMIT 160.0f

typedef struct mish_common {
    vm pos;    // x > 0
    vf xc;     // x clamped to [-160, 160]
    vf e;      // exp(-|x|), possibly subnormal
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
static inline void mish_forward(vf x, vf *y_out, vf *t_out) {
    mish_common c = mish_prepare(x);
    vf e = c.e, two = vset(2.0f);
    vf num_pos = vfma(two, e, vset(1.0f));               // 1 + 2e
    vf den_pos = vfma(vmul(two, e), e, num_pos);         // 1 + 2e + 2e^2
    vf e_plus_2 = vadd(e, two);
    vf den_neg = vfma(e, e_plus_2, two);                 // e^2 + 2e + 2
    vf ratio = vdiv(vsel(c.pos, num_pos, e_plus_2), vsel(c.pos, den_pos, den_neg));
    vm nan = visnan(x);
    vf y = vsel(c.pos, vmul(x, ratio), og_vexp_scale(c.split, vmul(c.xc, ratio)));
    *y_out = vsel(nan, x, y);
    if (t_out) *t_out = vsel(nan, x, vsel(c.pos, ratio, og_vexp_scale(c.split, ratio)));
}

static inline vf mish_grad_factor(vf x) {
    mish_common c = mish_prepare(x);
    vf e = c.e, one = vset(1.0f), two = vset(2.0f), four = vset(4.0f);
    vf one_plus_e = vadd(one, e);
    vf num_pos = vfma(two, e, one);
    vf den_pos = vfma(vmul(two, e), e, num_pos);
    vf xe = vmul(c.xc, e);
    vf a_pos = vfma(num_pos, den_pos, vmul(vmul(vmul(four, xe), e), one_plus_e));
    vf den_neg = vfma(e, vadd(e, two), two);
    // The two terms of a_neg = (e + 2) den + 4 x (1 + e) cancel near mish's minimum
    // (x ~ -1.19, where mish' = 0): evaluate them in double, e^3 + 4e^2 + 6e + 4 + 4x(1 + e).
    vd ed = vwiden(e), xd = vwiden(c.xc);
    vd poly = vdfma(vdfma(vdfma(vdadd(ed, vdset(4.0)), ed, vdset(6.0)), ed, vdset(4.0)),
                    vdset(1.0), vdmul(vdmul(vdset(4.0), xd), vdadd(vdset(1.0), ed)));
    vf a_neg = vnarrow(poly);
    vf den = vsel(c.pos, den_pos, den_neg);
    vf w = vdiv(vsel(c.pos, a_pos, a_neg), vmul(den, den));
    vf f = vsel(c.pos, w, og_vexp_scale(c.split, w));
    return vsel(visnan(x), x, f);
}

void OG_FN(og_mish_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 1, in, 1, out, {
        vf y;
        mish_forward(vload(ins[0]), &y, NULL);
        vstore(outs[0], y);
    });
}

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

void OG_FN(og_mish_bwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 2, in, 1, out, {
        vf g = vload(ins[0]);
        vstore(outs[0], vmul(g, mish_grad_factor(vload(ins[1]))));
    });
}

// dx = g (t + x sigmoid(x) (1 - t^2)) with the caller's t. x sigmoid(x) is x / (1 + e) for
// x > 0 and x e / (1 + e) otherwise (scaled once, clamped at -160 where it is 0 in fp32). A zero
// (1 - t^2) makes the correction 0 even for x = +inf.
void OG_FN(og_mish_bwd_tanhx)(size_t n, const float *const *in, float *const *out,
                              const void *params) {
    (void)params;
    OG_EW_LOOP(n, 3, in, 1, out, {
        vf g = vload(ins[0]), x = vload(ins[1]), t = vload(ins[2]);
        mish_common c = mish_prepare(x);
        vf q = vdiv(vsel(c.pos, x, c.xc), vadd(vset(1.0f), c.e));
        vf x_sig = vsel(c.pos, q, og_vexp_scale(c.split, q));
        vf one_minus_t2 = vfma(vsub(vset(0.0f), t), t, vset(1.0f));
        vf corr = vsel(veq(one_minus_t2, vset(0.0f)), vset(0.0f), vmul(x_sig, one_minus_t2));
        vf f = vadd(t, corr);
        vstore(outs[0], vsel(visnan(x), x, vmul(g, f)));
    });
}
