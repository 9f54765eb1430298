/* aclnnop/aclnn_dropout_backward.h - out = gradOutput * mask * scale (aclnnDropout's backward with
 * scale = 1 / (1 - p)).
 *
 * gradOutput, out: FLOAT, FLOAT16, BFLOAT16 (computed in fp32, rounded to gradOutput's dtype,
 * then cast to out's), the same shape, 0-8 dims, any strides. mask: UINT8, 1-8 dims,
 * align(numel, 128) / 8 bytes in aclnnDropout's bit order (bit i at byte i / 8, least
 * significant first). scale: 0 (out = 0) or >= 1; scale = 1 copies gradOutput without reading
 * the mask (aclnn's rule). Empty tensors are a no-op. */
#ifndef OPGRAD_ACLNN_DROPOUT_BACKWARD_H
#define OPGRAD_ACLNN_DROPOUT_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnDropoutBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                           const aclTensor *mask, double scale,
                                                           aclTensor *out, uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnDropoutBackward(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
