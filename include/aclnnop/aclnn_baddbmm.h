/* aclnnop/aclnn_baddbmm.h - Baddbmm, InplaceBaddbmm (ops-nn matmul/batch_mat_mul_v3).
 *
 * out[B,M,N] = beta * self + alpha * (batch1[B,M,K] @ batch2[B,K,N]); self broadcasts to
 * [B,M,N] (Inplace: selfRef is [B,M,N] and receives the result). beta = 0 ignores self.
 * dtypes FLOAT, FLOAT16, BFLOAT16: the inputs promote, out is castable from the promotion; the
 * products accumulate in fp32 in a fixed K order (results do not depend on the thread count or
 * the ISA) and are rounded once to out's dtype (a bf16/fp16 product into a FLOAT out keeps the
 * unrounded accumulator). cubeMathType: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16,
 * 3 USE_HF32, 4 USE_FP32_ADD; what each computes on the CPU is in docs/ops/matmul.md. Any
 * strides (a transposed view is read in place); empty tensors are a no-op (an empty K gives a
 * zero product). */
#ifndef OPGRAD_ACLNN_BADDBMM_H
#define OPGRAD_ACLNN_BADDBMM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBaddbmmGetWorkspaceSize(const aclTensor *self, const aclTensor *batch1,
                                                   const aclTensor *batch2, const aclScalar *beta,
                                                   const aclScalar *alpha, aclTensor *out,
                                                   int8_t cubeMathType, uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBaddbmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceBaddbmmGetWorkspaceSize(
    const aclTensor *selfRef, const aclTensor *batch1, const aclTensor *batch2,
    const aclScalar *beta, const aclScalar *alpha, int8_t cubeMathType, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceBaddbmm(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
