/* aclnnop/aclnn_nll_loss.h - negative log-likelihood loss of log-probabilities.
 *
 * self [N, C] or [C] (FLOAT, FLOAT16, BFLOAT16, any strides); target [N] or 0-d, INT64, INT32 or
 * UINT8; weight [C] of self's dtype; reduction 0 none / 1 mean / 2 sum; out [N] (none, 2-d self)
 * or [1]; totalWeightOut [1] = sum of w[t_n] over the rows not ignored.
 *   l_n = -w[t_n] self[n, t_n], 0 where t_n == ignoreIndex or t_n is outside [0, C) (ignored,
 *   not an error); mean = sum_n l_n / totalWeight, sum = sum_n l_n.
 * fp32 arithmetic, sums in a fixed order (the same bits on any thread count), rounded once. */
#ifndef OPGRAD_ACLNN_NLL_LOSS_H
#define OPGRAD_ACLNN_NLL_LOSS_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                                   const aclTensor *weight, int64_t reduction,
                                                   int64_t ignoreIndex, aclTensor *out,
                                                   aclTensor *totalWeightOut,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnNLLLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
