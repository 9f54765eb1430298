/* aclnnop/aclnn_cross_entropy_loss.h - cross-entropy loss of logits against class indices.
 *
 * input [N, C] (FLOAT, FLOAT16, BFLOAT16, any strides, C > 0); target [N] INT64 or INT32;
 * weightOptional [C] FLOAT or NULL; reductionOptional "none", "mean" or "sum" (NULL = "mean").
 * logProbOut [N, C] = log_softmax(input) (input's dtype); lossOut [N] for "none", [1] otherwise:
 *   l_n = (1 - eps) w[t_n] (-logProb[n, t_n]) + (eps / C) sum_c w[c] (-logProb[n, c]),
 *   0 where t_n == ignoreIndex or t_n is outside [0, C) (such a row is ignored, not an error);
 *   "mean" divides sum_n l_n by sum_n w[t_n] over the rows not ignored (PyTorch's weighted mean),
 *   "sum" is sum_n l_n. eps = labelSmoothing in [0, 1] (PyTorch's semantics).
 * Computed in fp32, sums in a fixed order (bitwise the same on any thread count), rounded once.
 * zlossOut and lseForZlossOut must be given but are not written: the zloss is not supported, as
 * upstream; lseSquareScaleForZloss != 0 or returnZloss = true is rejected (161002). */
#ifndef OPGRAD_ACLNN_CROSS_ENTROPY_LOSS_H
#define OPGRAD_ACLNN_CROSS_ENTROPY_LOSS_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCrossEntropyLossGetWorkspaceSize(
    const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor *lossOut,
    const aclTensor *logProbOut, const aclTensor *zlossOut, const aclTensor *lseForZlossOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnCrossEntropyLoss(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
