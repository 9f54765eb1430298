/* aclnnop/aclnn_gelu_backward.h - GeluBackward (GeluGrad), the derivative of the tanh
 * approximation.
 *
 * gradInput = gradOutput * d/dx [x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))] at x = self
 * (the ops-nn golden: aten gelu_backward approximate="tanh"). gradOutput and self broadcast
 * (NumPy rules) and promote (PyTorch rules) among FLOAT, FLOAT16, BFLOAT16; gradInput has the
 * broadcast shape and a dtype the promoted type can be cast to. gradInput is const in the
 * aclnn header, and here too. */
#ifndef OPGRAD_ACLNN_GELU_BACKWARD_H
#define OPGRAD_ACLNN_GELU_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                        const aclTensor *self,
                                                        const aclTensor *gradInput,
                                                        uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGeluBackward(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
