/* aclnnop/aclnn_cross_entropy_loss_grad.h - the gradient of aclnnCrossEntropyLoss w.r.t. input.
 *
 * gradLoss [N] for "none", 0-d for "mean" / "sum" (FLOAT, FLOAT16, BFLOAT16); logProb [N, C] the
 * forward's logProbOut; target [N] INT64; weightOptional [C] FLOAT or NULL; out [N, C] gradLoss's
 * dtype. With p = exp(logProb), eps = labelSmoothing (PyTorch's semantics, any value in [0, 1]):
 *   out[n, c] = g_n ((1 - eps) w[t_n] (p[n, c] - [c == t_n]) + (eps / C) (W p[n, c] - w[c])),
 *   W = sum_c w[c]; g_n = gradLoss[n] ("none"), gradLoss ("sum"), gradLoss / sum of w[t_n] over
 *   the rows not ignored ("mean"); rows with t_n == ignoreIndex or outside [0, C) are 0.
 * gradZlossOptional and lseForZlossOptional must be NULL and lseSquareScaleForZloss 0 (the zloss
 * is not supported, 161002). */
#ifndef OPGRAD_ACLNN_CROSS_ENTROPY_LOSS_GRAD_H
#define OPGRAD_ACLNN_CROSS_ENTROPY_LOSS_GRAD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCrossEntropyLossGradGetWorkspaceSize(
    const aclTensor *gradLoss, const aclTensor *logProb, const aclTensor *target,
    const aclTensor *weightOptional, const aclTensor *gradZlossOptional,
    const aclTensor *lseForZlossOptional, char *reductionOptional, int64_t ignoreIndex,
    double labelSmoothing, double lseSquareScaleForZloss, const aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnCrossEntropyLossGrad(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
