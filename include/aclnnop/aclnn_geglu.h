/* aclnnop/aclnn_geglu.h - GeGlu: self split in halves A, B along dim; out = A * gelu(B),
 * outGelu = gelu(B) (saved for aclnnGeGluBackward). approximate: 0 the erf form, 1 the tanh
 * approximation. aclnnGeGluV3 adds activateLeft: true applies gelu to A instead (out = gelu(A) *
 * B).
 *
 * dtypes FLOAT, FLOAT16, BFLOAT16; out and outGelu have self's dtype and self's shape with dim
 * halved.
 */
#ifndef OPGRAD_ACLNN_GEGLU_H
#define OPGRAD_ACLNN_GEGLU_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGeGluGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                 int64_t approximate, aclTensor *out,
                                                 aclTensor *outGelu, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGeGlu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);
ACLNN_API aclnnStatus aclnnGeGluV3GetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                   int64_t approximate, bool activateLeft,
                                                   aclTensor *out, aclTensor *outGelu,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGeGluV3(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
