/* aclnnop/aclnn_fused_add_scale.h - FusedAddScale (opgrad extension).
 *
 * out = (x + bias) * scale, with x of shape [N, C] (more generally [..., C]: every leading index
 * is a row), bias [C] broadcast over the rows, and scale either one element (shape [1] or 0-d)
 * or per channel [C]. x, bias and scale promote together (PyTorch rules) among FLOAT, FLOAT16,
 * BFLOAT16; out has x's shape and a dtype the promoted dtype casts to. Computed in fp32, rounded
 * once. 1-8 dims for x, any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_FUSED_ADD_SCALE_H
#define OPGRAD_ACLNN_FUSED_ADD_SCALE_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnFusedAddScaleGetWorkspaceSize(const aclTensor *x, const aclTensor *bias,
                                                         const aclTensor *scale, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnFusedAddScale(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
