/* Add kernels, written once against vec.h and compiled per ISA. self + alpha * other is one
 * fused multiply-add (a single rounding; exactly self + other when alpha = 1). */
#include "engine/simd/vec.h"
#include "ops/math/add/add_kernel.h"

void OG_FN(og_add)(size_t n, const float *const *in, float *const *out, const void *p) {
    vf alpha = vset(((const og_add_params *)p)->alpha);
    OG_EW_LOOP(n, 2, in, 1, out, { vstore(outs[0], vfma(alpha, vload(ins[1]), vload(ins[0]))); });
}

void OG_FN(og_adds)(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_add_params *ap = p;
    vf alpha = vset(ap->alpha), other = vset(ap->other);
    OG_EW_LOOP(n, 1, in, 1, out, { vstore(outs[0], vfma(alpha, other, vload(ins[0]))); });
}
