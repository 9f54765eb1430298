/* aclnnop/aclnn_batch_norm_backward.h - BatchNormBackward (ops-nn norm/batch_norm_grad_v3).
 *
 * The gradients of aclnnBatchNorm (aclnn_batch_norm.h). Training (the batch statistics saveMean,
 * saveInvstd = 1/sqrt(var + eps) are functions of the input), per channel over K = N * spatial:
 *   gradInput  = weight * invstd * (gradOut - mean(gradOut) - xhat * mean(gradOut * xhat)),
 *                xhat = (input - saveMean) * invstd
 *   gradWeight = sum(gradOut * (input - saveMean)) * invstd,   gradBias = sum(gradOut)
 * Eval (runningMean / runningVar are constants): gradInput = gradOut * weight / sqrt(runningVar +
 * eps), gradWeight = sum(gradOut * (input - runningMean)) / sqrt(runningVar + eps).
 * outputMask (3 entries) selects gradInput, gradWeight, gradBias; an unselected output may be
 * NULL. weight NULL = 1. */
#ifndef OPGRAD_ACLNN_BATCH_NORM_BACKWARD_H
#define OPGRAD_ACLNN_BATCH_NORM_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclTensor *weight,
    const aclTensor *runningMean, const aclTensor *runningVar, const aclTensor *saveMean,
    const aclTensor *saveInvstd, bool training, double eps, const aclBoolArray *outputMask,
    aclTensor *gradInput, aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBatchNormBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
