/* aclnnop/aclnn_mish.h - Mish: out = self * tanh(softplus(self)).
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed in fp32); self and out have the same dtype and shape;
 * 0-8 dims, any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_MISH_H
#define OPGRAD_ACLNN_MISH_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMishGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMish(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceMishGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceMish(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

/* opgrad extension: the forward also writes tanhx = tanh(softplus(self)), which
 * aclnnMishBackwardWithTanhx reuses. tanhxOut has self's shape and dtype. */
ACLNN_API aclnnStatus aclnnMishWithTanhxGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                         aclTensor *tanhxOut,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMishWithTanhx(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
