/* aclnnop/aclnn_sigmoid.h - Sigmoid: out = 1 / (1 + e^-self).
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed in fp32; aclnn's DOUBLE and COMPLEX are rejected with
 * 161002); self and out have the same dtype and shape; 0-8 dims, any strides; empty tensors are a
 * no-op. aclnnInplaceSigmoid writes the result over selfRef. */
#ifndef OPGRAD_ACLNN_SIGMOID_H
#define OPGRAD_ACLNN_SIGMOID_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceSigmoidGetWorkspaceSize(aclTensor *selfRef,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceSigmoid(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
