/* The ISA tables of the softmax row kernels (softmax_kernel.h). */
#include "engine/isa_table.h"
#include "ops/softmax/softmax_kernel.h"

const og_row_fn og_softmax_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_softmax_fwd);
const og_row_fn og_log_softmax_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_log_softmax_fwd);
const og_row_fn og_softmax_bwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_softmax_bwd);
const og_row_fn og_log_softmax_bwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_log_softmax_bwd);

#define ROW16_TABLE(name)                                                                          \
    {                                                                                              \
        [OPGRAD_ISA_SCALAR] = {og_##name##_bf16__scalar, og_##name##_f16__scalar},                 \
        [OPGRAD_ISA_AVX2] = {og_##name##_bf16__avx2, og_##name##_f16__avx2},                       \
        [OPGRAD_ISA_AVX512] = {og_##name##_bf16__avx512, og_##name##_f16__avx512},                 \
        [OPGRAD_ISA_AVX512_BF16] = {og_##name##_bf16__avx512, og_##name##_f16__avx512},            \
        [OPGRAD_ISA_AVX512_FP16] = {og_##name##_bf16__avx512, og_##name##_f16__avx512},            \
        [OPGRAD_ISA_AMX] = {og_##name##_bf16__avx512, og_##name##_f16__avx512},                    \
    }
const og_row16_fn og_softmax_fwd_kernels16[OPGRAD_ISA_COUNT][2] = ROW16_TABLE(softmax_fwd);
const og_row16_fn og_log_softmax_fwd_kernels16[OPGRAD_ISA_COUNT][2] = ROW16_TABLE(log_softmax_fwd);
const og_row16_fn og_softmax_bwd_kernels16[OPGRAD_ISA_COUNT][2] = ROW16_TABLE(softmax_bwd);
const og_row16_fn og_log_softmax_bwd_kernels16[OPGRAD_ISA_COUNT][2] = ROW16_TABLE(log_softmax_bwd);

const og_row64_fn og_softmax_fwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_softmax_fwd_f64);
const og_row64_fn og_log_softmax_fwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_log_softmax_fwd_f64);
const og_row64_fn og_softmax_bwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_softmax_bwd_f64);
const og_row64_fn og_log_softmax_bwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_log_softmax_bwd_f64);
