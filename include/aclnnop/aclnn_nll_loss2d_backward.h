/* aclnnop/aclnn_nll_loss2d_backward.h - the gradient of aclnnNLLLoss2d w.r.t. self: gradOutput
 * [N, H, W] (reduction 0) or one element; self [N, C, H, W] (only its shape is used); target
 * [N, H, W]; weight [C]; totalWeight [1] (read for mean); out self's shape and dtype. As
 * aclnnNLLLossBackward (aclnn_nll_loss_backward.h), per pixel. */
#ifndef OPGRAD_ACLNN_NLL_LOSS2D_BACKWARD_H
#define OPGRAD_ACLNN_NLL_LOSS2D_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNLLLoss2dBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
    const aclTensor *weight, int64_t reduction, int64_t ignoreIndex, aclTensor *totalWeight,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnNLLLoss2dBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
