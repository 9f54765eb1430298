/* Mul kernels, written once against vec.h and compiled per ISA. */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/math/mul/mul_kernel.h"

typedef struct muls_consts {
    vf other;
} muls_consts;

static inline muls_consts muls_setup(const void *p) {
    return (muls_consts){vset(((const og_muls_params *)p)->other)};
}

OG_EW_KERNEL3(og_mul, og_no_consts, og_no_setup, 2, 1,
              { vstore(outs[0], vmul(vload(ins[0]), vload(ins[1]))); })

OG_EW_KERNEL3(og_muls, muls_consts, muls_setup, 1, 1,
              { vstore(outs[0], vmul(vload(ins[0]), c.other)); })

// ---- float64
OG_EW_KERNEL64(og_mul, void, { Y64(0) = X64(0) * X64(1); })
OG_EW_KERNEL64(og_muls, og_muls_params, { Y64(0) = X64(0) * prm->other64; })
