/* aclnnop/aclnn_softmax.h - Softmax along one dim: out = exp(self - max) / sum(exp(self - max)).
 *
 * self and out: FLOAT, FLOAT16, BFLOAT16 (computed in fp32; the result is rounded to self's
 * dtype, then cast to out's), the same shape, 0-8 dims, any strides; dim in [-rank, rank - 1]
 * (rank 1 for a 0-d tensor). Rows of any magnitude: the difference to the row's maximum is taken
 * exactly, so nothing overflows and large inputs lose no accuracy. A row holding NaN or +inf, or
 * only -inf, is NaN. Empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_SOFTMAX_H
#define OPGRAD_ACLNN_SOFTMAX_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                   aclTensor *out, uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
