/* aclnnop/aclnn_silu.h - Silu: out = self / (1 + e^-self).
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed in fp32); self and out have the same dtype and shape;
 * 0-8 dims, any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_SILU_H
#define OPGRAD_ACLNN_SILU_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSiluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSilu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
