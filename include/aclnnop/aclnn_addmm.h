/* aclnnop/aclnn_addmm.h - Addmm, InplaceAddmm (ops-nn matmul/mat_mul_v3).
 *
 * out[M,N] = beta * self + alpha * (mat1[M,K] @ mat2[K,N]); self broadcasts to [M,N] (Inplace:
 * selfRef is [M,N] and receives the result). beta = 0 ignores self (a NaN in it does not
 * propagate). The sum is formed in fp32 from the fp32 product and rounded once.
 * dtypes FLOAT, FLOAT16, BFLOAT16: the inputs promote, out is castable from the promotion; the
 * products accumulate in fp32 in a fixed K order (results do not depend on the thread count or
 * the ISA) and are rounded once to out's dtype (a bf16/fp16 product into a FLOAT out keeps the
 * unrounded accumulator). cubeMathType: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16,
 * 3 USE_HF32, 4 USE_FP32_ADD; what each computes on the CPU is in docs/ops/matmul.md. Any
 * strides (a transposed view is read in place); empty tensors are a no-op (an empty K gives a
 * zero product). */
#ifndef OPGRAD_ACLNN_ADDMM_H
#define OPGRAD_ACLNN_ADDMM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1,
                                                 const aclTensor *mat2, const aclScalar *beta,
                                                 const aclScalar *alpha, aclTensor *out,
                                                 int8_t cubeMathType, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(
    const aclTensor *selfRef, const aclTensor *mat1, const aclTensor *mat2, const aclScalar *beta,
    const aclScalar *alpha, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceAddmm(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
