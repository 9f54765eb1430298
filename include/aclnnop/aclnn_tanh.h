/* aclnnop/aclnn_tanh.h - Tanh: out = tanh(self).
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed in fp32; aclnn's integer and bool self are rejected
 * with 161002); self and out have the same dtype and shape; 0-8 dims, any strides; empty tensors
 * are a no-op. aclnnInplaceTanh writes the result over selfRef. */
#ifndef OPGRAD_ACLNN_TANH_H
#define OPGRAD_ACLNN_TANH_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnTanh(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceTanhGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceTanh(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
