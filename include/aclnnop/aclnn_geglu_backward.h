/* aclnnop/aclnn_geglu_backward.h - GeGluBackward: the backward of aclnnGeGlu.
 *
 * gradInput (self's shape) = [gradOutput * gelu, gradOutput * A * gelu'(B)] along dim, gelu being
 * the forward's outGelu; gradOutput and gelu have self's shape with dim halved; one dtype
 * (FLOAT, FLOAT16, BFLOAT16); approximate 0 (erf) or 1 (tanh). aclnnGeGluV3Backward is the backward
 * of aclnnGeGluV3 (activateLeft: gelu was applied to A).
 */
#ifndef OPGRAD_ACLNN_GEGLU_BACKWARD_H
#define OPGRAD_ACLNN_GEGLU_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGeGluBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *gelu, int64_t dim,
    int64_t approximate, aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGeGluBackward(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnGeGluV3BackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *gelu, int64_t dim,
    int64_t approximate, bool activateLeft, aclTensor *gradInput, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGeGluV3Backward(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
