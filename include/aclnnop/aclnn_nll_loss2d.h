/* aclnnop/aclnn_nll_loss2d.h - aclnnNLLLoss over images: self [N, C, H, W] of log-probabilities
 * (the class dim 1), target [N, H, W] INT64 or INT32, weight [C] of self's dtype; out [N, H, W]
 * for reduction 0 (none), else [1]; totalWeightOut [1]. Rules and formula as aclnnNLLLoss
 * (aclnn_nll_loss.h), per pixel. */
#ifndef OPGRAD_ACLNN_NLL_LOSS2D_H
#define OPGRAD_ACLNN_NLL_LOSS2D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNLLLoss2dGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                                     const aclTensor *weight, int64_t reduction,
                                                     int64_t ignoreIndex, aclTensor *out,
                                                     aclTensor *totalWeightOut,
                                                     uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnNLLLoss2d(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
