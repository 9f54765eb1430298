/* aclnnop/aclnn_add.h - Add, Adds, InplaceAdd, InplaceAdds (ops-math math/add).
 *
 * out = self + alpha * other, with NumPy broadcasting of self and other (out has the broadcast
 * shape) and PyTorch dtype promotion (float16 + float32 -> float32, bfloat16 + float16 ->
 * float32); out's dtype must be castable from the promoted dtype, and alpha's dtype castable to
 * it. A NULL alpha is 161001. Computed in fp32 as one fused multiply-add (alpha as fp32), then
 * rounded to nearest even once to the promoted dtype and stored in out's dtype.
 * Adds: `other` is a scalar; the computation dtype is self's (float16/bfloat16/float32) and
 * `other` is rounded to it first, as aclnn converts it to a tensor of that dtype; out has self's
 * shape. The Inplace forms write selfRef, whose shape must be the broadcast shape.
 * dtypes: FLOAT, FLOAT16, BFLOAT16 (the other aclnn dtypes are refused with 161002); 0-8 dims,
 * any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_ADD_H
#define OPGRAD_ACLNN_ADD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                               const aclScalar *alpha, aclTensor *out,
                                               uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);

ACLNN_API aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                                const aclScalar *alpha, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef,
                                                      const aclTensor *other,
                                                      const aclScalar *alpha,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef,
                                                       const aclScalar *other,
                                                       const aclScalar *alpha,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
