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
 * the threshold) in both directions; NaN propagates. */
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

static inline vf softplus_forward(vf x, vf beta, vf threshold) {
    sp_common c = sp_prepare(x, beta, threshold);
    vf q = vdiv(og_vlog1p_ratio(c.e), beta);
    vf neg = og_vmul_pow2(q, c.s.p, vsel(c.pos, vset(0.0f), c.s.n));
    vf y = vsel(c.above, x, vsel(c.pos, vfma(q, c.e, x), neg));
    return vsel(visnan(x), x, y);
}

static inline vf softplus_backward(vf g, vf x, vf beta, vf threshold) {
    sp_common c = sp_prepare(x, beta, threshold);
    vf q = vdiv(vset(1.0f), vadd(vset(1.0f), c.e));
    vf sig = og_vmul3_pow2(g, q, vsel(c.pos, vset(1.0f), c.s.p), vsel(c.pos, vset(0.0f), c.s.n));
    vf dx = vsel(c.above, g, sig);
    return vsel(visnan(x), x, dx);
}

void OG_FN(og_softplus_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    const og_softplus_params *p = params;
    vf beta = vset(p->beta), threshold = vset(p->threshold);
    OG_EW_LOOP(n, 1, in, 1, out, { vstore(outs[0], softplus_forward(vload(ins[0]), beta, threshold)); });
}

void OG_FN(og_softplus_bwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    const og_softplus_params *p = params;
    vf beta = vset(p->beta), threshold = vset(p->threshold);
    OG_EW_LOOP(n, 2, in, 1, out, {
        vstore(outs[0], softplus_backward(vload(ins[0]), vload(ins[1]), beta, threshold));
    });
}
