/* aclnnop/aclnn_foreach_div_scalar.h - aclnnForeachDivScalar: out[i] = x[i] / scalar (a true fp32
 * division, rounded once). The rules are aclnnForeachMulScalar's. */
#ifndef OPGRAD_ACLNN_FOREACH_DIV_SCALAR_H
#define OPGRAD_ACLNN_FOREACH_DIV_SCALAR_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnForeachDivScalarGetWorkspaceSize(const aclTensorList *x,
                                                            const aclTensor *scalar,
                                                            aclTensorList *out,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnForeachDivScalar(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
