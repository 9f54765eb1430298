/* aclnnop/aclnn_leaky_relu.h - LeakyRelu: out = self > 0 ? self : negativeSlope * self
 * (= max(0, self) + negativeSlope * min(0, self)).
 *
 * negativeSlope: an aclScalar of any real dtype, converted to float. dtypes FLOAT, FLOAT16,
 * BFLOAT16 (aclnn also lists DOUBLE: opgrad rejects it with 161002); out has self's shape and
 * any floating dtype (the result is computed in self's dtype, then cast); 0-8 dims, any
 * strides; empty tensors are a no-op. NaN propagates; -0 gives -0 * negativeSlope. */
#ifndef OPGRAD_ACLNN_LEAKY_RELU_H
#define OPGRAD_ACLNN_LEAKY_RELU_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLeakyReluGetWorkspaceSize(const aclTensor *self,
                                                     const aclScalar *negativeSlope, aclTensor *out,
                                                     uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnLeakyRelu(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceLeakyReluGetWorkspaceSize(aclTensor *selfRef,
                                                            const aclScalar *negativeSlope,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceLeakyRelu(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
