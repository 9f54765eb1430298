/* aclnnop/aclnn_gelu.h - Gelu: out = 0.5 self (1 + tanh(sqrt(2/pi) (self + 0.044715 self^3))).
 *
 * The tanh approximation, as the ops-nn kernel and its golden (torch GELU approximate="tanh").
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed in fp32); self and out have the same dtype and shape;
 * 0-8 dims, any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_GELU_H
#define OPGRAD_ACLNN_GELU_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
