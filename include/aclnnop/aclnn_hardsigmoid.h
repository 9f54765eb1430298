/* aclnnop/aclnn_hardsigmoid.h - Hardsigmoid: out = self >= 3 ? 1 : self <= -3 ? 0 : self / 6 + 1/2
 * (clip(self / 6 + 1/2, 0, 1)).
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16 (aclnn also accepts INT32; opgrad refuses it with 161002); out
 * has self's dtype and shape (as in ops-nn); 0-8 dims, any strides; empty tensors are a no-op.
 * Results are correctly rounded. NaN propagates; hardsigmoid(+inf) = 1, hardsigmoid(-inf) = 0. */
#ifndef OPGRAD_ACLNN_HARDSIGMOID_H
#define OPGRAD_ACLNN_HARDSIGMOID_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnHardsigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnHardsigmoid(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, const aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceHardsigmoidGetWorkspaceSize(const aclTensor *self,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceHardsigmoid(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
