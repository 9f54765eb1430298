/* Relu forward and ThresholdBackward, written once against vec.h and compiled per ISA.
 *
 * Both are pure selects: one compare and one blend per vector, so they run at memory speed.
 *   relu:      y = max(0, x) with the operands in the order of PyTorch's clamp_min (x86 max
 *              returns its second operand when they compare equal or either is NaN), so
 *              relu(NaN) = NaN (payload kept), relu(-0) = -0, relu(+-inf) = +inf / 0.
 *   threshold: dx = x > threshold ? g : +0, the aclnn formula read literally: a NaN x compares
 *              false and gives 0; a NaN g propagates wherever it is selected. */
#include "engine/simd/vec.h"
#include "ops/activation/relu/relu_kernel.h"

void OG_FN(og_relu_fwd)(size_t n, const float *const *in, float *const *out, const void *params) {
    (void)params;
    OG_EW_LOOP(n, 1, in, 1, out, { vstore(outs[0], vmax(vset(0.0f), vload(ins[0]))); });
}

void OG_FN(og_threshold_bwd)(size_t n, const float *const *in, float *const *out,
                             const void *params) {
    const og_threshold_params *p = params;
    vf th = vset(p->threshold), zero = vset(0.0f);
    OG_EW_LOOP(n, 2, in, 1, out, {
        vstore(outs[0], vsel(vgt(vload(ins[1]), th), vload(ins[0]), zero));
    });
}
