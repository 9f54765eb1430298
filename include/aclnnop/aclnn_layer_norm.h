/* aclnnop/aclnn_layer_norm.h - LayerNorm over the trailing dims given by normalizedShape:
 * out = (input - mean) * rstd * weight + bias, mean and rstd = 1 / sqrt(var + eps) per row (the
 * biased variance), computed in fp32. input [A..., R...] (1-8 dims, FLOAT, FLOAT16, BFLOAT16, any
 * strides), weightOptional / biasOptional [R...] (input's dtype or FLOAT; NULL: 1 / 0), out like
 * input; meanOutOptional / rstdOutOptional (NULL: not written) [A..., 1...] at input's rank. */
#ifndef OPGRAD_ACLNN_LAYER_NORM_H
#define OPGRAD_ACLNN_LAYER_NORM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLayerNormGetWorkspaceSize(
    const aclTensor *input, const aclIntArray *normalizedShape, const aclTensor *weightOptional,
    const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
    aclTensor *rstdOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnLayerNorm(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
