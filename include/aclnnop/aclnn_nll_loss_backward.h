/* aclnnop/aclnn_nll_loss_backward.h - the gradient of aclnnNLLLoss w.r.t. self.
 *
 * gradOutput [N] (reduction 0 with a 2-d self), else one element ([1] or 0-d); self [N, C] or [C]
 * (only its shape is used); target as the forward; weight [C]; totalWeight [1] (read for mean);
 * out self's shape and dtype:
 *   out[n, c] = -g_n w[t_n] [c == t_n], g_n = gradOutput[n] (none), gradOutput (sum),
 *   gradOutput / totalWeight (mean); 0 on rows whose target is ignoreIndex or outside [0, C). */
#ifndef OPGRAD_ACLNN_NLL_LOSS_BACKWARD_H
#define OPGRAD_ACLNN_NLL_LOSS_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
    const aclTensor *weight, int64_t reduction, int64_t ignoreIndex, const aclTensor *totalWeight,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnNLLLossBackward(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
