/* aclnnop/aclnn_adaptive_avg_pool2d.h - 2-D adaptive average pooling to outputSize [Hout, Wout]:
 * output row o averages input rows [floor(o H / Hout), ceil((o + 1) H / Hout)) (PyTorch's
 * windows), columns likewise. self: [N, C, H, W] or [C, H, W], FLOAT, FLOAT16 or BFLOAT16, any
 * strides; outputSize 2 entries > 0; out: self's dtype and rank, [N, C, Hout, Wout].
 * docs/ops/pool.md. */
#ifndef OPGRAD_ACLNN_ADAPTIVE_AVG_POOL2D_H
#define OPGRAD_ACLNN_ADAPTIVE_AVG_POOL2D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAdaptiveAvgPool2dGetWorkspaceSize(const aclTensor *self,
                                                             const aclIntArray *outputSize,
                                                             aclTensor *out,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAdaptiveAvgPool2d(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
