/* The ISA tables of the softmax row kernels (softmax_kernel.h). */
#include "engine/isa_table.h"
#include "ops/softmax/softmax_kernel.h"

const og_row_fn og_softmax_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_softmax_fwd);
const og_row_fn og_log_softmax_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_log_softmax_fwd);
const og_row_fn og_softmax_bwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_softmax_bwd);
const og_row_fn og_log_softmax_bwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_log_softmax_bwd);

const og_row16_fn og_softmax_fwd_kernels16[OPGRAD_ISA_COUNT][2] = OG_ISA_TABLE16(og_softmax_fwd);
const og_row16_fn og_log_softmax_fwd_kernels16[OPGRAD_ISA_COUNT][2] =
    OG_ISA_TABLE16(og_log_softmax_fwd);
const og_row16_fn og_softmax_bwd_kernels16[OPGRAD_ISA_COUNT][2] = OG_ISA_TABLE16(og_softmax_bwd);
const og_row16_fn og_log_softmax_bwd_kernels16[OPGRAD_ISA_COUNT][2] =
    OG_ISA_TABLE16(og_log_softmax_bwd);

const og_row64_fn og_softmax_fwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_softmax_fwd_f64);
const og_row64_fn og_log_softmax_fwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_log_softmax_fwd_f64);
const og_row64_fn og_softmax_bwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_softmax_bwd_f64);
const og_row64_fn og_log_softmax_bwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_log_softmax_bwd_f64);
