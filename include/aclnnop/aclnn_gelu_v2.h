/* aclnnop/aclnn_gelu_v2.h - GeluV2: y = GELU(x) with approximate 0 ("none": x Phi(x),
 * the exact erf form) or 1 ("tanh": the tanh approximation of aclnnGelu); any other value is
 * rejected (161002). dtypes FLOAT, FLOAT16, BFLOAT16 (computed in fp32); x and y have the same
 * dtype and shape; 0-8 dims, any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_GELU_V2_H
#define OPGRAD_ACLNN_GELU_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor *x, int64_t approximate,
                                                  aclTensor *y, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGeluV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
