/* aclnnop/aclnn_apply_adam_w_v2.h - one AdamW step on one tensor, in place (ops-nn
 * optim/apply_adam_w_v2).
 *
 * t = step + 1 (step is never written); g = maximize ? -grad : grad;
 * varRef *= 1 - lr * weightDecay; mRef += (g - mRef) (1 - beta1);
 * vRef = beta2 vRef + (1 - beta2) g^2; with amsgrad maxGradNormOptionalRef = max(it, vRef);
 * varRef -= lr / (1 - beta1^t) * mRef / (sqrt(v) / sqrt(1 - beta2^t) + eps), v the new vRef or
 * (amsgrad) the new maximum.
 * varRef, mRef, vRef, grad, maxGradNormOptionalRef: FLOAT, FLOAT16 or BFLOAT16, one shape, one
 * dtype, or FLOAT varRef / mRef / vRef with a FLOAT16 / BFLOAT16 grad and maxGradNorm (computed
 * in fp32, rounded once on store). maxGradNormOptionalRef is required with amsgrad, ignored
 * without. step: INT64 or FLOAT, one element. lr, beta1, beta2, weightDecay >= 0. */
#ifndef OPGRAD_ACLNN_APPLY_ADAM_W_V2_H
#define OPGRAD_ACLNN_APPLY_ADAM_W_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(
    aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *maxGradNormOptionalRef,
    const aclTensor *grad, const aclTensor *step, float lr, float beta1, float beta2,
    float weightDecay, float eps, bool amsgrad, bool maximize, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnApplyAdamWV2(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
