/* aclnnop/aclnn_hardsigmoid_backward.h - HardsigmoidBackward:
 *
 *   out = -3 < self < 3 ? gradOutput / 6 : 0
 *
 * (0 at the joins self = +-3, as aclnn's mask and PyTorch's are). gradOutput, self and out have
 * the same shape (no broadcasting, as in ops-nn); dtypes FLOAT, FLOAT16, BFLOAT16; gradOutput
 * and self promote (PyTorch rules) and out is any dtype the result casts to. 0-8 dims, any
 * strides; empty tensors are a no-op. A NaN self gives 0, as in PyTorch. */
#ifndef OPGRAD_ACLNN_HARDSIGMOID_BACKWARD_H
#define OPGRAD_ACLNN_HARDSIGMOID_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnHardsigmoidBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                               const aclTensor *self,
                                                               aclTensor *out,
                                                               uint64_t *workspaceSize,
                                                               aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnHardsigmoidBackward(void *workspace, uint64_t workspaceSize,
                                               aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
