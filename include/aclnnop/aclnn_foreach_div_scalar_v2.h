/* aclnnop/aclnn_foreach_div_scalar_v2.h - aclnnForeachDivScalarV2: out[i] = x[i] / scalar, the
 * scalar an aclScalar. The rules are aclnnForeachMulScalarV2's. */
#ifndef OPGRAD_ACLNN_FOREACH_DIV_SCALAR_V2_H
#define OPGRAD_ACLNN_FOREACH_DIV_SCALAR_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnForeachDivScalarV2GetWorkspaceSize(const aclTensorList *x,
                                                              const aclScalar *scalar,
                                                              aclTensorList *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnForeachDivScalarV2(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
