/* Per-ISA-level tables of the shared engine's own kernels (engine/isa_table.h). */
#include "engine/convert.h"

#define CONVERT_ENTRY(sfx, bf16)                                                                   \
    {                                                                                              \
        og_cvt_f16_to_f32__##sfx, og_cvt_bf16_to_f32__##sfx, og_cvt_f32_to_f16__##sfx,             \
            og_cvt_##bf16##__##sfx, og_copy_f32__##sfx                                             \
    }

// From AVX512-BF16 up, the bf16 CopyOut rounds with vcvtne2ps2bf16 (og_cvt_f32_to_bf16i).
const og_convert_table og_convert[OPGRAD_ISA_COUNT] = {
    [OPGRAD_ISA_SCALAR] = CONVERT_ENTRY(scalar, f32_to_bf16),
    [OPGRAD_ISA_AVX2] = CONVERT_ENTRY(avx2, f32_to_bf16),
    [OPGRAD_ISA_AVX512] = CONVERT_ENTRY(avx512, f32_to_bf16),
    [OPGRAD_ISA_AVX512_BF16] = CONVERT_ENTRY(avx512, f32_to_bf16i),
    [OPGRAD_ISA_AVX512_FP16] = CONVERT_ENTRY(avx512, f32_to_bf16i),
    [OPGRAD_ISA_AMX] = CONVERT_ENTRY(avx512, f32_to_bf16i),
};
