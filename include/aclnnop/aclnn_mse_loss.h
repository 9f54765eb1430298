/* aclnnop/aclnn_mse_loss.h - MSE loss: (self - target)^2 per element of the broadcast shape;
 * reduction 0 none (out has the broadcast shape), 1 mean, 2 sum (out is 0-D). dtypes FLOAT,
 * FLOAT16, BFLOAT16 (computed and summed in fp32); 0-8 dims, any strides. */
#ifndef OPGRAD_ACLNN_MSE_LOSS_H
#define OPGRAD_ACLNN_MSE_LOSS_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                                   int64_t reduction, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMseLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
