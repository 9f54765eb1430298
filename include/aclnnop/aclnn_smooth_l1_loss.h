/* aclnnop/aclnn_smooth_l1_loss.h - SmoothL1 loss: d = self - target, 0.5 d^2 / beta where |d| <
 * beta, else |d| - 0.5 beta (beta >= 0; beta = 0 is the L1 loss); reduction 0 none, 1 mean, 2 sum
 * (result 0-D or [1]). dtypes FLOAT, FLOAT16, BFLOAT16 (computed and summed in fp32); 0-8 dims, any
 * strides. */
#ifndef OPGRAD_ACLNN_SMOOTH_L1_LOSS_H
#define OPGRAD_ACLNN_SMOOTH_L1_LOSS_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSmoothL1LossGetWorkspaceSize(const aclTensor *self,
                                                        const aclTensor *target, int64_t reduction,
                                                        float beta, aclTensor *result,
                                                        uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSmoothL1Loss(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
