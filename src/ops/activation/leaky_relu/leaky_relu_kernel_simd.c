/* LeakyRelu forward and backward, written once against vec.h and compiled per ISA.
 *
 * One compare, one multiply (correctly rounded) and one blend per vector: memory-bound.
 * Special values follow PyTorch (x > 0 ? x : x * slope): NaN propagates, -0 gives -0 * slope,
 * -inf gives -inf * slope. The backward selects g or g * slope on x > 0, so a NaN x gives
 * g * slope (the formula read literally), and NaN gradients propagate. */
#include "engine/simd/vec.h"
#include "ops/activation/leaky_relu/leaky_relu_kernel.h"

void OG_FN(og_leaky_relu_fwd)(size_t n, const float *const *in, float *const *out,
                              const void *params) {
    const og_leaky_relu_params *p = params;
    vf slope = vset(p->slope), zero = vset(0.0f);
    OG_EW_LOOP(n, 1, in, 1, out, {
        vf x = vload(ins[0]);
        vstore(outs[0], vsel(vgt(x, zero), x, vmul(x, slope)));
    });
}

void OG_FN(og_leaky_relu_bwd)(size_t n, const float *const *in, float *const *out,
                              const void *params) {
    const og_leaky_relu_params *p = params;
    vf slope = vset(p->slope), zero = vset(0.0f);
    OG_EW_LOOP(n, 2, in, 1, out, {
        vf g = vload(ins[0]);
        vstore(outs[0], vsel(vgt(vload(ins[1]), zero), g, vmul(g, slope)));
    });
}
