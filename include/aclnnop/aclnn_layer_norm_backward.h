/* aclnnop/aclnn_layer_norm_backward.h - The gradients of LayerNorm from the forward's saved
 * mean and rstd ([A..., 1...], or any shape with one element per row). outputMask (3 entries)
 * selects gradInputOut (input's shape), gradWeightOut and gradBiasOut (normalizedShape); a true
 * entry with a NULL output is 161001, a false entry's output is not written (may be NULL). The
 * weight and bias gradients are sums over the rows in a fixed order (docs/ops/norm.md). */
#ifndef OPGRAD_ACLNN_LAYER_NORM_BACKWARD_H
#define OPGRAD_ACLNN_LAYER_NORM_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclIntArray *normalizedShape,
    const aclTensor *mean, const aclTensor *rstd, const aclTensor *weightOptional,
    const aclTensor *biasOptional, const aclBoolArray *outputMask, aclTensor *gradInputOut,
    aclTensor *gradWeightOut, aclTensor *gradBiasOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnLayerNormBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
