/* Mul kernels, written once against vec.h and compiled per ISA. */
#include "engine/simd/vec.h"
#include "ops/math/mul/mul_kernel.h"

void OG_FN(og_mul)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    OG_EW_LOOP(n, 2, in, 1, out, { vstore(outs[0], vmul(vload(ins[0]), vload(ins[1]))); });
}

void OG_FN(og_muls)(size_t n, const float *const *in, float *const *out, const void *p) {
    vf other = vset(((const og_muls_params *)p)->other);
    OG_EW_LOOP(n, 1, in, 1, out, { vstore(outs[0], vmul(vload(ins[0]), other)); });
}
