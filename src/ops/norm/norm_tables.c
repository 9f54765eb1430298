/* The ISA tables of the norm row kernels (norm_kernel.h). */
#include "engine/isa_table.h"
#include "ops/norm/norm_kernel.h"

const og_row_fn og_layer_norm_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_layer_norm_fwd);
const og_row_fn og_rms_norm_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_rms_norm_fwd);
const og_row_fn og_layer_norm_bwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_layer_norm_bwd);
const og_row_fn og_rms_norm_bwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_rms_norm_bwd);
const og_row_acc_fn og_layer_norm_bwd_acc_kernels[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_layer_norm_bwd_acc);
const og_row_acc_fn og_rms_norm_bwd_acc_kernels[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_rms_norm_bwd_acc);
const og_row_fn og_add_layer_norm_fwd_kernels[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_add_layer_norm_fwd);
const og_row_fn og_add_rms_norm_fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_add_rms_norm_fwd);
const og_row_fn og_add_layer_norm_bwd_kernels[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_add_layer_norm_bwd);
const og_row_acc_fn og_add_layer_norm_bwd_acc_kernels[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_add_layer_norm_bwd_acc);

OG_EW_DEFINE_KERNEL_TABLE(norm_copy);
OG_EW_DEFINE_KERNEL64_TABLE(norm_copy);

const og_row64_fn og_layer_norm_fwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_layer_norm_fwd_f64);
const og_row64_fn og_rms_norm_fwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_rms_norm_fwd_f64);
const og_row64_fn og_layer_norm_bwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_layer_norm_bwd_f64);
const og_row64_fn og_rms_norm_bwd_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_rms_norm_bwd_f64);
const og_row_acc64_fn og_layer_norm_bwd_acc_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_layer_norm_bwd_acc_f64);
const og_row_acc64_fn og_rms_norm_bwd_acc_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_rms_norm_bwd_acc_f64);
const og_row64_fn og_add_layer_norm_fwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_add_layer_norm_fwd_f64);
const og_row64_fn og_add_rms_norm_fwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_add_rms_norm_fwd_f64);
const og_row64_fn og_add_layer_norm_bwd_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_add_layer_norm_bwd_f64);
const og_row_acc64_fn og_add_layer_norm_bwd_acc_kernels64[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_add_layer_norm_bwd_acc_f64);
