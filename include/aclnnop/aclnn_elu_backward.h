/* aclnnop/aclnn_elu_backward.h - EluBackward (EluGradV2):
 *
 *   isResult = false (selfOrResult = the forward's input x):
 *     gradInput = gradOutput * (x > 0 ? scale : inputScale * alpha * scale * exp(x * inputScale))
 *   isResult = true (selfOrResult = the forward's output y):
 *     gradInput = gradOutput * (y > 0 ? scale : inputScale * (y + alpha * scale))
 *
 * Signature as ops-nn activation/elu_grad_v2/op_api/aclnn_elu_backward.h. alpha, scale,
 * inputScale: aclScalars of any dtype castable to FLOAT, converted to float; isResult with a
 * negative alpha is rejected with 161002, as in ops-nn. gradOutput, selfOrResult and gradInput
 * have the same shape (no broadcasting, as in ops-nn); dtypes FLOAT, FLOAT16, BFLOAT16;
 * gradInput has a floating dtype. ops-nn requires gradOutput's dtype to equal selfOrResult's;
 * opgrad also accepts another floating dtype and promotes (PyTorch rules). 0-8 dims, any
 * strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_ELU_BACKWARD_H
#define OPGRAD_ACLNN_ELU_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnEluBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclScalar *alpha, const aclScalar *scale,
    const aclScalar *inputScale, bool isResult, const aclTensor *selfOrResult, aclTensor *gradInput,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnEluBackward(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
