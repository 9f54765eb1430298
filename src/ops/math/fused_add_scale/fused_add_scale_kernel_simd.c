/* FusedAddScale kernel, written once against vec.h and compiled per ISA: (a + b) * c, two
 * roundings in fp32 (the sum, then the product). */
#include "engine/simd/map64.h"
#include "engine/simd/vec.h"
#include "ops/math/fused_add_scale/fused_add_scale_kernel.h"

void OG_FN(og_fused_add_scale)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    OG_EW_LOOP(n, 3, in, 1, out,
               { vstore(outs[0], vmul(vadd(vload(ins[0]), vload(ins[1])), vload(ins[2]))); });
}

OG_EW_KERNEL64(og_fused_add_scale, void, { Y64(0) = (X64(0) + X64(1)) * X64(2); })
