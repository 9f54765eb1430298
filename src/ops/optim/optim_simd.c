/* The optimizers' update kernels, compiled once per ISA (scalar, AVX2, AVX-512) against
 * engine/simd/vec.h. One pass: each element's p, g, m, v (and vmax) are read once and written
 * once. A tail shorter than a vector goes through a padded VLEN-element copy and the same vector
 * body, so every element sees exactly the same operations on every ISA. */
#include <stddef.h>
#include <string.h>

#include "engine/simd/vec.h"
#include "ops/optim/optim_kernel.h"

#if defined(OG_ISA_AVX512)
static inline vf vsqrt(vf a) { return _mm512_sqrt_ps(a); }
#elif defined(OG_ISA_AVX2)
static inline vf vsqrt(vf a) { return _mm256_sqrt_ps(a); }
#else
static inline vf vsqrt(vf a) { return sqrtf(a); }
#endif

// VLEN elements at p, g, m, v, vmax (vmax only read with amsgrad).
static inline void adam_vec(float *p, const float *g, float *m, float *v, float *vx,
                            const og_adam_coef *c) {
    vf gv = vload(g);
    if (c->has_scale) gv = vdiv(gv, vset(c->grad_scale));
    if (c->maximize) gv = vsub(vset(0.0f), gv);
    vf pv = vmul(vload(p), vset(c->decay));
    vf mv = vload(m);
    if (c->lerp)
        mv = vadd(mv, vmul(vsub(gv, mv), vset(c->one_minus_beta1)));
    else
        mv = vadd(vmul(mv, vset(c->beta1)), vmul(gv, vset(c->one_minus_beta1)));
    vf vv = vadd(vmul(vload(v), vset(c->beta2)), vmul(vmul(gv, gv), vset(c->one_minus_beta2)));
    vf vh = vv;
    if (c->amsgrad) {
        vh = vmax(vload(vx), vv);
        vstore(vx, vh);
    }
    vf denom = vadd(vmul(vsqrt(vh), vset(c->inv_bc2_sqrt)), vset(c->eps));
    pv = vsub(pv, vdiv(vmul(mv, vset(c->step_size)), denom));
    vstore(p, pv);
    vstore(m, mv);
    vstore(v, vv);
}

void OG_FN(og_adam_step)(float *p, const float *g, float *m, float *v, float *vmax, size_t n,
                         const og_adam_coef *c) {
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN)
        adam_vec(p + i, g + i, m + i, v + i, c->amsgrad ? vmax + i : NULL, c);
    if (i < n) {
        size_t r = n - i;
        float tp[VLEN] = {0}, tg[VLEN] = {0}, tm[VLEN] = {0}, tv[VLEN] = {0}, tx[VLEN] = {0};
        memcpy(tp, p + i, r * sizeof(float));
        memcpy(tg, g + i, r * sizeof(float));
        memcpy(tm, m + i, r * sizeof(float));
        memcpy(tv, v + i, r * sizeof(float));
        if (c->amsgrad) memcpy(tx, vmax + i, r * sizeof(float));
        adam_vec(tp, tg, tm, tv, tx, c);
        memcpy(p + i, tp, r * sizeof(float));
        memcpy(m + i, tm, r * sizeof(float));
        memcpy(v + i, tv, r * sizeof(float));
        if (c->amsgrad) memcpy(vmax + i, tx, r * sizeof(float));
    }
}

static inline void sgd_vec(float *p, float *g, float *buf, const og_sgd_coef *c) {
    vf gv = vload(g);
    if (c->has_scale) {
        gv = vdiv(gv, vset(c->grad_scale));
        vstore(g, gv);
    }
    if (c->maximize) gv = vsub(vset(0.0f), gv);
    vf pv = vload(p);
    if (c->weight_decay != 0.0f) gv = vadd(gv, vmul(pv, vset(c->weight_decay)));
    if (c->use_momentum) {
        vf b = c->first_step ? gv
                             : vadd(vmul(vload(buf), vset(c->momentum)),
                                    vmul(gv, vset(c->one_minus_dampening)));
        vstore(buf, b);
        gv = c->nesterov ? vadd(gv, vmul(b, vset(c->momentum))) : b;
    }
    vstore(p, vsub(pv, vmul(gv, vset(c->lr))));
}

void OG_FN(og_sgd_step)(float *p, float *g, float *buf, size_t n, const og_sgd_coef *c) {
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN) sgd_vec(p + i, g + i, c->use_momentum ? buf + i : NULL, c);
    if (i < n) {
        size_t r = n - i;
        float tp[VLEN] = {0}, tg[VLEN] = {0}, tb[VLEN] = {0};
        memcpy(tp, p + i, r * sizeof(float));
        memcpy(tg, g + i, r * sizeof(float));
        if (c->use_momentum) memcpy(tb, buf + i, r * sizeof(float));
        sgd_vec(tp, tg, tb, c);
        memcpy(p + i, tp, r * sizeof(float));
        if (c->has_scale) memcpy(g + i, tg, r * sizeof(float));
        if (c->use_momentum) memcpy(buf + i, tb, r * sizeof(float));
    }
}
