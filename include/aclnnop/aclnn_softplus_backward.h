/* aclnnop/aclnn_softplus_backward.h - SoftplusBackward (SoftplusV2Grad).
 *
 * gradInput = gradOutput * sigmoid(beta self) where beta self <= threshold, else gradOutput.
 * beta and threshold are real scalars (NULL gives 161001). gradOutput, self and gradInput have
 * the same shape (no broadcasting, as the ops-nn code); gradOutput and self promote among FLOAT,
 * FLOAT16, BFLOAT16 (a mixed pair is computed in float32, as ops-nn) and the result must be
 * castable to gradInput's dtype; 0-8 dims. */
#ifndef OPGRAD_ACLNN_SOFTPLUS_BACKWARD_H
#define OPGRAD_ACLNN_SOFTPLUS_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSoftplusBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclScalar *beta,
    const aclScalar *threshold, aclTensor *gradInput, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSoftplusBackward(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
