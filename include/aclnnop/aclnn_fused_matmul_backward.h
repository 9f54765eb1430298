/* aclnnop/aclnn_fused_matmul_backward.h - FusedMatmulBackward: an opgrad extension (no ops-nn
 * counterpart), named and shaped as an aclnn backward, for the forward aclnnFusedMatmul.
 *
 * Given gradY = dL/dy and the forward's inputs, writes gradX1 = dZ @ x2^T, gradX2 = x1^T @ dZ
 * (summed over broadcast batch dims), gradBias = dZ summed to bias's shape, and for add/mul
 * gradX3 (gradY, or gradY * z for mul, summed to x3's shape), where z = x1 @ x2 + bias and
 * dZ = gradY * act'(z) (relu, gelu_erf, gelu_tanh), gradY * x3 (mul) or gradY. Where z is needed
 * (the activations, mul's gradX3) it is recomputed, and dZ (and gradY * z) are formed in the
 * recomputing product's epilogue: gradY is read once and z never goes through memory. Outputs
 * that are NULL are not computed (gradBias must be NULL when bias is; gradX3 when x3 is or
 * fusedOpType is not add/mul). Same dtypes and cubeMathType as the forward; the gradients are
 * rounded once to their dtype from fp32.
 */
#ifndef OPGRAD_ACLNN_FUSED_MATMUL_BACKWARD_H
#define OPGRAD_ACLNN_FUSED_MATMUL_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnFusedMatmulBackwardGetWorkspaceSize(
    const aclTensor *gradY, const aclTensor *x1, const aclTensor *x2, const aclTensor *bias,
    const aclTensor *x3, const char *fusedOpType, int8_t cubeMathType, aclTensor *gradX1,
    aclTensor *gradX2, aclTensor *gradBias, aclTensor *gradX3, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnFusedMatmulBackward(void *workspace, uint64_t workspaceSize,
                                               aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
