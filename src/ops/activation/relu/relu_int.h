/* Relu, ThresholdBackward and Hardsigmoid on integer tensors: exact, outside the fp32 engine
 * (relu_int.c).
 * Host code. */
#ifndef OG_RELU_INT_H
#define OG_RELU_INT_H

#include "ops/common/checks.h"

/// The integer dtypes ops-nn's Relu and ThresholdBackward accept.
#define OG_RELU_INT_DTYPES                                                                         \
    (OG_DT(ACL_INT8) | OG_DT(ACL_UINT8) | OG_DT(ACL_INT32) | OG_DT(ACL_INT64))

/// Phase 1 of out = x > threshold ? g : 0 over io = {g, x, out} (nin = 2) or, for Relu,
/// io = {x, out} (nin = 1, g = x, threshold 0): the tensors are checked already (one integer
/// dtype of OG_RELU_INT_DTYPES, the inputs broadcasting to out); this checks their memory and
/// plans the exact integer step. names: the inputs, then out.
aclnnStatus og_plan_threshold_int(const og_opdesc *op, int nin, const aclTensor *const *io,
                                  const char *const *names, float threshold,
                                  uint64_t *workspaceSize, aclOpExecutor **executor);

/// The same over io = {x, out} with out = x > threshold ? 1 : 0 (Hardsigmoid's INT32 path).
aclnnStatus og_plan_step_int(const og_opdesc *op, const aclTensor *const *io,
                             const char *const *names, float threshold, uint64_t *workspaceSize,
                             aclOpExecutor **executor);

#endif
