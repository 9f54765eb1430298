/* aclnnop/aclnn_fused_adamw.h - one AdamW step over lists of tensors, in place (ops-nn
 * optim/fused_adamw).
 *
 * Skipped entirely (nothing written) when foundInfOptional holds 1. Per tensor i, with
 * t = stateSteps[i] + 1 (the steps are never written) and g = grads[i] / gradScaleOptional,
 * negated with maximize: p *= 1 - lr * weightDecay; m = beta1 m + (1 - beta1) g;
 * v = beta2 v + (1 - beta2) g^2; with amsgrad vmax = max(vmax, v);
 * p -= lr / (1 - beta1^t) * m / (sqrt(amsgrad ? vmax : v) / sqrt(1 - beta2^t) + eps).
 * paramsRef, grads, expAvgsRef, expAvgSqsRef, maxExpAvgSqsRef (required with amsgrad): lists of
 * one length (not empty), FLOAT / FLOAT16 / BFLOAT16, one dtype for all, tensor i of each list of
 * one shape. stateSteps: INT64 or FLOAT tensors of one element, one dtype. gradScaleOptional,
 * foundInfOptional: FLOAT, one element (an empty tensor counts as absent). lr, betas,
 * weightDecay >= 0. */
#ifndef OPGRAD_ACLNN_FUSED_ADAMW_H
#define OPGRAD_ACLNN_FUSED_ADAMW_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnFusedAdamwGetWorkspaceSize(
    const aclTensorList *paramsRef, const aclTensorList *grads, const aclTensorList *expAvgsRef,
    const aclTensorList *expAvgSqsRef, const aclTensorList *maxExpAvgSqsRef,
    const aclTensorList *stateSteps, const aclTensor *gradScaleOptional,
    const aclTensor *foundInfOptional, double lr, double beta1, double beta2, double weightDecay,
    double eps, bool amsgrad, bool maximize, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnFusedAdamw(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
