/* aclnnop/aclnn_elu_v2.h - EluV2: the Elu forward of ops-nn's experimental elu_v2:
 * out = scale * x (x > 0), scale * alpha * (exp(inputScale * x) - 1) (x <= 0).
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16; out has self's dtype and shape; alpha, scale, inputScale are
 * scalars castable to float (aclnnElu's rules otherwise).
 */
#ifndef OPGRAD_ACLNN_ELU_V2_H
#define OPGRAD_ACLNN_ELU_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnEluV2GetWorkspaceSize(const aclTensor *self, const aclScalar *alpha,
                                                 const aclScalar *scale,
                                                 const aclScalar *inputScale, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnEluV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
