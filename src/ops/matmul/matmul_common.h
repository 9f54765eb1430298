/* Phase-1 helpers shared by the matmul family (matmul_api.c, fused_matmul_api.c): the
 * cubeMathType rule, tensors described as GEMM operands, the memory rules of a matrix product and
 * the publication of a program. Host code only. */
#ifndef OG_OPS_MATMUL_COMMON_H
#define OG_OPS_MATMUL_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/gemm.h"
#include "engine/program.h"
#include "ops/common/checks.h"

/// cubeMathType in [0, 4]: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32,
/// 4 USE_FP32_ADD (161002 naming the value otherwise).
aclnnStatus og_mm_check_cube_math(const og_opdesc *op, int8_t cubeMathType);

/// The rounding of A and B while packing that cubeMathType asks for (og_gemm_op.round_ab), given
/// the promoted dtype of the inputs: USE_FP16 rounds FLOAT inputs through fp16 (ops-nn does not
/// enable it for 16-bit inputs: fp16 is exact already, bf16 stays bf16); every other mode
/// computes exact fp32 products of the widened inputs (docs/ops/matmul.md).
aclDataType og_mm_round_ab(int8_t cubeMathType, aclDataType promoted);

/// Tensor t (slot `slot`) as an operand of a GEMM whose C has nbatch batch dims: row_dim and
/// col_dim are t's dims holding the matrix rows and columns, -1 for a unit dim that t lacks (a
/// 1-D operand is a row or a column); the dims before them are t's batch dims, right-aligned with
/// C's. Dims of size 1 and missing dims broadcast (stride 0).
og_gemm_mat og_mm_mat(const aclTensor *t, int slot, int nbatch, int row_dim, int col_dim);

/// The transposed operand (a matrix with its strides swapped).
static inline og_gemm_mat og_mm_transposed(og_gemm_mat m) {
    int64_t rs = m.rs;
    m.rs = m.cs;
    m.cs = rs;
    return m;
}

/// The memory rules of a matrix product: a non-empty tensor has data (161001); a non-empty output
/// writes no address twice, overlaps no input (a product reads its operands while it writes) and
/// no other output (161002). Input k may share memory with an output element for element when bit
/// k of inplace_ok is set (the addend of Addmm, read once per element in the epilogue). NULL
/// tensors (optional ones not given) are skipped.
aclnnStatus og_mm_check_memory(const og_opdesc *op, int nin, const aclTensor *const *in,
                               const char *const *in_names, unsigned inplace_ok, int nout,
                               const aclTensor *const *out, const char *const *out_names);

/// The product of n dims.
int64_t og_mm_numel(const int64_t *dims, int n);

#endif
