/* FusedAddScale kernel, written once against vec.h and compiled per ISA: (a + b) * c, two
 * roundings in fp32 (the sum, then the product). */
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "ops/math/fused_add_scale/fused_add_scale_kernel.h"

OG_EW_KERNEL3(og_fused_add_scale, og_no_consts, og_no_setup, 3, 1,
              { vstore(outs[0], vmul(vadd(vload(ins[0]), vload(ins[1])), vload(ins[2]))); })

OG_EW_KERNEL64(og_fused_add_scale, void, { Y64(0) = (X64(0) + X64(1)) * X64(2); })
