/* aclnnop/aclnn_fused_sgd.h - one SGD step over lists of tensors, in place (ops-nn
 * optim/fused_sgd), torch.optim.SGD's rule.
 *
 * Per tensor: g = gradsRef / gradScaleOptional (written back into gradsRef when gradScale is
 * given); d = (maximize ? -g : g) + weightDecay p; with buffers: buf = isFirstStep ? d :
 * momentum buf + (1 - dampening) d, d = nesterov ? d + momentum buf : buf; p -= lr d.
 * paramsRef, gradsRef, momentumBufferListOptionalRef: lists of one length (not empty), FLOAT /
 * FLOAT16 / BFLOAT16, one dtype, tensor i of each list of one shape; an empty buffer list counts
 * as absent. momentum must be > 0 with buffers and 0 without; nesterov needs momentum > 0 and
 * dampening 0; weightDecay, momentum, lr >= 0. gradScaleOptional: FLOAT, one element. */
#ifndef OPGRAD_ACLNN_FUSED_SGD_H
#define OPGRAD_ACLNN_FUSED_SGD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnFusedSgdGetWorkspaceSize(
    const aclTensorList *paramsRef, const aclTensorList *gradsRef,
    const aclTensorList *momentumBufferListOptionalRef, const aclTensor *gradScaleOptional,
    float weightDecay, float momentum, float lr, float dampening, bool nesterov, bool maximize,
    bool isFirstStep, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnFusedSgd(void *workspace, uint64_t workspaceSize,
                                    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
