/* aclnnop/aclnn_tanh_backward.h - TanhBackward (TanhGrad), from the forward's output.
 *
 * gradInput = gradOutput * (1 - output^2). gradOutput and output broadcast (NumPy rules) and
 * promote (PyTorch rules) among FLOAT, FLOAT16, BFLOAT16; gradInput has the broadcast shape and a
 * dtype the promoted type can be cast to; 0-8 dims. */
#ifndef OPGRAD_ACLNN_TANH_BACKWARD_H
#define OPGRAD_ACLNN_TANH_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnTanhBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                        const aclTensor *output,
                                                        aclTensor *gradInput,
                                                        uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnTanhBackward(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
