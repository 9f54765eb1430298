/* aclnnop/aclnn_avgpool2d_backward.h - the gradient of aclnnAvgPool2d: each input element
 * gathers gradOutput / divisor over the windows that contain it (in output order:
 * deterministic). gradOutput: the forward's out shape; self: the forward's input; gradInput:
 * self's shape and dtype. Attributes as in aclnnAvgPool2d. docs/ops/pool.md. */
#ifndef OPGRAD_ACLNN_AVGPOOL2D_BACKWARD_H
#define OPGRAD_ACLNN_AVGPOOL2D_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, bool ceilMode, bool countIncludePad,
    int64_t divisorOverride, int8_t cubeMathType, aclTensor *gradInput, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAvgPool2dBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
