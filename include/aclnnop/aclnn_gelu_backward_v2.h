/* aclnnop/aclnn_gelu_backward_v2.h - GeluBackwardV2.
 *
 * approximate "none": gradInput = gradOutput (Phi(x) + x phi(x)) (exact erf form);
 * "tanh": the derivative of the tanh approximation (as aclnnGeluBackward). NULL gives 161001,
 * any other string 161002. gradOutput and self broadcast and promote among FLOAT, FLOAT16,
 * BFLOAT16; gradInput has the broadcast shape and a dtype the promoted type can be cast to. */
#ifndef OPGRAD_ACLNN_GELU_BACKWARD_V2_H
#define OPGRAD_ACLNN_GELU_BACKWARD_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput,
                                                          const aclTensor *self, char *approximate,
                                                          aclTensor *gradInput,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGeluBackwardV2(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
