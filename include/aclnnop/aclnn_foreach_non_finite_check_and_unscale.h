/* aclnnop/aclnn_foreach_non_finite_check_and_unscale.h - aclnnForeachNonFiniteCheckAndUnscale: the
 * unscale of a mixed-precision step: every scaledGrads[i] *= invScale in place (also when an inf or
 * NaN is present), and foundInf = 1.0 when some element held an inf or a NaN before the multiply.
 * foundInf is never reset: the caller zeroes it (one flag can then cover several calls).
 *
 * scaledGrads: float32, float16 or bfloat16, one dtype for the list, any shapes and strides;
 * foundInf, invScale: float32, one element each. One pass over memory; deterministic. */
#ifndef OPGRAD_ACLNN_FOREACH_NON_FINITE_CHECK_AND_UNSCALE_H
#define OPGRAD_ACLNN_FOREACH_NON_FINITE_CHECK_AND_UNSCALE_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(
    const aclTensorList *scaledGrads, const aclTensor *foundInf, const aclTensor *invScale,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnForeachNonFiniteCheckAndUnscale(void *workspace, uint64_t workspaceSize,
                                                           aclOpExecutor *executor,
                                                           const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
