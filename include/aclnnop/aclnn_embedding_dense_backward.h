/* aclnnop/aclnn_embedding_dense_backward.h - The gradient of aclnnEmbedding's weight:
 * out[r, :] = sum of grad[j, :] over the positions j with indices[j] == r (in position order,
 * accumulated in fp32, rounded once), divided by that count when scaleGradByFreq; row
 * paddingIdx is zero. paddingIdx is read as a signed value: a negative one ((uint64_t)-1, as
 * PyTorch passes "no padding") or one >= numWeights pads nothing.
 *
 * grad: FLOAT, FLOAT16, BFLOAT16, 1-8 dims, its leading dims holding as many rows as indices has
 * elements (grad [*indices.shape, D]); indices: INT32, INT64 (aclnn's other index dtypes are not
 * implemented), 0-8 dims; out: grad's dtype, [numWeights, D]; any strides. An index outside
 * [0, numWeights) contributes nothing (and is not counted). Deterministic: the positions are
 * bucketed by index (a counting sort) and each row is summed in position order by one thread. */
#ifndef OPGRAD_ACLNN_EMBEDDING_DENSE_BACKWARD_H
#define OPGRAD_ACLNN_EMBEDDING_DENSE_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(
    const aclTensor *grad, const aclTensor *indices, uint64_t numWeights, uint64_t paddingIdx,
    bool scaleGradByFreq, const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnEmbeddingDenseBackward(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor,
                                                  const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
