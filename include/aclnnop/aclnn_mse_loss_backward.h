/* aclnnop/aclnn_mse_loss_backward.h - MSE loss backward: out = 2 gradOutput (self - target) (/ N
 * for mean); gradOutput, self, target broadcast and out has their broadcast shape. dtypes FLOAT,
 * FLOAT16, BFLOAT16 (computed and summed in fp32); 0-8 dims, any strides. */
#ifndef OPGRAD_ACLNN_MSE_LOSS_BACKWARD_H
#define OPGRAD_ACLNN_MSE_LOSS_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, int64_t reduction,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMseLossBackward(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
