/* aclnnop/aclnn_matmul.h - Matmul (ops-nn matmul/mat_mul_v3).
 *
 * out = self @ mat2 with torch.matmul's rules: a 1-D self is a row and a 1-D mat2 a column (that
 * dim is dropped from out); N-D operands multiply their last two dims and broadcast the leading
 * (batch) dims. 1-6 dims upstream, up to 8 here.
 * dtypes FLOAT, FLOAT16, BFLOAT16: the inputs promote, out is castable from the promotion; the
 * products accumulate in fp32 in a fixed K order (results do not depend on the thread count or
 * the ISA) and are rounded once to out's dtype (a bf16/fp16 product into a FLOAT out keeps the
 * unrounded accumulator). cubeMathType: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16,
 * 3 USE_HF32, 4 USE_FP32_ADD; what each computes on the CPU is in docs/ops/matmul.md. Any
 * strides (a transposed view is read in place); empty tensors are a no-op (an empty K gives a
 * zero product). */
#ifndef OPGRAD_ACLNN_MATMUL_H
#define OPGRAD_ACLNN_MATMUL_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
                                                  aclTensor *out, int8_t cubeMathType,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
