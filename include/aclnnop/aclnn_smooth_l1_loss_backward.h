/* aclnnop/aclnn_smooth_l1_loss_backward.h - SmoothL1 loss backward: gradInput = gradOut (d / beta
 * where |d| < beta, else sign d)
 * (/ N for mean); gradInput has the broadcast shape of the three inputs.
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed and summed in fp32); 0-8 dims, any strides. */
#ifndef OPGRAD_ACLNN_SMOOTH_L1_LOSS_BACKWARD_H
#define OPGRAD_ACLNN_SMOOTH_L1_LOSS_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSmoothL1LossBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *self, const aclTensor *target, int64_t reduction,
    float beta, aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSmoothL1LossBackward(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
