/* Add kernels, written once against vec.h and compiled per ISA (fp32, and fused bf16 / fp16:
 * vec16.h). self + alpha * other is one fused multiply-add (a single rounding; exactly
 * self + other when alpha = 1). */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/math/add/add_kernel.h"

typedef struct add_consts {
    vf alpha, other;
} add_consts;

static inline add_consts add_setup(const void *p) {
    const og_add_params *ap = p;
    return (add_consts){vset(ap->alpha), vset(ap->other)};
}

OG_EW_KERNEL3(og_add, add_consts, add_setup, 2, 1,
              { vstore(outs[0], vfma(c.alpha, vload(ins[1]), vload(ins[0]))); })

OG_EW_KERNEL3(og_adds, add_consts, add_setup, 1, 1,
              { vstore(outs[0], vfma(c.alpha, c.other, vload(ins[0]))); })

// ---- float64: one fused multiply-add, as in float
OG_EW_KERNEL64(og_add, og_add_params, { Y64(0) = fma(prm->alpha64, X64(1), X64(0)); })
OG_EW_KERNEL64(og_adds, og_add_params, { Y64(0) = fma(prm->alpha64, prm->other64, X64(0)); })
