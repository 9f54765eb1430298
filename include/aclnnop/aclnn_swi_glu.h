/* aclnnop/aclnn_swi_glu.h - SwiGlu: x split in halves A, B along dim; out = silu(A) * B.
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16 (computed in fp32, rounded once); out has x's dtype and x's
 * shape with dim halved (x's extent along dim must be even); dim in [-rank, rank-1]; any strides.
 */
#ifndef OPGRAD_ACLNN_SWI_GLU_H
#define OPGRAD_ACLNN_SWI_GLU_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSwiGluGetWorkspaceSize(const aclTensor *x, int64_t dim,
                                                  const aclTensor *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSwiGlu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
