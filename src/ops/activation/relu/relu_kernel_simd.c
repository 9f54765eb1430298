/* Relu forward and ThresholdBackward, written once against vec.h and compiled per ISA.
 *
 * Both are pure selects: one compare and one blend per vector, so they run at memory speed.
 *   relu:      y = max(0, x) with the operands in the order of PyTorch's clamp_min (x86 max
 *              returns its second operand when they compare equal or either is NaN), so
 *              relu(NaN) = NaN (payload kept), relu(-0) = -0, relu(+-inf) = +inf / 0.
 *   threshold: dx = x > threshold ? g : +0, the aclnn formula read literally: a NaN x compares
 *              false and gives 0; a NaN g propagates wherever it is selected. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/activation/relu/relu_kernel.h"

typedef struct threshold_consts {
    vf th;
} threshold_consts;

static inline threshold_consts threshold_setup(const void *p) {
    return (threshold_consts){vset(((const og_threshold_params *)p)->threshold)};
}

OG_EW_KERNEL3(og_relu_fwd, og_no_consts, og_no_setup, 1, 1,
              { vstore(outs[0], vmax(vset(0.0f), vload(ins[0]))); })

OG_EW_KERNEL3(og_threshold_bwd, threshold_consts, threshold_setup, 2, 1,
              { vstore(outs[0], vsel(vgt(vload(ins[1]), c.th), vload(ins[0]), vset(0.0f))); })

// ---- float64 (the same conventions: relu(NaN) = NaN, relu(-0) = -0; a NaN x gives 0)
OG_EW_KERNEL64(og_relu_fwd, void, {
    double x = X64(0);
    Y64(0) = x < 0 ? 0.0 : x;
})
OG_EW_KERNEL64(og_threshold_bwd, og_threshold_params, {
    double g = X64(0), x = X64(1);
    Y64(0) = x > prm->threshold64 ? g : 0.0;
})
