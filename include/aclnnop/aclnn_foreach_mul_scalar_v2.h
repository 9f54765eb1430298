/* aclnnop/aclnn_foreach_mul_scalar_v2.h - aclnnForeachMulScalarV2: out[i] = x[i] * scalar, the
 * scalar an aclScalar (float, double or integer; used as fp32). The lists' rules are
 * aclnnForeachMulScalar's. */
#ifndef OPGRAD_ACLNN_FOREACH_MUL_SCALAR_V2_H
#define OPGRAD_ACLNN_FOREACH_MUL_SCALAR_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnForeachMulScalarV2GetWorkspaceSize(const aclTensorList *x,
                                                              const aclScalar *scalar,
                                                              aclTensorList *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnForeachMulScalarV2(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
