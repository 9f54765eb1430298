/* aclnnop/aclnn_fused_matmul.h - FusedMatmul (ops-nn matmul/fused_mat_mul): a matrix product
 * with its epilogue applied before the result leaves the cache.
 *
 *   fusedOpType ""          y = x1 @ x2 + bias          "relu"      y = relu(x1 @ x2 + bias)
 *               "add"       y = (x1 @ x2 + bias) + x3   "mul"       y = (x1 @ x2 + bias) * x3
 *               "gelu_erf"  y = gelu_erf(x1 @ x2)       "gelu_tanh" y = gelu_tanh(x1 @ x2)
 *               "16cast32"  y = float32(x1 @ x2 + bias)
 * bias ([N] or [1,N]) is optional and refused (161001) for the gelus; x3 (y's last two dims,
 * batch 1 or y's) is required for add/mul. The upstream dtype rules hold: gelu_* and 16cast32
 * take FLOAT16/BFLOAT16 inputs; "", "relu", "add", "mul" take FLOAT inputs only with
 * cubeMathType 3 (USE_HF32). x1 @ x2 + bias is formed in fp32 and rounded once, after the
 * epilogue. The backward is aclnnFusedMatmulBackward (aclnn_fused_matmul_backward.h).
 * dtypes FLOAT, FLOAT16, BFLOAT16: the inputs promote, out is castable from the promotion; the
 * products accumulate in fp32 in a fixed K order (results do not depend on the thread count or
 * the ISA) and are rounded once to out's dtype (a bf16/fp16 product into a FLOAT out keeps the
 * unrounded accumulator). cubeMathType: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16,
 * 3 USE_HF32, 4 USE_FP32_ADD; what each computes on the CPU is in docs/ops/matmul.md. Any
 * strides (a transposed view is read in place); empty tensors are a no-op (an empty K gives a
 * zero product). */
#ifndef OPGRAD_ACLNN_FUSED_MATMUL_H
#define OPGRAD_ACLNN_FUSED_MATMUL_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnFusedMatmulGetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                                       const aclTensor *bias, const aclTensor *x3,
                                                       const char *fusedOpType, int8_t cubeMathType,
                                                       const aclTensor *y, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnFusedMatmul(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
