/* Per-ISA tables of the shared engine's own kernels. */
#include "engine/convert.h"

#define CONVERT_ENTRY(sfx)                                                                         \
    {                                                                                              \
        og_cvt_f16_to_f32__##sfx, og_cvt_bf16_to_f32__##sfx, og_cvt_f32_to_f16__##sfx,             \
            og_cvt_f32_to_bf16__##sfx, og_copy_f32__##sfx                                          \
    }

const og_convert_table og_convert[OPGRAD_ISA_COUNT] = {
    [OPGRAD_ISA_SCALAR] = CONVERT_ENTRY(scalar),
    [OPGRAD_ISA_AVX2] = CONVERT_ENTRY(avx2),
    [OPGRAD_ISA_AVX512] = CONVERT_ENTRY(avx512),
};
