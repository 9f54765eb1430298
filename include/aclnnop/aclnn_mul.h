/* aclnnop/aclnn_mul.h - Mul, Muls, InplaceMul, InplaceMuls (ops-math math/mul).
 *
 * out = self * other, with NumPy broadcasting (out has the broadcast shape) and PyTorch dtype
 * promotion; out's dtype must be castable from the promoted dtype. Computed in fp32 and rounded
 * to nearest even once to the promoted dtype, then stored in out's dtype.
 * Muls: `other` is a scalar; the computation dtype is self's (bfloat16 computes in float32, as
 * ops-math does) and `other` is rounded to it first; out has self's shape. The Inplace forms
 * write selfRef, whose shape must be the broadcast shape.
 * dtypes: FLOAT, FLOAT16, BFLOAT16 (the other aclnn dtypes are refused with 161002); 0-8 dims,
 * any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_MUL_H
#define OPGRAD_ACLNN_MUL_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                               aclTensor *out, uint64_t *workspaceSize,
                                               aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);

ACLNN_API aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                                aclTensor *out, uint64_t *workspaceSize,
                                                aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceMulGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceMul(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceMuls(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
