/* aclnnop/aclnn_mish_backward.h - MishBackward (MishGrad).
 *
 * gradInput = gradOutput * (t + self * sigmoid(self) * (1 - t^2)),  t = tanh(softplus(self)).
 * gradOutput and self broadcast (NumPy rules) and promote (PyTorch rules) among FLOAT, FLOAT16,
 * BFLOAT16; gradInput has the broadcast shape and a dtype the promoted type can be cast to.
 * Evaluated in an overflow-free piecewise form (x > 0 / x <= 0); NaN propagates. */
#ifndef OPGRAD_ACLNN_MISH_BACKWARD_H
#define OPGRAD_ACLNN_MISH_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMishBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                        const aclTensor *self, aclTensor *gradInput,
                                                        uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMishBackward(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

/* opgrad extension: the MishGrad branch that reuses tanhx = tanh(softplus(self)) saved by
 * aclnnMishWithTanhx: gradInput = gradOutput * (tanhx + self * sigmoid(self) * (1 - tanhx^2)).
 * gradOutput, self and tanhx broadcast and promote together. */
ACLNN_API aclnnStatus aclnnMishBackwardWithTanhxGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *tanhx,
    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMishBackwardWithTanhx(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
