/* aclnnop/aclnn_rms_norm_grad.h - The gradients of RMSNorm from the forward's rstd
 * (FLOAT, [A...] or the forward's [A..., 1...]): dxOut (x's shape and dtype) and dgammaOut (FLOAT,
 * gamma's shape; a sum over the rows in a fixed order, docs/ops/norm.md). */
#ifndef OPGRAD_ACLNN_RMS_NORM_GRAD_H
#define OPGRAD_ACLNN_RMS_NORM_GRAD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnRmsNormGradGetWorkspaceSize(
    const aclTensor *dy, const aclTensor *x, const aclTensor *rstd, const aclTensor *gamma,
    const aclTensor *dxOut, const aclTensor *dgammaOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnRmsNormGrad(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
