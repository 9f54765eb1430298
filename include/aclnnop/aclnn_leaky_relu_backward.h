/* aclnnop/aclnn_leaky_relu_backward.h - LeakyReluBackward:
 *
 *   out = self > 0 ? gradOutput : gradOutput * negativeSlope
 *
 * selfIsResult: self holds the forward's result instead of its input (same sign when
 * negativeSlope >= 0); selfIsResult with a negative negativeSlope is rejected with 161002, as
 * in ops-nn. negativeSlope: an aclScalar of dtype FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, INT16,
 * INT32, INT64, UINT8 or BOOL. gradOutput and self broadcast (NumPy) and promote (PyTorch) among
 * FLOAT, FLOAT16, BFLOAT16 (aclnn's DOUBLE is rejected with 161002); out has the broadcast shape
 * and a dtype the promoted type casts to. 0-8 dims, any strides; empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_LEAKY_RELU_BACKWARD_H
#define OPGRAD_ACLNN_LEAKY_RELU_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLeakyReluBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclScalar *negativeSlope,
    bool selfIsResult, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnLeakyReluBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
