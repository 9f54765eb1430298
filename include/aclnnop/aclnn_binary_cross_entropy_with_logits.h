/* aclnnop/aclnn_binary_cross_entropy_with_logits.h - BCE with logits: weight ((1 - t) x + lw (log(1
 * + e^-|x|) + max(-x, 0))), lw = 1 + (posWeight - 1) t (x = self, t = target of the same shape);
 * weightOptional and posWeightOptional may be NULL and broadcast to self; reduction 0 none, 1 mean,
 * 2 sum (out 0-D or [1]). dtypes FLOAT, FLOAT16, BFLOAT16 (computed and summed in fp32); 0-8 dims,
 * any strides. */
#ifndef OPGRAD_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_H
#define OPGRAD_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogits(void *workspace, uint64_t workspaceSize,
                                                        aclOpExecutor *executor,
                                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
