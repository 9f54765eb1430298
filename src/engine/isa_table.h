/* Kernel tables indexed by ISA level (opgrad_isa).
 *
 * A kernel source (*_simd.c) is compiled three times, with the symbol suffixes __scalar, __avx2
 * and __avx512 (engine/simd/vec.h, OG_FN). The levels above AVX-512 (AVX512-BF16, AVX512-FP16,
 * AMX) run the AVX-512 build, except where a kernel has a variant of its own for a level: the
 * fused bf16 kernels and the bf16 CopyOut round with vcvtne(2)ps2bf16 from AVX512-BF16 up
 * (OG_ISA_TABLE_BF16). A plan picks its table entry once, in phase 1, from og_isa(); no kernel
 * asks the CPU for a feature while it runs. */
#ifndef OG_ISA_TABLE_H
#define OG_ISA_TABLE_H

#include "opgrad/opgrad.h"

_Static_assert(OPGRAD_ISA_COUNT == 6, "a new ISA level needs its column in the tables below");

/// {fn__scalar, fn__avx2, fn__avx512 for every level from AVX-512 up}.
#define OG_ISA_TABLE(fn)                                                                           \
    {                                                                                              \
        [OPGRAD_ISA_SCALAR] = fn##__scalar, [OPGRAD_ISA_AVX2] = fn##__avx2,                        \
        [OPGRAD_ISA_AVX512] = fn##__avx512, [OPGRAD_ISA_AVX512_BF16] = fn##__avx512,               \
        [OPGRAD_ISA_AVX512_FP16] = fn##__avx512, [OPGRAD_ISA_AMX] = fn##__avx512,                  \
    }

/// The same, with fnbf16__avx512 (a variant using AVX512-BF16 instructions) from that level up.
#define OG_ISA_TABLE_BF16(fn, fnbf16)                                                              \
    {                                                                                              \
        [OPGRAD_ISA_SCALAR] = fn##__scalar, [OPGRAD_ISA_AVX2] = fn##__avx2,                        \
        [OPGRAD_ISA_AVX512] = fn##__avx512, [OPGRAD_ISA_AVX512_BF16] = fnbf16##__avx512,           \
        [OPGRAD_ISA_AVX512_FP16] = fnbf16##__avx512, [OPGRAD_ISA_AMX] = fnbf16##__avx512,          \
    }

/// {{fn_bf16__scalar, fn_f16__scalar}, ...}: a table [OPGRAD_ISA_COUNT][bf16, fp16] of the
/// 16-bit entry points of a kernel og_<name> (row kernels' og_row16_fn).
#define OG_ISA_TABLE16(fn)                                                                         \
    {                                                                                              \
        [OPGRAD_ISA_SCALAR] = {fn##_bf16__scalar, fn##_f16__scalar},                               \
        [OPGRAD_ISA_AVX2] = {fn##_bf16__avx2, fn##_f16__avx2},                                     \
        [OPGRAD_ISA_AVX512] = {fn##_bf16__avx512, fn##_f16__avx512},                               \
        [OPGRAD_ISA_AVX512_BF16] = {fn##_bf16__avx512, fn##_f16__avx512},                          \
        [OPGRAD_ISA_AVX512_FP16] = {fn##_bf16__avx512, fn##_f16__avx512},                          \
        [OPGRAD_ISA_AMX] = {fn##_bf16__avx512, fn##_f16__avx512},                                  \
    }

/// The build (OPGRAD_ISA_SCALAR, _AVX2 or _AVX512) whose code runs at `isa`.
static inline opgrad_isa og_isa_build(opgrad_isa isa) {
    return isa > OPGRAD_ISA_AVX512 ? OPGRAD_ISA_AVX512 : isa;
}

#endif
