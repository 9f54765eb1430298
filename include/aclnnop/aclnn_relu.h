/* aclnnop/aclnn_relu.h - Relu: out = self > 0 ? self : 0 (PyTorch's clamp_min(self, 0)).
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16 (aclnn also lists INT8, INT32, INT64 and, in place, UINT8:
 * opgrad rejects those with 161002); out has self's dtype and shape; 0-8 dims, any strides;
 * empty tensors are a no-op. NaN and -0 pass through (relu(NaN) = NaN, relu(-0) = -0).
 * The backward is aclnnThresholdBackward with threshold 0 (aclnn_threshold_backward.h). */
#ifndef OPGRAD_ACLNN_RELU_H
#define OPGRAD_ACLNN_RELU_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, const aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceRelu(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
