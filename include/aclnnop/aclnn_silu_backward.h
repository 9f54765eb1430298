/* aclnnop/aclnn_silu_backward.h - SiluBackward (SiluGrad).
 *
 * gradInput = gradOutput * sigmoid(self) (1 + self (1 - sigmoid(self))). gradOutput and self
 * broadcast (NumPy rules) and promote (PyTorch rules) among FLOAT, FLOAT16, BFLOAT16; gradInput
 * has the broadcast shape and a dtype the promoted type can be cast to. 0-8 dims (the ops-nn
 * code checks the maximum rank only). */
#ifndef OPGRAD_ACLNN_SILU_BACKWARD_H
#define OPGRAD_ACLNN_SILU_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                        const aclTensor *self, aclTensor *gradInput,
                                                        uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSiluBackward(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
