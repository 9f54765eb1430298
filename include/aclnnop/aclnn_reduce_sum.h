/* aclnnop/aclnn_reduce_sum.h - ReduceSum (ops-math math/reduce_sum).
 *
 * out = the sum of self over the dims in `dims` (values in [-rank, rank-1], rank = max(self's
 * rank, 1); an empty list sums over every dim; a dim out of range or listed twice is 161002).
 * keepDims keeps each summed dim with size 1. self is first cast to `dtype` (as aclnn does), then
 * summed with fp32 accumulation in a fixed order (deterministic: the result does not depend on
 * the thread count or the ISA; see docs/ops/arith.md for the order and the error bound), and
 * rounded once to `dtype`. out's dtype must equal `dtype`; out's shape must be the reduced shape
 * (any one-element shape is accepted when the result has one element). An empty self gives
 * zeros. dtypes: FLOAT, FLOAT16, BFLOAT16 for self, dtype and out (the other aclnn dtypes are
 * refused with 161002); 0-8 dims, any strides. */
#ifndef OPGRAD_ACLNN_REDUCE_SUM_H
#define OPGRAD_ACLNN_REDUCE_SUM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims,
                                                     bool keepDims, aclDataType dtype,
                                                     aclTensor *out, uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
