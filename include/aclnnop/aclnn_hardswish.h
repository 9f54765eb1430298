/* aclnnop/aclnn_hardswish.h - Hardswish: out = self >= 3 ? self : self <= -3 ? 0
 * : self (self + 3) / 6.
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16 for self and out; out has self's shape and any of those
 * dtypes (computed in self's dtype, then cast); 0-8 dims, any strides; empty tensors are a
 * no-op. NaN propagates; hardswish(+inf) = +inf, hardswish(x <= -3) = -0 (PyTorch's sign). */
#ifndef OPGRAD_ACLNN_HARDSWISH_H
#define OPGRAD_ACLNN_HARDSWISH_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnHardswishGetWorkspaceSize(const aclTensor *self, const aclTensor *out,
                                                     uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnHardswish(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceHardswishGetWorkspaceSize(const aclTensor *self,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceHardswish(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
