/* aclnnop/aclnn_adaptive_avg_pool2d_backward.h - the gradient of aclnnAdaptiveAvgPool2d: each
 * input element gathers gradOutput / window size over the windows that contain it (output order:
 * deterministic). gradOutput: [N, C, Hout, Wout] (or [C, Hout, Wout]), self's dtype and rank;
 * self: the forward's input; out: the gradient, self's shape and dtype. docs/ops/pool.md. */
#ifndef OPGRAD_ACLNN_ADAPTIVE_AVG_POOL2D_BACKWARD_H
#define OPGRAD_ACLNN_ADAPTIVE_AVG_POOL2D_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                     const aclTensor *self,
                                                                     aclTensor *out,
                                                                     uint64_t *workspaceSize,
                                                                     aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAdaptiveAvgPool2dBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor,
                                                     const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
