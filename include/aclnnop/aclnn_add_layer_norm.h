/* aclnnop/aclnn_add_layer_norm.h - A residual add and LayerNorm over the trailing dims of
 * gamma's rank: x = x1 + x2 (+ biasOptional) in fp32, yOut = (x - mean) rstd gamma + beta; meanOut
 * and rstdOut FLOAT [A..., 1...]; xOut (x rounded to its dtype) is written when additionalOutput is
 * true (then it must not be NULL). x1, x2, yOut, xOut [A..., R...]; gamma, beta [R...];
 * biasOptional [R...] or x1's shape. FLOAT, FLOAT16, BFLOAT16. */
#ifndef OPGRAD_ACLNN_ADD_LAYER_NORM_H
#define OPGRAD_ACLNN_ADD_LAYER_NORM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAddLayerNormGetWorkspaceSize(
    const aclTensor *x1, const aclTensor *x2, const aclTensor *gamma, const aclTensor *beta,
    const aclTensor *biasOptional, double epsilon, bool additionalOutput, const aclTensor *yOut,
    const aclTensor *meanOut, const aclTensor *rstdOut, const aclTensor *xOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAddLayerNorm(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
