/* aclnnop/aclnn_max_pool2d_with_indices_backward.h - the gradient of aclnnMaxPool2dWithIndices:
 * each gradOutput element is added to gradInput at the position its index names (the sum of all
 * windows that picked the same element, in output order: deterministic).
 *
 * gradOutput: the forward's out shape; self: the forward's input (its shape); indices: INT32 or
 * INT64, gradOutput's shape; gradInput: self's shape and dtype. The pooling attributes as in the
 * forward (they fix the output shape gradOutput must have). An index outside [0, H * W) adds
 * nothing. docs/ops/pool.md. */
#ifndef OPGRAD_ACLNN_MAX_POOL2D_WITH_INDICES_BACKWARD_H
#define OPGRAD_ACLNN_MAX_POOL2D_WITH_INDICES_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
    const aclIntArray *kernelSize, const aclIntArray *stride, const aclIntArray *padding,
    const aclIntArray *dilation, bool ceilMode, aclTensor *gradInput, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesBackward(void *workspace, uint64_t workspaceSize,
                                                        aclOpExecutor *executor,
                                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
