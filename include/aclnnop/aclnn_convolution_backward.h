/* aclnnop/aclnn_convolution_backward.h - ConvolutionBackward (ops-nn conv/convolution_backward):
 * gradInput, gradWeight and gradBias of aclnnConvolution (same attributes; note `int groups`
 * here against the forward's int64_t, and cubeMathType before the outputs), each computed when
 * its outputMask entry is true (its tensor may then not be NULL). biasSizes (may be NULL) is
 * [Cout]. gradBias sums gradOutput over every dim but the channels. fp32 accumulation in a fixed
 * order; see docs/ops/conv.md. */
#ifndef OPGRAD_ACLNN_CONVOLUTION_BACKWARD_H
#define OPGRAD_ACLNN_CONVOLUTION_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *input, const aclTensor *weight,
    const aclIntArray *biasSizes, const aclIntArray *stride, const aclIntArray *padding,
    const aclIntArray *dilation, bool transposed, const aclIntArray *outputPadding, int groups,
    const aclBoolArray *outputMask, int8_t cubeMathType, aclTensor *gradInput,
    aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnConvolutionBackward(void *workspace, uint64_t workspaceSize,
                                               aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
