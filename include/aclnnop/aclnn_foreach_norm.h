/* aclnnop/aclnn_foreach_norm.h - aclnnForeachNorm: out[i] = ||x[i]||_p with p = scalar (float,
 * double or int64): p = 2 sqrt(sum x^2), 1 sum |x|, +inf max |x|, -inf min |x|, 0 the count of
 * non-zeros, any other p (sum |x|^p)^(1/p). Sums in double over a fixed order (the same bits on any
 * thread count), NaN propagates (order 0 counts it as a non-zero, as PyTorch); an empty tensor's
 * norm is 0 (+inf for p = -inf).
 *
 * x: float32, float16 or bfloat16, one dtype, any shapes and strides; out[i]: one element of
 * x's dtype. */
#ifndef OPGRAD_ACLNN_FOREACH_NORM_H
#define OPGRAD_ACLNN_FOREACH_NORM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnForeachNormGetWorkspaceSize(const aclTensorList *x,
                                                       const aclScalar *scalar,
                                                       const aclTensorList *out,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnForeachNorm(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
