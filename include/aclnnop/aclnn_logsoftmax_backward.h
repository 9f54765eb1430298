/* aclnnop/aclnn_logsoftmax_backward.h - the gradient of LogSoftmax from its output:
 * out = gradOutput - exp(output) * sum(gradOutput) along dim.
 *
 * gradOutput, output and out: FLOAT, FLOAT16, BFLOAT16, the same shape, 0-8 dims, any strides;
 * dim as LogSoftmax's. ops-nn requires gradOutput and output to have one dtype; opgrad also
 * accepts two (they promote) and computes in fp32, rounding the result once to the promoted
 * dtype, then casting it to out's. Empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_LOGSOFTMAX_BACKWARD_H
#define OPGRAD_ACLNN_LOGSOFTMAX_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                              const aclTensor *output, int64_t dim,
                                                              aclTensor *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnLogSoftmaxBackward(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
