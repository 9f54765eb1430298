/* LeakyRelu forward and backward, written once against vec.h and compiled per ISA.
 *
 * One compare, one multiply (correctly rounded) and one blend per vector: memory-bound.
 * Special values follow PyTorch (x > 0 ? x : x * slope): NaN propagates, -0 gives -0 * slope,
 * -inf gives -inf * slope. The backward selects g or g * slope on x > 0, so a NaN x gives
 * g * slope (the formula read literally), and NaN gradients propagate. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/activation/leaky_relu/leaky_relu_kernel.h"

typedef struct slope_consts {
    vf slope;
} slope_consts;

static inline slope_consts slope_setup(const void *p) {
    return (slope_consts){vset(((const og_leaky_relu_params *)p)->slope)};
}

OG_EW_KERNEL3(og_leaky_relu_fwd, slope_consts, slope_setup, 1, 1, {
    vf x = vload(ins[0]);
    vstore(outs[0], vsel(vgt(x, vset(0.0f)), x, vmul(x, c.slope)));
})

OG_EW_KERNEL3(og_leaky_relu_bwd, slope_consts, slope_setup, 2, 1, {
    vf g = vload(ins[0]);
    vstore(outs[0], vsel(vgt(vload(ins[1]), vset(0.0f)), g, vmul(g, c.slope)));
})

// ---- float64
OG_EW_KERNEL64(og_leaky_relu_fwd, og_leaky_relu_params, {
    double x = X64(0);
    Y64(0) = x > 0 ? x : x * prm->slope64;
})
OG_EW_KERNEL64(og_leaky_relu_bwd, og_leaky_relu_params, {
    double g = X64(0), x = X64(1);
    Y64(0) = x > 0 ? g : g * prm->slope64;
})
