/* aclnnop/aclnn_foreach_mul_scalar.h - aclnnForeachMulScalar: out[i] = x[i] * scalar for every
 * tensor of the list x.
 *
 * x, out: lists of one length, one dtype each (float32, float16, bfloat16), out[i] of x[i]'s
 * shape and dtype, any strides (out[i] may be x[i] itself: in place); scalar: a one-element
 * tensor, x's dtype or float32 (bfloat16 x: float32), read when the operator runs. Computed in
 * fp32, rounded once. Empty tensors and empty lists are a no-op. */
#ifndef OPGRAD_ACLNN_FOREACH_MUL_SCALAR_H
#define OPGRAD_ACLNN_FOREACH_MUL_SCALAR_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnForeachMulScalarGetWorkspaceSize(const aclTensorList *x,
                                                            const aclTensor *scalar,
                                                            aclTensorList *out,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnForeachMulScalar(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
