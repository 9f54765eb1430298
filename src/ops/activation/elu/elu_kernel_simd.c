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
 * from the result selects on y > 0 and is finite for every finite y. */
#include "ops/activation/elu/elu_kernel.h"
#include "ops/activation/piecewise_math.h"

void OG_FN(og_elu_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    const og_elu_params *p = params;
    vf scale = vset(p->scale), zero = vset(0.0f);
    if (p->saturate) {
        vf sat = vset(p->saturated);
        OG_EW_LOOP(n, 1, in, 1, out, {
            vf x = vload(ins[0]);
            vstore(outs[0], vsel(vmor(vgt(x, zero), visnan(x)), vmul(x, scale), sat));
        });
        return;
    }
    vd is = vdset(p->input_scale), negcoef = vdset(p->negcoef);
    OG_EW_LOOP(n, 1, in, 1, out, {
        vf x = vload(ins[0]);
        vd u = vdmul(vwiden(x), is);
        vd em1 = pw_dexp_expm1(pw_dexp_split(u));
        em1 = vdsel(veq(x, zero), u, em1); // expm1(+-0) = +-0
        vf neg = vnarrow(vdmul(em1, negcoef));
        vstore(outs[0], vsel(vgt(x, zero), vmul(x, scale), neg));
    });
}

void OG_FN(og_elu_bwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    const og_elu_params *p = params;
    vf scale = vset(p->scale), zero = vset(0.0f);
    vd is = vdset(p->input_scale), coef = vdset(p->grad_coef);
    OG_EW_LOOP(n, 2, in, 1, out, {
        vf g = vload(ins[0]), x = vload(ins[1]);
        vd e = pw_dexp_exp(pw_dexp_split(vdmul(vwiden(x), is)));
        vf neg = vnarrow(vdmul(vdmul(vwiden(g), coef), e));
        vstore(outs[0], vsel(vgt(x, zero), vmul(g, scale), neg));
    });
}

void OG_FN(og_elu_bwd_result)(size_t n, const float *const *in, float *const *out,
                              const void *params) {
    const og_elu_params *p = params;
    vf scale = vset(p->scale), zero = vset(0.0f);
    vd is = vdset(p->input_scale), negcoef = vdset(p->negcoef);
    OG_EW_LOOP(n, 2, in, 1, out, {
        vf g = vload(ins[0]), y = vload(ins[1]);
        vf neg = vnarrow(vdmul(vdmul(vwiden(g), is), vdadd(vwiden(y), negcoef)));
        vstore(outs[0], vsel(vgt(y, zero), vmul(g, scale), neg));
    });
}
