/* aclnnop/aclnn_binary_cross_entropy_backward.h - Binary cross entropy backward: out = gradOutput
 * weight (self - target) / max(self (1 - self), 1e-12) (/ N for mean); gradOutput, target,
 * weightOptional (may be NULL) broadcast to self. dtypes FLOAT, FLOAT16, BFLOAT16 (computed and
 * summed in fp32); 0-8 dims, any strides. */
#ifndef OPGRAD_ACLNN_BINARY_CROSS_ENTROPY_BACKWARD_H
#define OPGRAD_ACLNN_BINARY_CROSS_ENTROPY_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
    const aclTensor *weightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyBackward(void *workspace, uint64_t workspaceSize,
                                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
