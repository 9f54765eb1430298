/* aclnnop/aclnn_convolution.h - Convolution (ops-nn conv/convolution_forward):
 * output = conv(input, weight) + bias for 1-D, 2-D and 3-D data (NCL, NCHW, NCDHW), with stride,
 * padding (per dim, or [left, right] / [top, bottom, left, right] for 1-D and 2-D), dilation and
 * groups; transposed = true is the transposed convolution (weight [Cin, Cout / groups, k...],
 * outputPadding added to the output size). dtypes FLOAT, FLOAT16, BFLOAT16 (input and weight
 * promote; output castable), accumulated in fp32 in a fixed order (results do not depend on the
 * thread count or the ISA), rounded once. cubeMathType 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION,
 * 2 USE_FP16, 3 USE_HF32: on the CPU only 2 changes an fp32 result (operands rounded through
 * fp16); FLOAT with 0 is exact fp32 (upstream NPUs reject it). Any strides; see docs/ops/conv.md.
 */
#ifndef OPGRAD_ACLNN_CONVOLUTION_H
#define OPGRAD_ACLNN_CONVOLUTION_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnConvolutionGetWorkspaceSize(
    const aclTensor *input, const aclTensor *weight, const aclTensor *bias,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation,
    bool transposed, const aclIntArray *outputPadding, const int64_t groups, aclTensor *output,
    int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnConvolution(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
