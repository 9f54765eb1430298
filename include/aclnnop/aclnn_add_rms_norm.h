/* aclnnop/aclnn_add_rms_norm.h - A residual add and RMSNorm: x = x1 + x2 in fp32,
 * yOut = x rstd gamma, rstdOut FLOAT [A..., 1...], xOut = x rounded to its dtype (its backward is
 * aclnnRmsNormGrad at xOut). FLOAT, FLOAT16, BFLOAT16. */
#ifndef OPGRAD_ACLNN_ADD_RMS_NORM_H
#define OPGRAD_ACLNN_ADD_RMS_NORM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAddRmsNormGetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                                      const aclTensor *gamma, double epsilon,
                                                      aclTensor *yOut, aclTensor *rstdOut,
                                                      aclTensor *xOut, uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAddRmsNorm(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
