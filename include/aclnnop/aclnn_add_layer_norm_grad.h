/* aclnnop/aclnn_add_layer_norm_grad.h - The gradients of AddLayerNorm at x = x1 + x2 from the
 * forward's rstd and mean (one element per row): dxOut (the gradient of x1 and of x2, plus
 * dsumOptional, a gradient arriving at xOut), dgammaOut and dbetaOut (gamma's shape, FLOAT or
 * gamma's dtype; sums over the rows in a fixed order, docs/ops/norm.md). */
#ifndef OPGRAD_ACLNN_ADD_LAYER_NORM_GRAD_H
#define OPGRAD_ACLNN_ADD_LAYER_NORM_GRAD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAddLayerNormGradGetWorkspaceSize(
    const aclTensor *dy, const aclTensor *x1, const aclTensor *x2, const aclTensor *rstd,
    const aclTensor *mean, const aclTensor *gamma, const aclTensor *dsumOptional,
    const aclTensor *dxOut, const aclTensor *dgammaOut, const aclTensor *dbetaOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAddLayerNormGrad(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
