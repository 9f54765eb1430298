/* aclnnop/aclnn_apply_adam_w.h - one AdamW step on one tensor, in place, with its
 * hyperparameters in one-element tensors (ops-nn optim/apply_adam_w).
 *
 * beta1Power, beta2Power hold beta^(t-1); beta^t = betaPower * beta. g = maximize ? -grad : grad;
 * varRef *= 1 - lr * weightDecay; mRef = beta1 mRef + (1 - beta1) g;
 * vRef = beta2 vRef + (1 - beta2) g^2; v = amsgrad ? max(maxGradNormOptional, vRef) : vRef
 * (maxGradNormOptional is read, never written: upstream's kernel);
 * varRef -= lr / (1 - beta1^t) * mRef / (sqrt(v) / sqrt(1 - beta2^t) + eps).
 * Every tensor FLOAT, FLOAT16 or BFLOAT16, all of varRef's dtype (computed in fp32, rounded once
 * on store); mRef, vRef, grad, maxGradNormOptional of varRef's shape; the seven hyperparameter
 * tensors one element each. maxGradNormOptional is required with amsgrad, ignored without. */
#ifndef OPGRAD_ACLNN_APPLY_ADAM_W_H
#define OPGRAD_ACLNN_APPLY_ADAM_W_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnApplyAdamWGetWorkspaceSize(
    aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, const aclTensor *beta1Power,
    const aclTensor *beta2Power, const aclTensor *lr, const aclTensor *weightDecay,
    const aclTensor *beta1, const aclTensor *beta2, const aclTensor *eps, const aclTensor *grad,
    const aclTensor *maxGradNormOptional, bool amsgrad, bool maximize, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnApplyAdamW(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
