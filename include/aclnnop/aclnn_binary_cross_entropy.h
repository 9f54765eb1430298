/* aclnnop/aclnn_binary_cross_entropy.h - Binary cross entropy: -weight (target log(self) + (1 -
 * target) log(1 - self)), each log clamped at -100 (as PyTorch); self in [0, 1], target of self's
 * shape, weight (may be NULL) broadcast to it; reduction 0 none, 1 mean, 2 sum (out 0-D or [1]).
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed and summed in fp32); 0-8 dims, any strides. */
#ifndef OPGRAD_ACLNN_BINARY_CROSS_ENTROPY_H
#define OPGRAD_ACLNN_BINARY_CROSS_ENTROPY_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weight, int64_t reduction,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBinaryCrossEntropy(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
