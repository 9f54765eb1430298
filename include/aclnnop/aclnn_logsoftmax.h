/* aclnnop/aclnn_logsoftmax.h - LogSoftmax along one dim:
 * out = self - max - log(sum(exp(self - max))).
 *
 * self and out: FLOAT, FLOAT16, BFLOAT16, the same shape, 0-8 dims, any strides; as in ops-nn
 * the computation runs in out's dtype (self is cast to it first; 16-bit values are computed in
 * fp32 and rounded once). dim in [-rank, rank - 1] (rank 1 for a 0-d tensor). Rows of any
 * magnitude: differences to the row's maximum are exact. Empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_LOGSOFTMAX_H
#define OPGRAD_ACLNN_LOGSOFTMAX_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                      aclTensor *out, uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
