/* aclnnop/aclnn_l1_loss_backward.h - L1 loss backward: gradInput = gradOutput sign(self - target)
 * (/ N for mean; 0 where self = target); gradInput has the broadcast shape of the three inputs.
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed and summed in fp32); 0-8 dims, any strides. */
#ifndef OPGRAD_ACLNN_L1_LOSS_BACKWARD_H
#define OPGRAD_ACLNN_L1_LOSS_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnL1LossBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, int64_t reduction,
    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnL1LossBackward(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
