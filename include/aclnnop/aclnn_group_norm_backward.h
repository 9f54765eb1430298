/* aclnnop/aclnn_group_norm_backward.h - GroupNormBackward (ops-nn norm/group_norm_grad).
 *
 * The gradients of aclnnGroupNorm (aclnn_group_norm.h) given its saved mean and rstd [N, group]:
 * per (n, g) over M = C/group * HxW values, with xhat = (input - mean) * rstd, g = gradOut * gamma,
 *   gradInput    = rstd * (g - mean(g) - xhat * mean(g * xhat))
 *   gradGammaOut = sum over n and HxW of gradOut * xhat,   gradBetaOut = sum of gradOut   ([C])
 * outputMask (3 entries) selects them; an unselected output may be NULL. gamma NULL = 1. */
#ifndef OPGRAD_ACLNN_GROUP_NORM_BACKWARD_H
#define OPGRAD_ACLNN_GROUP_NORM_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGroupNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclTensor *mean, const aclTensor *rstd,
    const aclTensor *gamma, int64_t N, int64_t C, int64_t HxW, int64_t group,
    const aclBoolArray *outputMask, aclTensor *gradInput, aclTensor *gradGammaOut,
    aclTensor *gradBetaOut, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGroupNormBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
