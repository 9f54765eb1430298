/* aclnnop/aclnn_fused_add_scale_backward.h - FusedAddScaleBackward (opgrad extension).
 *
 * The gradients of out = (x + bias) * scale (aclnn_fused_add_scale.h) for gradOutput g of x's
 * shape:
 *   gradX     = g * scale
 *   gradBias  = sum over the rows of g * scale                        (shape [C])
 *   gradScale = sum of g * (x + bias), reduced to scale's shape       ([1] / 0-d: over every
 *                                                                      element; [C]: over rows)
 * Each product is formed in fp32 and summed on the reduction engine (fp32 accumulation in a fixed
 * order: deterministic, independent of the thread count), then rounded once to the gradient's
 * dtype. g, x, bias and scale promote together among FLOAT, FLOAT16, BFLOAT16; each gradient has
 * its input's shape and a dtype the promoted dtype casts to. All seven tensors are required. */
#ifndef OPGRAD_ACLNN_FUSED_ADD_SCALE_BACKWARD_H
#define OPGRAD_ACLNN_FUSED_ADD_SCALE_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnFusedAddScaleBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *x, const aclTensor *bias, const aclTensor *scale,
    aclTensor *gradX, aclTensor *gradBias, aclTensor *gradScale, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnFusedAddScaleBackward(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
