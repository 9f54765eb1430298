/* aclnnop/aclnn_hardswish_backward.h - HardswishBackward:
 *
 *   out = gradOutput * (self < -3 ? 0 : self > 3 ? 1 : self / 3 + 0.5)
 *
 * (so the factor is -0.5 at self = -3 and 1.5 at self = 3, as in aclnn and PyTorch).
 * gradOutput, self and out have the same shape (no broadcasting, as in ops-nn); dtypes FLOAT,
 * FLOAT16, BFLOAT16; out has self's dtype. ops-nn requires gradOutput's dtype to equal self's;
 * opgrad also accepts another floating gradOutput dtype and promotes (PyTorch rules). 0-8 dims,
 * any strides; empty tensors are a no-op. NaN in self or gradOutput propagates. */
#ifndef OPGRAD_ACLNN_HARDSWISH_BACKWARD_H
#define OPGRAD_ACLNN_HARDSWISH_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnHardswishBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                             const aclTensor *self, aclTensor *out,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnHardswishBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
