/* The ISA tables of the cross-entropy row kernels (ce_kernel.h). */
#include "engine/isa_table.h"
#include "ops/cross_entropy/ce_kernel.h"

const og_row_fn og_ce_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_ce_fwd);
const og_row_fn og_nll_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_nll_fwd);
const og_row_fn og_ce_bwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_ce_bwd);
const og_row_fn og_nll_bwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_nll_bwd);
const og_row_fn og_ce_wt_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_ce_wt);
const og_row_fn og_ce_scalar_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_ce_scalar);
const og_row64_fn og_ce_fwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_ce_fwd_f64);
const og_row64_fn og_nll_fwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_nll_fwd_f64);
const og_row64_fn og_ce_bwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_ce_bwd_f64);
const og_row64_fn og_nll_bwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_nll_bwd_f64);
const og_row64_fn og_ce_wt_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_ce_wt_f64);
const og_row64_fn og_ce_scalar_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_ce_scalar_f64);
