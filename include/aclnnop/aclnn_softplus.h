/* aclnnop/aclnn_softplus.h - Softplus: out = log(1 + e^(beta self)) / beta where
 * beta self <= threshold, else self.
 *
 * beta and threshold are real scalars (converted to float, as aclnn's ToFloat; NULL gives 161001).
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed in fp32); self and out have the same dtype and shape;
 * 0-8 dims, any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_SOFTPLUS_H
#define OPGRAD_ACLNN_SOFTPLUS_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSoftplusGetWorkspaceSize(const aclTensor *self, const aclScalar *beta,
                                                    const aclScalar *threshold, aclTensor *out,
                                                    uint64_t *workspaceSize,
                                                    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSoftplus(void *workspace, uint64_t workspaceSize,
                                    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
