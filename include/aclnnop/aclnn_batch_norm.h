/* aclnnop/aclnn_batch_norm.h - BatchNorm (ops-nn norm/batch_norm_v3).
 *
 * input [N, C, *] (rank 2..8; the channel axis is dim 1, or the last dim for the NHWC / NDHWC
 * formats). Training: the batch statistics per channel over N and the spatial dims,
 *   saveMean = mean, saveInvstd = 1 / sqrt(var + eps) (var biased),
 *   output = (input - mean) * saveInvstd * weight + bias,
 *   runningMean = (1 - momentum) runningMean + momentum mean          (in place, when given)
 *   runningVar  = (1 - momentum) runningVar + momentum var * K/(K-1)  (unbiased; K = N * spatial)
 * Eval: output = (input - runningMean) / sqrt(runningVar + eps) * weight + bias; saveMean and
 * saveInvstd are not written. weight (NULL = 1), bias (NULL = 0), runningMean / runningVar
 * (required in eval) are [C]. Statistics and accumulations in fp32 (deterministic). */
#ifndef OPGRAD_ACLNN_BATCH_NORM_H
#define OPGRAD_ACLNN_BATCH_NORM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBatchNormGetWorkspaceSize(
    const aclTensor *input, const aclTensor *weight, const aclTensor *bias, aclTensor *runningMean,
    aclTensor *runningVar, bool training, double momentum, double eps, aclTensor *output,
    aclTensor *saveMean, aclTensor *saveInvstd, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBatchNorm(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
