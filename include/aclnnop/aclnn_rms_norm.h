/* aclnnop/aclnn_rms_norm.h - RMSNorm over the trailing dims of gamma's rank:
 * yOut = x * rstd * gamma, rstd = 1 / sqrt(mean(x^2) + epsilon) per row, computed in fp32.
 * x [A..., R...] (1-8 dims, FLOAT, FLOAT16, BFLOAT16), gamma [R...] (x's dtype or FLOAT), yOut
 * like x; rstdOut FLOAT, [A..., 1...] at x's rank. */
#ifndef OPGRAD_ACLNN_RMS_NORM_H
#define OPGRAD_ACLNN_RMS_NORM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor *x, const aclTensor *gamma,
                                                   double epsilon, const aclTensor *yOut,
                                                   const aclTensor *rstdOut,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnRmsNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
