/* aclnnop/aclnn_embedding.h - Embedding lookup: out[j, :] = weight[indices[j], :].
 *
 * weight: [numEmbeddings, D], FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT64, INT32, INT16, INT8, UINT8
 * or BOOL (rows are copied bit for bit); indices: INT32 or INT64, 0-7 dims, any strides; out: the
 * dtype of weight, shape [*indices.shape, D], any strides. An index outside [0, numEmbeddings)
 * (aclnn's device kernel rejects negative ones and reads garbage for too large ones; indices are
 * data, so phase 1 cannot see them) gives a row of zeros: never a read outside weight. Empty
 * tensors are a no-op. Deterministic (a gather). */
#ifndef OPGRAD_ACLNN_EMBEDDING_H
#define OPGRAD_ACLNN_EMBEDDING_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnEmbeddingGetWorkspaceSize(const aclTensor *weight,
                                                     const aclTensor *indices, const aclTensor *out,
                                                     uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnEmbedding(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
