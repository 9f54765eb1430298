/* aclnnop/aclnn_elu.h - Elu:
 *
 *   out = self > 0 ? scale * self : alpha * scale * (exp(self * inputScale) - 1)
 *
 * Signatures as ops-nn activation/elu/op_api/aclnn_elu.h. alpha, scale, inputScale: aclScalars of
 * any dtype castable to FLOAT (complex is rejected with 161002), converted to float. When alpha
 * or inputScale is inf or NaN, ops-nn computes (self > 0 ? self : -alpha) * scale instead; so
 * does opgrad. dtypes FLOAT, FLOAT16, BFLOAT16 (aclnn also lists DOUBLE: opgrad rejects it with
 * 161002); out has self's shape and a floating dtype (computed in self's dtype, then cast);
 * 0-8 dims, any strides; empty tensors are a no-op. NaN propagates; elu(-0) = -0. */
#ifndef OPGRAD_ACLNN_ELU_H
#define OPGRAD_ACLNN_ELU_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnEluGetWorkspaceSize(const aclTensor *self, const aclScalar *alpha,
                                               const aclScalar *scale, const aclScalar *inputScale,
                                               aclTensor *out, uint64_t *workspaceSize,
                                               aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnElu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceEluGetWorkspaceSize(aclTensor *selfRef, const aclScalar *alpha,
                                                      const aclScalar *scale,
                                                      const aclScalar *inputScale,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceElu(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
