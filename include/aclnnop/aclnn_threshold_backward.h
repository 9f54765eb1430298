/* aclnnop/aclnn_threshold_backward.h - ThresholdBackward (relu's backward with threshold 0):
 *
 *   out = self > threshold ? gradOutput : 0          (a NaN self compares false: 0)
 *
 * threshold: an aclScalar of any real dtype, converted to float. gradOutput and self broadcast
 * (NumPy rules) among FLOAT, FLOAT16, BFLOAT16; out has the broadcast shape and self's dtype.
 * ops-nn requires gradOutput's dtype to equal self's; opgrad also accepts another floating
 * gradOutput dtype and promotes (PyTorch rules). aclnn's integer dtypes (INT8, INT32, INT64,
 * UINT8) are rejected with 161002. 0-8 dims, any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_THRESHOLD_BACKWARD_H
#define OPGRAD_ACLNN_THRESHOLD_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclScalar *threshold, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnThresholdBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
