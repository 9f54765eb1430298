/* aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h - BCE with logits backward: out =
 * gradOutput weight (lw sigmoid(x) - posWeight t) (/ N for mean; sigmoid(x) - t without posWeight);
 * self, target, out of one shape, the others broadcast to it. dtypes FLOAT, FLOAT16, BFLOAT16
 * (computed and summed in fp32); 0-8 dims, any strides. */
#ifndef OPGRAD_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_H
#define OPGRAD_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
    const aclTensor *weightOptional, const aclTensor *posWeightOptional, int64_t reduction,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackward(void *workspace,
                                                                uint64_t workspaceSize,
                                                                aclOpExecutor *executor,
                                                                aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
